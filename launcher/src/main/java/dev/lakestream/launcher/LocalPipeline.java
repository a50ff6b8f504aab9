package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The settings of a pipeline whose parts all run on one machine (the demo, the end-to-end tests):
 * one broker, short intervals for low latency, Debezium's {@code dbserver1.inventory.*} topics.
 */
final class LocalPipeline {

  private LocalPipeline() {}

  static PipelineConfig settings(String bootstrapServers, Map<String, String> catalogProperties) {
    Map<String, String> s = new HashMap<>();
    s.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    s.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
    s.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, "1");
    s.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "2");
    // A replaced stream thread's tasks move on when its old session expires: keep it short.
    s.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
    s.put("metadata.max.age.ms", "1000");
    s.put(IngestConfig.TOPICS_REGEX, "dbserver1\\.inventory\\..*");
    s.put(IngestConfig.FLUSH_INTERVAL_MS, "500");
    s.put(IngestConfig.COMMIT_INTERVAL_MS, "100");
    s.put(SyncConfig.BACKSTOP_MS, "2000");
    // Compaction every 10 s rather than every minute: converting deletes against a few files
    // instead
    // of hundreds keeps main's p99 near 2.5 s at 1,000 changes/s here (benchmark 1), for more
    // rewriting.
    s.put(MaintenanceConfig.CHECK_INTERVAL_MS, "10000");
    s.put(PipelineConfig.METRICS_PORT, "0");
    catalogProperties.forEach((k, v) -> s.put(PipelineConfig.CATALOG_PREFIX + k, v));
    return new PipelineConfig(s);
  }
}
