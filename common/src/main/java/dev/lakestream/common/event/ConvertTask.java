package dev.lakestream.common.event;

import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;

/**
 * One data file to convert in a sync cycle: the equality deletes that may apply to it (each newer
 * than the file on realtime, not ruled out by key bounds) and the file's current deletion vector on
 * main, which the new one must merge. Keyed by the data file's path, so the tasks of a cycle spread
 * over the converters.
 *
 * @param table the table, {@code namespace.name}
 * @param cycleId the cycle the task belongs to; results of another cycle are ignored
 * @param dataFile the data file, Iceberg content-file JSON
 * @param currentDv its deletion vector on main, or null
 * @param deleteFiles the equality-delete files to apply
 * @param positions the rows to delete, already resolved by the key index; null: the converter
 *     finds them by scanning the file's key column
 */
public record ConvertTask(
    String table,
    String cycleId,
    DataFileJson dataFile,
    DeleteFileJson currentDv,
    List<DeleteFileJson> deleteFiles,
    List<Long> positions) {

  public static final String TYPE = "convert-task";
  public static final int VERSION = 1;

  public ConvertTask {
    EventJson.required("table", table);
    EventJson.required("cycleId", cycleId);
    EventJson.required("dataFile", dataFile);
    EventJson.required("deleteFiles", deleteFiles);
    deleteFiles = List.copyOf(deleteFiles);
    positions = positions == null ? null : List.copyOf(positions);
  }

  /** A task whose positions the converter finds by scanning. */
  public ConvertTask(
      String table,
      String cycleId,
      DataFileJson dataFile,
      DeleteFileJson currentDv,
      List<DeleteFileJson> deleteFiles) {
    this(table, cycleId, dataFile, currentDv, deleteFiles, null);
  }

  /** This task with its positions resolved. */
  public ConvertTask withPositions(List<Long> resolved) {
    return new ConvertTask(table, cycleId, dataFile, currentDv, deleteFiles, resolved);
  }

  public List<String> deleteFilePaths() {
    return deleteFiles.stream().map(DeleteFileJson::path).toList();
  }

  public String dataFilePath() {
    return dataFile.path();
  }

  public DataFile dataFile(Map<Integer, PartitionSpec> specs) {
    return dataFile.decode(specs);
  }

  public DeleteFile currentDv(Map<Integer, PartitionSpec> specs) {
    return currentDv == null ? null : currentDv.decode(specs);
  }

  public List<DeleteFile> deleteFiles(Map<Integer, PartitionSpec> specs) {
    return deleteFiles.stream().map(f -> f.decode(specs)).toList();
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static ConvertTask fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, ConvertTask.class);
  }
}
