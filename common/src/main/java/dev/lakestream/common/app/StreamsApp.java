package dev.lakestream.common.app;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.metrics.MetricsEndpoint;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import java.io.Closeable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle both apps share: Kafka Streams with {@code exactly_once_v2} by default, a stream
 * thread that dies of an unexpected error replaced (its tasks resume from their last commit) and
 * counted in the app's {@link Health}, Kafka Streams' metrics bound to the app's registry, and on
 * close the group left (so another instance takes the tasks over at once), the catalog and the
 * metrics endpoint closed.
 *
 * <p>Defaults where Kafka's do not fit the pipeline: a record its deserializer cannot read goes to
 * the dead-letter topic ({@code <prefix>.dlq}) and the records after it flow on, rather than
 * stopping the thread on it forever; a transaction may stay open a minute (Kafka Streams' 10 s
 * abort a slow flush to object storage again and again; a crashed instance holds its partitions'
 * readers back at most that long).
 */
public final class StreamsApp implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(StreamsApp.class);

  private final String name;
  private final KafkaStreams streams;
  private final Catalog catalog;
  private final MetricsEndpoint metrics;
  private final KafkaStreamsMetrics streamsMetrics;
  private final Health health;
  private final List<AutoCloseable> resources = new ArrayList<>();

  public StreamsApp(
      String name,
      Topology topology,
      Properties props,
      Catalog catalog,
      MetricsEndpoint metrics,
      Health health) {
    this.name = name;
    this.catalog = catalog;
    this.metrics = metrics;
    this.health = health;
    LOG.info("{} topology:\n{}", name, topology.describe());
    this.streams = new KafkaStreams(topology, props);
    Counter threadFailures =
        metrics.registry().counter("lakestream.app.thread.failures", "app", name);
    streams.setUncaughtExceptionHandler(e -> {
      threadFailures.increment();
      health.threadFailed(System.currentTimeMillis());
      LOG.error(
          "{}: stream thread failed; replacing it (tasks resume from their last commit)", name, e);
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
    });
    this.streamsMetrics = new KafkaStreamsMetrics(streams);
    streamsMetrics.bindTo(metrics.registry());
    health.running(() ->
        streams.state().isRunningOrRebalancing() || streams.state() == KafkaStreams.State.CREATED);
    metrics.health(health);
  }

  /** Transactions may stay open this long (Kafka Streams' default is 10 s). */
  static final String TRANSACTION_TIMEOUT_MS = "60000";

  /** Process whatever is buffered, without waiting for a task's other partitions. */
  static final String MAX_TASK_IDLE_MS = String.valueOf(StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);

  /**
   * The Kafka properties of {@code config}, with {@code exactly_once_v2}, records that cannot be
   * deserialized dead-lettered, a one-minute transaction timeout and no task idling unless set
   * otherwise.
   */
  public static Properties streamsProperties(PipelineConfig config) {
    Properties props = config.kafkaProperties();
    props.putIfAbsent(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.putIfAbsent(
        StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
        LogAndContinueExceptionHandler.class.getName());
    props.putIfAbsent(
        StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, config.deadLetterTopic());
    props.putIfAbsent(
        StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG),
        TRANSACTION_TIMEOUT_MS);
    // Neither app joins or orders records across partitions, so a task never waits for an empty
    // partition; with Kafka Streams' 0, each check of a task with an empty partition formats log
    // text whether it is logged or not (4% of ingest's stream threads while draining).
    props.putIfAbsent(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, MAX_TASK_IDLE_MS);
    return props;
  }

  public Health health() {
    return health;
  }

  public KafkaStreams streams() {
    return streams;
  }

  public MeterRegistry meters() {
    return metrics.registry();
  }

  public int metricsPort() {
    return metrics.port();
  }

  public void start() {
    streams.start();
  }

  /** Closes {@code resource} after the streams and before the catalog. */
  public StreamsApp closing(AutoCloseable resource) {
    resources.add(resource);
    return this;
  }

  @Override
  public void close() {
    streams.close(
        CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(30)));
    streamsMetrics.close();
    for (AutoCloseable resource : resources) {
      try {
        resource.close();
      } catch (Exception e) {
        LOG.warn("{}: closing {} failed", name, resource, e);
      }
    }
    try {
      if (catalog instanceof Closeable closeable) {
        closeable.close();
      }
    } catch (Exception e) {
      LOG.warn("{}: closing the catalog failed", name, e);
    }
    metrics.close();
  }

  /** Builds an app from a configuration. */
  @FunctionalInterface
  public interface Factory {
    Closeable start(PipelineConfig config) throws Exception;
  }

  /**
   * The main of an app ({@code <command> [--config FILE]}, settings also from {@code LAKESTREAM_*}
   * variables): starts the app of {@code config} and runs it until SIGTERM or Ctrl-C; then closes it
   * cleanly.
   */
  public static int runUntilStopped(String command, PipelineConfig config, Factory factory)
      throws Exception {
    CountDownLatch stop = StopSignals.install();
    Closeable app = factory.start(config);
    stop.await();
    LOG.info("{}: stopping", command);
    app.close();
    LOG.info("{}: stopped", command);
    return 0;
  }
}
