package dev.lakestream.sync.maintenance;

import dev.lakestream.common.config.PipelineConfig;

/**
 * When the realtime branch of a table is compacted, and into what. Tables are unpartitioned, so
 * the policy applies to the table as one partition.
 *
 * @param targetFileBytes bins of input files are filled up to this size; each bin becomes one file
 * @param smallFileBytes a data file below this size is small
 * @param minSmallFiles compact when at least this many small files are live
 * @param minSmallBytes ... or when the small files hold at least this many bytes together
 * @param maxSmallFileAgeMs ... or when two or more are small and the oldest is older than this
 * @param maxDeleteFiles rewrite every data file an equality delete applies to when at least this
 *     many equality-delete files are live (they slow every read of realtime; the rewrite drops them)
 */
public record CompactionPolicy(
    long targetFileBytes,
    long smallFileBytes,
    int minSmallFiles,
    long minSmallBytes,
    long maxSmallFileAgeMs,
    int maxDeleteFiles) {

  public static final String PREFIX = "sync.maintenance.compaction.";
  public static final String TARGET_FILE_BYTES = PREFIX + "target-file-size-bytes";
  public static final String SMALL_FILE_BYTES = PREFIX + "small-file-size-bytes";
  public static final String MIN_SMALL_FILES = PREFIX + "min-small-files";
  public static final String MIN_SMALL_BYTES = PREFIX + "min-small-bytes";
  public static final String MAX_SMALL_FILE_AGE_MS = PREFIX + "max-small-file-age-ms";
  public static final String MAX_DELETE_FILES = PREFIX + "max-delete-files";

  static final long DEFAULT_TARGET = 128L * 1024 * 1024;

  public CompactionPolicy {
    if (targetFileBytes <= 0
        || smallFileBytes <= 0
        || minSmallFiles < 2
        || minSmallBytes <= 0
        || maxSmallFileAgeMs <= 0
        || maxDeleteFiles < 1) {
      throw new IllegalArgumentException("compaction policy: sizes and ages must be positive, "
          + MIN_SMALL_FILES + " at least 2, " + MAX_DELETE_FILES + " at least 1");
    }
  }

  /** The defaults: 128 MiB files, small below 96 MiB, 10 small files or 128 MiB of them or 1 h, 100 delete files. */
  public static CompactionPolicy defaults() {
    return new CompactionPolicy(
        DEFAULT_TARGET, DEFAULT_TARGET * 3 / 4, 10, DEFAULT_TARGET, 3_600_000, 100);
  }

  public static CompactionPolicy from(PipelineConfig config) {
    long target = config.getLong(TARGET_FILE_BYTES);
    return new CompactionPolicy(
        target,
        config.getLong(SMALL_FILE_BYTES, target * 3 / 4),
        config.getInt(MIN_SMALL_FILES),
        config.getLong(MIN_SMALL_BYTES, target),
        config.getLong(MAX_SMALL_FILE_AGE_MS),
        config.getInt(MAX_DELETE_FILES));
  }
}
