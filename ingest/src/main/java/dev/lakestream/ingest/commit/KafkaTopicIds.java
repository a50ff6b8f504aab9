package dev.lakestream.ingest.commit;

import dev.lakestream.common.kafka.Topics;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Source topic IDs from the brokers, through one Admin client of the app (its brokers and security
 * settings), created at the first lookup. An ID looked up is kept and used by every task that asks
 * for one no older than its own start, so each topic is described about once per task start.
 */
public final class KafkaTopicIds implements SourceTopicIds, AutoCloseable {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private record Known(String id, long atMs) {}

  private final Properties adminProps;
  private final Map<String, Known> known = new HashMap<>();
  private Admin admin;

  /** Over the Admin settings of {@code appProps} (the app's Kafka Streams properties). */
  public KafkaTopicIds(Properties appProps) {
    this.adminProps = Topics.adminProperties(appProps);
  }

  @Override
  public synchronized String current(String topic, long notBeforeMs) {
    Known k = known.get(topic);
    if (k != null && k.atMs() >= notBeforeMs) {
      return k.id();
    }
    long now = System.currentTimeMillis();
    String id = describe(topic);
    known.put(topic, new Known(id, now));
    return id;
  }

  private String describe(String topic) {
    if (admin == null) {
      admin = Admin.create(adminProps);
    }
    try {
      Uuid id = admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
          .get(topic)
          .topicId();
      return id == null || Uuid.ZERO_UUID.equals(id) ? null : id.toString();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return null;
      }
      throw new KafkaException(
          "cannot look up the ID of source topic " + topic + ": " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new KafkaException(
          "cannot look up the ID of source topic " + topic + " within " + TIMEOUT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("interrupted looking up the ID of source topic " + topic, e);
    }
  }

  @Override
  public synchronized void close() {
    if (admin != null) {
      admin.close(Duration.ofSeconds(5));
      admin = null;
    }
  }
}
