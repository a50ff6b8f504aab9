package dev.lakestream.common.event;

import com.fasterxml.jackson.databind.JsonNode;
import dev.lakestream.common.iceberg.ContentFiles;
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
 */
public record ConvertResult(
    String table,
    String cycleId,
    String dataFilePath,
    JsonNode newDv,
    List<JsonNode> rewrittenDvs,
    long keysMatched,
    long rowsScanned,
    long bytesRead) {

  public static final String TYPE = "convert-result";
  public static final int VERSION = 1;

  public ConvertResult {
    rewrittenDvs = List.copyOf(rewrittenDvs);
  }

  public DeleteFile newDv(Map<Integer, PartitionSpec> specs) {
    return newDv == null ? null : (DeleteFile) ContentFiles.fromJson(newDv, specs);
  }

  public List<DeleteFile> rewrittenDvs(Map<Integer, PartitionSpec> specs) {
    return rewrittenDvs.stream().map(n -> (DeleteFile) ContentFiles.fromJson(n, specs)).toList();
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static ConvertResult fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, ConvertResult.class);
  }
}
