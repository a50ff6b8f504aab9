package dev.lakestream.common.event;

/**
 * A snapshot committed to a table's {@code realtime} branch. Sent to the realtime-commits topic,
 * keyed by table, where it triggers a sync cycle. A trigger, not the truth: sync reads the branch.
 *
 * @param table the table, {@code namespace.name}
 * @param snapshotId the new realtime snapshot
 * @param sequenceNumber its sequence number
 * @param maxSourceTsMs the newest source commit time the snapshot covers
 * @param batches flushed batches committed in the snapshot
 * @param dataRows rows added
 * @param deleteKeys equality-delete keys added
 * @param committedAtMs when the commit succeeded
 */
public record RealtimeCommitted(
    String table,
    long snapshotId,
    long sequenceNumber,
    long maxSourceTsMs,
    int batches,
    long dataRows,
    long deleteKeys,
    long committedAtMs)
    implements CycleInput {

  public static final String TYPE = "realtime-committed";
  public static final int VERSION = 1;

  public RealtimeCommitted {
    EventJson.required("table", table);
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static RealtimeCommitted fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, RealtimeCommitted.class);
  }
}
