package dev.lakestream.common.event;

import com.fasterxml.jackson.databind.JsonNode;
import dev.lakestream.common.iceberg.ContentFiles;
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
 */
public record ConvertTask(String table, String cycleId, JsonNode dataFile, JsonNode currentDv, List<JsonNode> deleteFiles) {

  public static final String TYPE = "convert-task";
  public static final int VERSION = 1;

  public ConvertTask {
    deleteFiles = List.copyOf(deleteFiles);
  }

  public String dataFilePath() {
    return dataFile.get("file-path").asText();
  }

  public DataFile dataFile(Map<Integer, PartitionSpec> specs) {
    return (DataFile) ContentFiles.fromJson(dataFile, specs);
  }

  public DeleteFile currentDv(Map<Integer, PartitionSpec> specs) {
    return currentDv == null ? null : (DeleteFile) ContentFiles.fromJson(currentDv, specs);
  }

  public List<DeleteFile> deleteFiles(Map<Integer, PartitionSpec> specs) {
    return deleteFiles.stream().map(n -> (DeleteFile) ContentFiles.fromJson(n, specs)).toList();
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static ConvertTask fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, ConvertTask.class);
  }
}
