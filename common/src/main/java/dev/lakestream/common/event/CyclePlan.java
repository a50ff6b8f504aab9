package dev.lakestream.common.event;

import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import java.util.List;

/**
 * A sync cycle of one table, planned from metadata: which realtime snapshot it mirrors, the main
 * snapshot it was planned against, the data files to add by reference (with their realtime data
 * sequence numbers), the data files and deletion vectors to remove, and the paths of the data files
 * sent to converters. Kept by the cycle coordinator until the cycle commits.
 *
 * @param table the table
 * @param cycleId unique per cycle
 * @param baseMainSnapshotId main's head when planned; the commit requires it unchanged
 * @param targetRealtimeSnapshotId the realtime snapshot the cycle mirrors (the new watermark)
 * @param maxSourceTsMs the newest source commit time up to the target
 * @param addDataFiles data files to add, Iceberg content-file JSON with their data sequence numbers
 * @param removeDataFiles data files to remove (compacted away on realtime), content-file JSON
 * @param removeDvs deletion vectors of removed data files, content-file JSON
 * @param taskFiles data file paths of the convert tasks
 * @param realtimeSnapshots how many realtime snapshots the cycle covers (those not expired)
 * @param reconvertedDeletes equality-delete files converted again against compacted files
 * @param liveSetDiff planned from the live file sets because realtime snapshots had expired
 * @param plannedAtMs when the cycle was planned
 */
public record CyclePlan(
    String table,
    String cycleId,
    long baseMainSnapshotId,
    long targetRealtimeSnapshotId,
    long maxSourceTsMs,
    List<SequencedFile> addDataFiles,
    List<DataFileJson> removeDataFiles,
    List<DeleteFileJson> removeDvs,
    List<String> taskFiles,
    int realtimeSnapshots,
    int reconvertedDeletes,
    boolean liveSetDiff,
    long plannedAtMs) {

  /** A data file with its data sequence number on realtime. */
  public record SequencedFile(DataFileJson file, long dataSequenceNumber) {}

  /** A delete file with its data sequence number on realtime. */
  public record SequencedDelete(DeleteFileJson file, long dataSequenceNumber) {}

  public static final String TYPE = "cycle-plan";
  public static final int VERSION = 1;

  public CyclePlan {
    EventJson.required("table", table);
    EventJson.required("cycleId", cycleId);
    EventJson.required("addDataFiles", addDataFiles);
    EventJson.required("removeDataFiles", removeDataFiles);
    EventJson.required("removeDvs", removeDvs);
    EventJson.required("taskFiles", taskFiles);
    addDataFiles = List.copyOf(addDataFiles);
    removeDataFiles = List.copyOf(removeDataFiles);
    removeDvs = List.copyOf(removeDvs);
    taskFiles = List.copyOf(taskFiles);
  }

  /** The plan with the convert tasks it waits for replaced (the key index resolved the others away). */
  public CyclePlan withTaskFiles(List<String> files) {
    return new CyclePlan(
        table,
        cycleId,
        baseMainSnapshotId,
        targetRealtimeSnapshotId,
        maxSourceTsMs,
        addDataFiles,
        removeDataFiles,
        removeDvs,
        files,
        realtimeSnapshots,
        reconvertedDeletes,
        liveSetDiff,
        plannedAtMs);
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static CyclePlan fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, CyclePlan.class);
  }
}
