package dev.lakestream.ingest;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.ManifestCache;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.Topics;
import dev.lakestream.common.metrics.MetricsEndpoint;
import dev.lakestream.ingest.commit.KafkaTopicIds;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the ingest topology: loads the configuration, creates the topics the app writes, builds
 * the catalog and the topology, and runs it as a {@link StreamsApp} until closed.
 */
public final class IngestApp {

  private static final Logger LOG = LoggerFactory.getLogger(IngestApp.class);

  /** Pattern subscriptions see a new topic at the next metadata refresh: ten seconds, not Kafka's five minutes. */
  static final String PATTERN_METADATA_MAX_AGE_MS = "10000";

  /**
   * The change buffer's changelog carries every change (1 to 2 kB each): Kafka's 16 kB batches would
   * wake the producer's sender every few records.
   */
  static final String PRODUCER_BATCH_SIZE = "262144";

  private IngestApp() {}

  /** The app for {@code pipeline}, its topics created, not started. */
  public static StreamsApp create(PipelineConfig pipeline) throws Exception {
    pipeline.check();
    IngestConfig config = new IngestConfig(pipeline);
    Properties props = streamsProperties(pipeline);
    LOG.info("Starting ingest with configuration:{}", pipeline);
    Topics.ensure(
        props,
        List.of(
            // Flushed batches wait here for their commit: kept as long as the longest stall.
            Topics.Spec.retaining(
                config.filesWrittenTopic(),
                config.internalTopicPartitions(),
                pipeline.maxStallMs()),
            new Topics.Spec(config.realtimeCommitsTopic(), config.internalTopicPartitions()),
            new Topics.Spec(config.deadLetterTopic(), 1)));
    Topics.requireRetention(
        props, config.filesWrittenTopic(), pipeline.maxStallMs(), PipelineConfig.MAX_STALL_MS);
    Set<String> compacted = Topics.compacted(props, config.topics(), config.topicsPattern());
    if (!compacted.isEmpty()) {
      // A task that starts reads its open batches again from these topics; compaction may have
      // removed a delete event there and kept only its tombstone.
      LOG.warn(
          "Source topic(s) {} have cleanup.policy=compact: ingest reads an open batch again from its"
              + " source topic when a task starts, and compaction removes delete events (keeping"
              + " their tombstones) and earlier changes of a key, so a delete in a batch open at a"
              + " restart can be lost, and an unchanged TOAST value filled from an older row. Use"
              + " cleanup.policy=delete (Kafka Connect's default for Debezium's topics), or at"
              + " least min.compaction.lag.ms longer than a batch can stay open",
          compacted);
    }
    MetricsEndpoint metrics = new MetricsEndpoint(
        pipeline.metricsBindAddress(), pipeline.getInt(PipelineConfig.METRICS_PORT, 9400));
    ManifestCache.configureShared(pipeline, metrics.registry());
    Catalog catalog = CatalogLoader.load(pipeline.catalogName(), pipeline.catalogProperties());
    Health health = new Health();
    KafkaTopicIds topicIds = new KafkaTopicIds(props);
    return new StreamsApp(
            "ingest",
            IngestTopology.build(
                config, new TableManager(catalog), metrics.registry(), health, topicIds),
            props,
            catalog,
            metrics,
            health)
        .closing(topicIds);
  }

  static Properties streamsProperties(PipelineConfig pipeline) {
    Properties props = StreamsApp.streamsProperties(pipeline);
    if (pipeline.get(IngestConfig.TOPICS) == null) {
      props.putIfAbsent(CommonClientConfigs.METADATA_MAX_AGE_CONFIG, PATTERN_METADATA_MAX_AGE_MS);
    }
    if (!props.containsKey(ProducerConfig.BATCH_SIZE_CONFIG)) {
      props.putIfAbsent(
          StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), PRODUCER_BATCH_SIZE);
    }
    return props;
  }

  /** Runs the app of {@code config} until the process is stopped ({@code lakestream ingest}). */
  public static int run(PipelineConfig config) throws Exception {
    return StreamsApp.runUntilStopped("ingest", config, c -> {
      StreamsApp app = create(c);
      app.start();
      return app;
    });
  }
}
