package dev.lakestream.common.iceberg;

/**
 * The snapshot-summary properties this pipeline writes. They are the durable record of what each
 * branch covers: sync finds its watermark here, ingest its committed offsets, Verify both.
 */
public final class SummaryKeys {

  /** Realtime: the last committed source offset of every source partition, JSON {"topic:partition": offset}. */
  public static final String SOURCE_OFFSETS = "lakestream.source-offsets";

  /**
   * Realtime and change logs: the ID Kafka gave each source topic whose offsets {@link
   * #SOURCE_OFFSETS} holds, JSON {"topic": "id"}. A topic deleted and created again gets another ID,
   * and its offsets start again at 0: the offsets recorded for the old one no longer apply.
   */
  public static final String SOURCE_TOPIC_IDS = "lakestream.source-topic-ids";

  /** Both branches: the newest source commit time (ms) the snapshot covers. */
  public static final String MAX_SOURCE_TS_MS = "lakestream.max-source-ts-ms";

  /**
   * Ingest commits: the source position (hex, {@code SourcePositions}) of the table's latest
   * TRUNCATE, carried by every later commit; rows changed before it are gone.
   */
  public static final String TRUNCATED_AT = "lakestream.truncated-at";

  /** The source commit time of the table's latest TRUNCATE ({@link #TRUNCATED_AT}). */
  public static final String TRUNCATED_AT_TS_MS = "lakestream.truncated-at-ts-ms";

  /** The commit that applied a TRUNCATE: how many data files it removed whole, rows it deleted from others. */
  public static final String TRUNCATE_FILES_REMOVED = "lakestream.truncate-files-removed";

  public static final String TRUNCATE_ROWS_DELETED = "lakestream.truncate-rows-deleted";

  /**
   * Realtime: a batch committed without its files, refused ({@code <prefix><topic>-<partition>@<last
   * offset>}): the time it was written, a space, and the reason it was dead-lettered with. A replay
   * of the batch that finds it committed dead-letters it again, the first dead letter having been
   * lost if the committer's Kafka transaction did not commit.
   */
  public static final String REFUSED_PREFIX = "lakestream.refused.";

  /**
   * A change log: the UUID of the table whose rows the append logged (its source offsets are that
   * table's; a table dropped and made again under the name holds none of them).
   */
  public static final String LOGGED_TABLE_UUID = "lakestream.logged-table-uuid";

  /** Realtime: flushed batches committed in the snapshot. */
  public static final String BATCHES = "lakestream.batches";

  /** Main: the realtime snapshot this main snapshot mirrors (sync's watermark). */
  public static final String REALTIME_SNAPSHOT_ID = "lakestream.realtime-snapshot-id";

  /** Main: the sync cycle that made the snapshot. */
  public static final String CYCLE_ID = "lakestream.cycle-id";

  public static final String DATA_FILES_ADDED = "lakestream.data-files-added";
  public static final String DATA_FILES_REMOVED = "lakestream.data-files-removed";
  public static final String DVS_ADDED = "lakestream.dvs-added";
  public static final String DVS_REMOVED = "lakestream.dvs-removed";

  /** Main: the Puffin files the cycle's new deletion vectors are in (a converter packs its group's). */
  public static final String DV_FILES_ADDED = "lakestream.dv-files-added";

  public static final String KEYS_CONVERTED = "lakestream.keys-converted";
  public static final String FILES_SCANNED = "lakestream.files-scanned";
  public static final String BYTES_READ = "lakestream.bytes-read";
  public static final String REALTIME_SNAPSHOTS = "lakestream.realtime-snapshots";

  /** Main: equality-delete files converted again against the output of a realtime compaction. */
  public static final String RECONVERTED_DELETES = "lakestream.reconverted-deletes";

  /** Main: "true" when the cycle was planned from the live file sets (realtime snapshots had expired). */
  public static final String LIVE_SET_DIFF = "lakestream.live-set-diff";

  /** Realtime: the maintenance operation that made the snapshot ("compaction"). */
  public static final String MAINTENANCE = "lakestream.maintenance";

  /** The id of a realtime compaction, so it finds its own snapshot among ingest's. */
  public static final String COMPACTION_ID = "lakestream.compaction-id";

  private SummaryKeys() {}
}
