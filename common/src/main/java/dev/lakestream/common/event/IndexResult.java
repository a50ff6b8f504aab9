package dev.lakestream.common.event;

import java.util.List;
import java.util.Map;

/**
 * What one index partition resolved for a cycle: positions to delete per data file, and the task
 * files it could not answer for because it has not indexed them (yet): those are scanned.
 *
 * @param table the table, {@code namespace.name}
 * @param cycleId the cycle
 * @param partition the index partition
 * @param positions per data file path, the row positions the cycle's deletes remove
 * @param unresolvedFiles task files this partition has not indexed
 * @param deleteKeys delete keys of this partition looked up
 * @param keysIndexed keys added to the index (from the cycle's new data files)
 * @param filesRead data and delete files whose key columns were read
 * @param bytesRead bytes of key columns read (new data files and delete files)
 */
public record IndexResult(
    String table,
    String cycleId,
    int partition,
    Map<String, List<Long>> positions,
    List<String> unresolvedFiles,
    long deleteKeys,
    long keysIndexed,
    long filesRead,
    long bytesRead)
    implements CycleInput {

  public static final String TYPE = "index-result";
  public static final int VERSION = 1;

  public IndexResult {
    EventJson.required("table", table);
    EventJson.required("cycleId", cycleId);
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static IndexResult fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, IndexResult.class);
  }
}
