package dev.lakestream.ingest;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.Topics;
import dev.lakestream.common.metrics.MetricsEndpoint;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import java.io.Closeable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the ingest topology: loads the configuration, creates the topics the app writes, builds
 * the catalog and the topology, and runs Kafka Streams until closed. Exactly-once
 * ({@code exactly_once_v2}) is the default processing guarantee. A stream thread that dies of an
 * unexpected error is replaced; its tasks resume from their last committed state.
 */
public final class IngestApp implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(IngestApp.class);

  private final KafkaStreams streams;
  private final Catalog catalog;
  private final MetricsEndpoint metrics;
  private final KafkaStreamsMetrics streamsMetrics;

  public IngestApp(PipelineConfig pipeline) throws Exception {
    IngestConfig config = new IngestConfig(pipeline);
    Properties props = streamsProperties(pipeline);
    LOG.info("Starting ingest with configuration:{}", pipeline);
    Topics.ensure(
        props,
        List.of(
            new Topics.Spec(config.filesWrittenTopic(), config.internalTopicPartitions()),
            new Topics.Spec(config.realtimeCommitsTopic(), config.internalTopicPartitions()),
            new Topics.Spec(config.deadLetterTopic(), 1)));
    this.metrics = new MetricsEndpoint(pipeline.getInt(PipelineConfig.METRICS_PORT, 9400));
    this.catalog = CatalogLoader.load(pipeline.catalogName(), pipeline.catalogProperties());
    var topology = IngestTopology.build(config, new TableManager(catalog), metrics.registry());
    LOG.info("Ingest topology:\n{}", topology.describe());
    this.streams = new KafkaStreams(topology, props);
    streams.setUncaughtExceptionHandler(
        e -> {
          LOG.error("Stream thread failed; replacing it (tasks resume from their last commit)", e);
          return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
    this.streamsMetrics = new KafkaStreamsMetrics(streams);
    streamsMetrics.bindTo(metrics.registry());
  }

  /** Pattern subscriptions see a new topic at the next metadata refresh: ten seconds, not Kafka's five minutes. */
  static final String PATTERN_METADATA_MAX_AGE_MS = "10000";

  static Properties streamsProperties(PipelineConfig pipeline) {
    Properties props = pipeline.kafkaProperties();
    props.putIfAbsent(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    if (pipeline.get(IngestConfig.TOPICS) == null) {
      props.putIfAbsent(CommonClientConfigs.METADATA_MAX_AGE_CONFIG, PATTERN_METADATA_MAX_AGE_MS);
    }
    return props;
  }

  public KafkaStreams streams() {
    return streams;
  }

  public int metricsPort() {
    return metrics.port();
  }

  public void start() {
    streams.start();
  }

  @Override
  public void close() {
    // Leave the group so a restarted or remaining instance takes the tasks over at once, instead
    // of after this member's session times out. State is restored from the changelogs.
    streams.close(
        CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(30)));
    streamsMetrics.close();
    try {
      if (catalog instanceof Closeable closeable) {
        closeable.close();
      }
    } catch (Exception e) {
      LOG.warn("Closing the catalog failed", e);
    }
    metrics.close();
  }

  /** {@code ingest [--config FILE]}: runs until the process is stopped. */
  public static void main(String[] args) throws Exception {
    Path file = null;
    for (int i = 0; i < args.length; i++) {
      if ("--config".equals(args[i]) && i + 1 < args.length) {
        file = Path.of(args[++i]);
      } else {
        System.err.println("usage: ingest [--config FILE]   (settings may also come from LAKESTREAM_* variables)");
        System.exit(2);
      }
    }
    PipelineConfig config = PipelineConfig.load(file, System.getenv());
    CountDownLatch stopped = new CountDownLatch(1);
    IngestApp app = new IngestApp(config);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  app.close();
                  stopped.countDown();
                },
                "ingest-shutdown"));
    app.start();
    stopped.await();
  }
}
