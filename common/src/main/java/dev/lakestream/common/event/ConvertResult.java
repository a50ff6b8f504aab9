package dev.lakestream.common.event;

import dev.lakestream.common.iceberg.DeleteFileJson;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;

/**
 * What a converter did with one {@link ConvertTask}: the new deletion vector (null when no row of
 * the file matched) and the vectors it replaces. Keyed by table, back to the cycle coordinator.
 *
 * @param table the table
 * @param cycleId the task's cycle
 * @param dataFilePath the converted data file
 * @param newDv the deletion vector to add, Iceberg content-file JSON, or null
 * @param rewrittenDvs the deletion vectors the new one merges and replaces
 * @param keysMatched rows newly deleted
 * @param rowsScanned rows read from the data file
 * @param bytesRead bytes of the data file read
 * @param error why the task failed (its cycle is abandoned and the table retried later), or null
 */
public record ConvertResult(
    String table,
    String cycleId,
    String dataFilePath,
    DeleteFileJson newDv,
    List<DeleteFileJson> rewrittenDvs,
    long keysMatched,
    long rowsScanned,
    long bytesRead,
    String error)
    implements CycleInput {

  public static final String TYPE = "convert-result";
  /** 2: a failed task ({@code error}); a reader of 1 would take it for a file with nothing to delete. */
  public static final int VERSION = 2;

  public ConvertResult {
    EventJson.required("table", table);
    EventJson.required("cycleId", cycleId);
    EventJson.required("dataFilePath", dataFilePath);
    rewrittenDvs = rewrittenDvs == null ? List.of() : List.copyOf(rewrittenDvs);
  }

  public ConvertResult(
      String table,
      String cycleId,
      String dataFilePath,
      DeleteFileJson newDv,
      List<DeleteFileJson> rewrittenDvs,
      long keysMatched,
      long rowsScanned,
      long bytesRead) {
    this(
        table,
        cycleId,
        dataFilePath,
        newDv,
        rewrittenDvs,
        keysMatched,
        rowsScanned,
        bytesRead,
        null);
  }

  /** The task for {@code dataFilePath} failed with {@code error}. */
  public static ConvertResult failed(
      String table, String cycleId, String dataFilePath, String error) {
    return new ConvertResult(table, cycleId, dataFilePath, null, List.of(), 0, 0, 0, error);
  }

  public boolean failed() {
    return error != null;
  }

  public DeleteFile newDv(Map<Integer, PartitionSpec> specs) {
    return newDv == null ? null : newDv.decode(specs);
  }

  public List<DeleteFile> rewrittenDvs(Map<Integer, PartitionSpec> specs) {
    return rewrittenDvs.stream().map(f -> f.decode(specs)).toList();
  }

  /** Version 1 unless the task failed, so readers of 1 read every successful result. */
  public byte[] toJson() {
    return EventJson.write(TYPE, failed() ? VERSION : 1, this);
  }

  public static ConvertResult fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, ConvertResult.class);
  }
}
