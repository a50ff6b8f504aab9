package dev.lakestream.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Produces generated changes to a Kafka broker as Debezium would (JSON with embedded schemas, keyed
 * by primary key, so one key stays on one partition) and applies each to the model of the source
 * table. Also reads topics back, committed records only.
 */
public final class KafkaChangeFeed implements AutoCloseable {

  private final String bootstrapServers;
  private final KafkaProducer<byte[], byte[]> producer;
  private final SourceTableModel model;

  public KafkaChangeFeed(String bootstrapServers, SourceTableModel model) {
    this.bootstrapServers = bootstrapServers;
    this.model = model;
    Map<String, Object> props = new HashMap<>();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    // Debezium's JSON with its schema is 1-2 KB a change: batches of Kafka's default 16 KB took a
    // round trip each, with one request in flight.
    props.put(ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024);
    // One request in flight: a batch retried after NOT_LEADER_OR_FOLLOWER (a topic just created)
    // goes before the next one. With five, the retried first batch of a partition reached the
    // embedded broker behind later ones, and the idempotent producer retried it forever as out of
    // order, so the feed never delivered its last records.
    props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
    this.producer =
        new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
  }

  public void send(List<Change> changes) {
    for (Change change : changes) {
      producer.send(new ProducerRecord<>(
          change.table().topic(),
          DebeziumJson.key(change, true),
          DebeziumJson.value(change, true)));
      model.apply(change);
    }
    producer.flush();
  }

  /**
   * Sends the changes as Debezium's PostgreSQL connector writes updates that leave the {@code
   * toasted} columns' out-of-line values unchanged ({@link DebeziumJson#value(Change, boolean,
   * Set)}), and applies them to the model.
   */
  public void sendToasted(List<Change> changes, Set<String> toasted) {
    for (Change change : changes) {
      producer.send(new ProducerRecord<>(
          change.table().topic(),
          DebeziumJson.key(change, true),
          DebeziumJson.value(change, true, toasted)));
      model.apply(change);
    }
    producer.flush();
  }

  /** Sends a record as it is, past the model (bad input). */
  public void sendRaw(String topic, byte[] key, byte[] value) throws Exception {
    producer.send(new ProducerRecord<>(topic, key, value)).get();
  }

  /** At least {@code atLeast} committed records of {@code topic} from its start; fails after 30 s. */
  public List<ConsumerRecord<byte[], byte[]>> read(String topic, int atLeast) {
    List<ConsumerRecord<byte[], byte[]>> out = read(topic, atLeast, Duration.ofSeconds(30));
    if (out.size() < atLeast) {
      throw new AssertionError(
          "expected at least " + atLeast + " records on " + topic + ", found " + out.size());
    }
    return out;
  }

  /** The committed records of {@code topic} there are now (read until the end of every partition). */
  public List<ConsumerRecord<byte[], byte[]>> readAvailable(String topic) {
    return read(topic, Integer.MAX_VALUE, Duration.ofSeconds(30));
  }

  private List<ConsumerRecord<byte[], byte[]>> read(String topic, int atLeast, Duration timeout) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.currentTimeMillis() + timeout.toMillis();
      while (out.size() < atLeast && System.currentTimeMillis() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        if (atLeast == Integer.MAX_VALUE && atEnd(consumer)) {
          break;
        }
      }
    }
    return out;
  }

  /** True once the consumer has its partitions and has read up to their (committed) end. */
  private static boolean atEnd(KafkaConsumer<byte[], byte[]> consumer) {
    var assigned = consumer.assignment();
    if (assigned.isEmpty()) {
      return false;
    }
    var ends = consumer.endOffsets(assigned);
    return assigned.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
  }

  @Override
  public void close() {
    producer.close();
  }
}
