package dev.lakestream.ingest.buffer;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a restarted task's open batches again from their source topics: for each partition, the
 * records from its batch's first offset up to the offset the application committed for it (the
 * next record Kafka Streams hands the task). The source topic is the batch's log: the change buffer
 * keeps no changelog of its own, and what it held is exactly what these records give again.
 *
 * <p>The consumer is Kafka Streams' restore consumer as the application configures it (the same
 * brokers, security and {@code read_committed} under exactly-once), assigned to the partitions; it
 * joins no group, and reads the committed offsets under the application id, which are stable by the
 * time a task initializes its processors.
 */
final class SourceReplay {

  private static final Logger LOG = LoggerFactory.getLogger(SourceReplay.class);
  /** How long reading may make no progress before the task's initialization fails (and retries). */
  static final Duration STALL = Duration.ofMinutes(2);

  /**
   * Counts of one replay; {@code gone}: partitions whose topic no longer exists (nothing to read, and
   * their batches are to be forgotten).
   */
  record Read(long records, int partitions, long missing, Set<TopicPartition> gone) {}

  private SourceReplay() {}

  /**
   * Hands {@code sink} every record of each partition from its first offset ({@code from}) to below
   * its committed offset, in offset order per partition. Offsets that hold no record (transaction
   * markers, compacted-away records) are counted in {@link Read#missing()}; records retention deleted
   * are warned of.
   */
  static Read read(
      Map<String, Object> appConfigs,
      String clientId,
      Map<TopicPartition, Long> from,
      Consumer<ConsumerRecord<byte[], byte[]>> sink) {
    Map<String, Object> props =
        new QuietStreamsConfig(appConfigs).getRestoreConsumerConfigs(clientId);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, appConfigs.get(StreamsConfig.APPLICATION_ID_CONFIG));
    props.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
    props.remove(ConsumerConfig.GROUP_PROTOCOL_CONFIG);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    long records = 0;
    long missing = 0;
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      Set<TopicPartition> gone = new HashSet<>();
      for (TopicPartition tp : from.keySet()) {
        if (consumer.partitionsFor(tp.topic()).stream()
            .noneMatch(p -> p.partition() == tp.partition())) {
          LOG.warn(
              "The open batch of {} (from offset {}) is not read again: the partition no longer"
                  + " exists",
              tp,
              from.get(tp));
          gone.add(tp);
        }
      }
      Set<TopicPartition> present = new HashSet<>(from.keySet());
      present.removeAll(gone);
      Map<TopicPartition, OffsetAndMetadata> committed =
          present.isEmpty() ? Map.of() : consumer.committed(present, Duration.ofMinutes(1));
      Map<TopicPartition, Long> until = new HashMap<>();
      for (var e : from.entrySet()) {
        OffsetAndMetadata end = committed.get(e.getKey());
        if (end != null && end.offset() > e.getValue()) {
          until.put(e.getKey(), end.offset());
        }
      }
      if (until.isEmpty()) {
        return new Read(0, 0, 0, gone);
      }
      consumer.assign(until.keySet());
      Map<TopicPartition, Long> begin = consumer.beginningOffsets(until.keySet());
      for (TopicPartition tp : until.keySet()) {
        if (begin.get(tp) > from.get(tp)) {
          LOG.warn(
              "The open batch of {} starts at offset {}, but the topic holds records from {} only"
                  + " (retention deleted the rest before the batch was flushed): those changes are"
                  + " not read again",
              tp,
              from.get(tp),
              begin.get(tp));
        }
      }
      until.keySet().forEach(tp -> consumer.seek(tp, from.get(tp)));
      Map<TopicPartition, Long> expected = new HashMap<>(from);
      Set<TopicPartition> reading = new HashSet<>(until.keySet());
      long progressAt = System.nanoTime();
      while (!reading.isEmpty()) {
        var polled = consumer.poll(Duration.ofMillis(500));
        boolean progress = !polled.isEmpty();
        for (ConsumerRecord<byte[], byte[]> record : polled) {
          TopicPartition tp = new TopicPartition(record.topic(), record.partition());
          if (!reading.contains(tp) || record.offset() >= until.get(tp)) {
            continue;
          }
          long gap = record.offset() - expected.get(tp);
          if (gap > 0) {
            missing += gap;
          }
          expected.put(tp, record.offset() + 1);
          sink.accept(record);
          records++;
        }
        for (TopicPartition tp : Set.copyOf(reading)) {
          long position = consumer.position(tp);
          if (position >= until.get(tp)) {
            reading.remove(tp);
            consumer.pause(Set.of(tp));
            progress = true;
          }
        }
        if (progress) {
          progressAt = System.nanoTime();
        } else if (System.nanoTime() - progressAt > STALL.toNanos()) {
          throw new IllegalStateException("reading the open batches of " + reading
              + " again from their source topics made no progress for " + STALL.toSeconds()
              + " s (positions " + positions(consumer, reading) + ", reading up to "
              + until + ")");
        }
      }
      if (missing > 0) {
        LOG.info(
            "Reading open batches again from {}: {} offset(s) held no record (transaction"
                + " markers, or records compaction removed)",
            until.keySet(),
            missing);
      }
      return new Read(records, until.size(), missing, gone);
    }
  }

  private static Map<TopicPartition, Long> positions(
      KafkaConsumer<?, ?> consumer, Set<TopicPartition> partitions) {
    Map<TopicPartition, Long> out = new HashMap<>();
    partitions.forEach(tp -> out.put(tp, consumer.position(tp)));
    return out;
  }

  /** Streams' configuration without its INFO dump of every setting at each task's start. */
  private static final class QuietStreamsConfig extends StreamsConfig {
    QuietStreamsConfig(Map<?, ?> props) {
      super(props, false);
    }
  }
}
