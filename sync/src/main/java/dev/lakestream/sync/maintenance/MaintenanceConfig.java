package dev.lakestream.sync.maintenance;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;

/**
 * The maintenance the sync app runs on the tables it syncs, read from {@code sync.maintenance.*}.
 *
 * @param enabled run maintenance at all ({@code sync.maintenance.enabled}, default true)
 * @param checkIntervalMs how often each table's policies are checked ({@code sync.maintenance.check.interval.ms})
 * @param threads how many tables' runs may go at once ({@code sync.maintenance.threads}, default 1);
 *     one table never has two
 * @param compaction when and how realtime is compacted
 * @param realtimeRetention snapshot retention on realtime
 * @param mainRetention snapshot retention on main
 * @param orphansEnabled whether the sync app removes orphan files on its own ({@code
 *     sync.maintenance.orphans.enabled}, default false: removal lists and deletes files, which a
 *     user turns on knowingly; the {@code remove-orphan-files} command runs it by hand)
 * @param orphanIntervalMs how often orphan files are looked for ({@code sync.maintenance.orphans.interval.ms})
 * @param orphanMinAgeMs only files older than this are orphans ({@code sync.maintenance.orphans.min-age-ms});
 *     longer than the longest stall ({@code lakestream.max.stall.ms}), which a batch's files may wait for
 *     their commit
 * @param maxStallMs the longest stall the pipeline tolerates ({@code lakestream.max.stall.ms}); spill
 *     files older than this are deleted
 */
public record MaintenanceConfig(
    boolean enabled,
    long checkIntervalMs,
    int threads,
    CompactionPolicy compaction,
    RetentionPolicy realtimeRetention,
    RetentionPolicy mainRetention,
    boolean orphansEnabled,
    long orphanIntervalMs,
    long orphanMinAgeMs,
    long maxStallMs) {

  public static final String ENABLED = "sync.maintenance.enabled";
  public static final String CHECK_INTERVAL_MS = "sync.maintenance.check.interval.ms";
  public static final String THREADS = "sync.maintenance.threads";
  public static final String ORPHANS_ENABLED = "sync.maintenance.orphans.enabled";
  public static final String ORPHAN_INTERVAL_MS = "sync.maintenance.orphans.interval.ms";
  public static final String ORPHAN_MIN_AGE_MS = "sync.maintenance.orphans.min-age-ms";

  /** A day longer than the default longest stall: a file that waits that long for its commit is never an orphan. */
  public static final long DEFAULT_ORPHAN_MIN_AGE_MS =
      PipelineConfig.DEFAULT_MAX_STALL_MS + 24 * 3_600_000L;

  public MaintenanceConfig {
    if (checkIntervalMs <= 0 || orphanIntervalMs <= 0 || orphanMinAgeMs < 0) {
      throw new IllegalArgumentException(
          "maintenance intervals must be positive and the orphan age not negative");
    }
    if (threads < 1) {
      throw new IllegalArgumentException(THREADS + " must be at least 1, not " + threads);
    }
    if (orphanMinAgeMs <= maxStallMs) {
      throw new IllegalArgumentException(
          ORPHAN_MIN_AGE_MS + " (" + orphanMinAgeMs + ") must be longer than "
              + PipelineConfig.MAX_STALL_MS + " (" + maxStallMs
              + "): files of a batch that waits for its commit that long"
              + " are referenced by no snapshot yet, and removing them would lose the batch");
    }
  }

  public static MaintenanceConfig from(PipelineConfig config) {
    return new MaintenanceConfig(
        config.getBoolean(ENABLED),
        config.getLong(CHECK_INTERVAL_MS),
        config.getInt(THREADS),
        CompactionPolicy.from(config),
        RetentionPolicy.from(config, Branches.REALTIME),
        RetentionPolicy.from(config, Branches.MAIN),
        config.getBoolean(ORPHANS_ENABLED),
        config.getLong(ORPHAN_INTERVAL_MS),
        config.getLong(
            ORPHAN_MIN_AGE_MS,
            Math.max(DEFAULT_ORPHAN_MIN_AGE_MS, config.maxStallMs() + 24 * 3_600_000L)),
        config.maxStallMs());
  }
}
