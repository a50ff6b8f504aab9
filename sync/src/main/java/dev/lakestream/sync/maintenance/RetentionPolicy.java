package dev.lakestream.sync.maintenance;

import dev.lakestream.common.config.PipelineConfig;

/**
 * How long a branch keeps its snapshots: those younger than {@code maxSnapshotAgeMs} and the newest
 * {@code minSnapshotsToKeep} are kept (Iceberg's {@code history.expire.*} semantics, per branch).
 */
public record RetentionPolicy(long maxSnapshotAgeMs, int minSnapshotsToKeep) {

  public RetentionPolicy {
    if (maxSnapshotAgeMs < 0 || minSnapshotsToKeep < 1) {
      throw new IllegalArgumentException(
          "retention: the age must not be negative and at least 1 snapshot is kept");
    }
  }

  /** {@code sync.maintenance.expire.<branch>.max-snapshot-age-ms} and {@code .min-snapshots-to-keep}. */
  public static RetentionPolicy from(PipelineConfig config, String branch) {
    String prefix = "sync.maintenance.expire." + branch + ".";
    return new RetentionPolicy(
        config.getLong(prefix + "max-snapshot-age-ms"),
        config.getInt(prefix + "min-snapshots-to-keep"));
  }
}
