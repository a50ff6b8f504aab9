package dev.lakestream.common.event;

/**
 * A sync cycle committed to a table's {@code main} branch. Sent to {@code <prefix>.main-commits},
 * keyed by table, for incremental readers and monitoring.
 *
 * @param table the table
 * @param mainSnapshotId the new main snapshot
 * @param realtimeSnapshotId the realtime snapshot it mirrors (the watermark)
 * @param maxSourceTsMs the newest source commit time now on main
 * @param dataFilesAdded data files added by reference
 * @param dataFilesRemoved data files removed (compactions mirrored)
 * @param dvsAdded deletion vectors added
 * @param dvsRemoved deletion vectors removed
 * @param keysConverted rows deleted by the new vectors
 * @param committedAtMs when the commit succeeded
 */
public record MainCommitted(
    String table,
    long mainSnapshotId,
    long realtimeSnapshotId,
    long maxSourceTsMs,
    int dataFilesAdded,
    int dataFilesRemoved,
    int dvsAdded,
    int dvsRemoved,
    long keysConverted,
    long committedAtMs) {

  public static final String TYPE = "main-committed";
  public static final int VERSION = 1;

  public MainCommitted {
    EventJson.required("table", table);
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static MainCommitted fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, MainCommitted.class);
  }
}
