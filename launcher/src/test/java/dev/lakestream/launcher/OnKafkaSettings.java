package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;

/** Settings of ingest and sync apps on the tests' in-JVM broker: short intervals, one replica. */
final class OnKafkaSettings {

  private OnKafkaSettings() {}

  /** The settings both apps share; {@code prefix} keeps each test's event topics apart. */
  static Map<String, String> shared(
      EmbeddedKafka kafka, TemporaryWarehouse warehouse, String prefix, String topic) {
    Map<String, String> settings = withoutCatalog(kafka, prefix, topic);
    warehouse
        .catalogProperties()
        .forEach((k, v) -> settings.put(PipelineConfig.CATALOG_PREFIX + k, v));
    return settings;
  }

  /** The settings both apps share, but for the catalog's. */
  static Map<String, String> withoutCatalog(EmbeddedKafka kafka, String prefix, String topic) {
    Map<String, String> settings = new HashMap<>();
    settings.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    settings.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
    settings.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, "1");
    settings.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
    settings.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
    settings.put(IngestConfig.TOPICS, topic);
    settings.put(IngestConfig.FLUSH_INTERVAL_MS, "300");
    settings.put(IngestConfig.COMMIT_INTERVAL_MS, "100");
    settings.put(SyncConfig.BACKSTOP_MS, "2000");
    settings.put(PipelineConfig.METRICS_PORT, "0");
    settings.put(PipelineConfig.TOPIC_PREFIX, "lakestream-" + prefix);
    return settings;
  }

  /** One app's configuration: its application id and a state directory of its own. */
  static PipelineConfig config(Map<String, String> shared, String applicationId) throws Exception {
    return new PipelineConfig(shared)
        .with(StreamsConfig.APPLICATION_ID_CONFIG, applicationId)
        .with(
            StreamsConfig.STATE_DIR_CONFIG,
            Files.createTempDirectory("streams-").toString());
  }
}
