package dev.lakestream.sync.maintenance;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;

/**
 * The maintenance the sync app runs on the tables it syncs, read from {@code sync.maintenance.*}.
 *
 * @param enabled run maintenance at all ({@code sync.maintenance.enabled}, default true)
 * @param checkIntervalMs how often each table's policies are checked ({@code sync.maintenance.check.interval.ms})
 * @param compaction when and how realtime is compacted
 * @param realtimeRetention snapshot retention on realtime
 * @param mainRetention snapshot retention on main
 * @param orphanIntervalMs how often orphan files are looked for ({@code sync.maintenance.orphans.interval.ms})
 * @param orphanMinAgeMs only files older than this are orphans ({@code sync.maintenance.orphans.min-age-ms})
 */
public record MaintenanceConfig(
    boolean enabled,
    long checkIntervalMs,
    CompactionPolicy compaction,
    RetentionPolicy realtimeRetention,
    RetentionPolicy mainRetention,
    long orphanIntervalMs,
    long orphanMinAgeMs) {

  public static final String ENABLED = "sync.maintenance.enabled";
  public static final String CHECK_INTERVAL_MS = "sync.maintenance.check.interval.ms";
  public static final String ORPHAN_INTERVAL_MS = "sync.maintenance.orphans.interval.ms";
  public static final String ORPHAN_MIN_AGE_MS = "sync.maintenance.orphans.min-age-ms";

  public static final long DEFAULT_ORPHAN_MIN_AGE_MS = 3L * 24 * 3_600_000;

  public MaintenanceConfig {
    if (checkIntervalMs <= 0 || orphanIntervalMs <= 0 || orphanMinAgeMs < 0) {
      throw new IllegalArgumentException("maintenance intervals must be positive and the orphan age not negative");
    }
  }

  public static MaintenanceConfig from(PipelineConfig config) {
    return new MaintenanceConfig(
        Boolean.parseBoolean(config.get(ENABLED, "true")),
        config.getLong(CHECK_INTERVAL_MS, 60_000),
        CompactionPolicy.from(config),
        RetentionPolicy.from(config, Branches.REALTIME, 600_000, 10),
        RetentionPolicy.from(config, Branches.MAIN, 3_600_000, 100),
        config.getLong(ORPHAN_INTERVAL_MS, 3_600_000),
        config.getLong(ORPHAN_MIN_AGE_MS, DEFAULT_ORPHAN_MIN_AGE_MS));
  }
}
