package dev.lakestream.sync;

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
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the sync topology: creates its topics (the convert-results topic with as many partitions as
 * realtime-commits, which it joins with by table), builds the catalog and the topology, and runs
 * Kafka Streams with {@code exactly_once_v2} until closed.
 */
public final class SyncApp implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(SyncApp.class);
  private static final int DEFAULT_REALTIME_COMMITS_PARTITIONS = 6;

  private final KafkaStreams streams;
  private final Catalog catalog;
  private final MetricsEndpoint metrics;
  private final KafkaStreamsMetrics streamsMetrics;

  public SyncApp(PipelineConfig pipeline) throws Exception {
    SyncConfig config = new SyncConfig(pipeline);
    Properties props = streamsProperties(pipeline);
    LOG.info("Starting sync with configuration:{}", pipeline);
    Topics.ensure(props, List.of(new Topics.Spec(config.realtimeCommitsTopic(), DEFAULT_REALTIME_COMMITS_PARTITIONS)));
    int partitions = Topics.partitions(props, config.realtimeCommitsTopic());
    Topics.ensure(
        props,
        List.of(
            new Topics.Spec(config.convertResultsTopic(), partitions),
            new Topics.Spec(config.convertTasksTopic(), config.convertPartitions()),
            new Topics.Spec(config.mainCommitsTopic(), partitions)));
    int resultPartitions = Topics.partitions(props, config.convertResultsTopic());
    if (resultPartitions != partitions) {
      throw new IllegalStateException(
          config.convertResultsTopic() + " has " + resultPartitions + " partitions but " + config.realtimeCommitsTopic()
              + " has " + partitions + "; they are joined by table and must match (delete the first; it is internal)");
    }
    this.metrics = new MetricsEndpoint(pipeline.getInt(PipelineConfig.METRICS_PORT, 9401));
    this.catalog = CatalogLoader.load(pipeline.catalogName(), pipeline.catalogProperties());
    var topology = SyncTopology.build(config, new TableManager(catalog), metrics.registry());
    LOG.info("Sync topology:\n{}", topology.describe());
    this.streams = new KafkaStreams(topology, props);
    streams.setUncaughtExceptionHandler(
        e -> {
          LOG.error("Stream thread failed; replacing it (tasks resume from their last commit)", e);
          return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
    this.streamsMetrics = new KafkaStreamsMetrics(streams);
    streamsMetrics.bindTo(metrics.registry());
  }

  public static Properties streamsProperties(PipelineConfig pipeline) {
    Properties props = pipeline.kafkaProperties();
    props.putIfAbsent(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
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

  /** {@code sync [--config FILE]}: runs until the process is stopped. */
  public static void main(String[] args) throws Exception {
    Path file = null;
    for (int i = 0; i < args.length; i++) {
      if ("--config".equals(args[i]) && i + 1 < args.length) {
        file = Path.of(args[++i]);
      } else {
        System.err.println("usage: sync [--config FILE]   (settings may also come from LAKESTREAM_* variables)");
        System.exit(2);
      }
    }
    PipelineConfig config = PipelineConfig.load(file, System.getenv());
    CountDownLatch stopped = new CountDownLatch(1);
    SyncApp app = new SyncApp(config);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      app.close();
      stopped.countDown();
    }, "sync-shutdown"));
    app.start();
    stopped.await();
  }
}
