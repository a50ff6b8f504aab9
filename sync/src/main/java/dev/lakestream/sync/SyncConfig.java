package dev.lakestream.sync;

import dev.lakestream.common.config.PipelineConfig;
import org.apache.kafka.streams.StreamsConfig;

/** The sync app's settings, read from a {@link PipelineConfig}. */
public final class SyncConfig {

  public static final String BACKSTOP_MS = "sync.cycle.backstop.ms";
  public static final String CONVERT_PARTITIONS = "sync.convert.partitions";

  private final PipelineConfig config;

  public SyncConfig(PipelineConfig config) {
    this.config = config;
    if (backstopMs() <= 0) {
      throw new IllegalArgumentException(BACKSTOP_MS + " must be positive");
    }
  }

  public PipelineConfig pipeline() {
    return config;
  }

  public String applicationId() {
    return config.require(StreamsConfig.APPLICATION_ID_CONFIG);
  }

  /** Realtime commits announced by ingest: the triggers of sync cycles. */
  public String realtimeCommitsTopic() {
    return config.topicPrefix() + ".realtime-commits";
  }

  /** Main commits announced by sync. */
  public String mainCommitsTopic() {
    return config.topicPrefix() + ".main-commits";
  }

  /** Convert tasks, keyed by data file (internal). */
  public String convertTasksTopic() {
    return applicationId() + "-convert-tasks";
  }

  /** Convert results, keyed by table (internal; as many partitions as the realtime-commits topic). */
  public String convertResultsTopic() {
    return applicationId() + "-convert-results";
  }

  /** How often every known table is checked for realtime commits that no event announced. */
  public long backstopMs() {
    return config.getLong(BACKSTOP_MS, 10_000);
  }

  /** Partitions of the convert-tasks topic: how many converters can work on one cycle at once. */
  public int convertPartitions() {
    return config.getInt(CONVERT_PARTITIONS, 12);
  }
}
