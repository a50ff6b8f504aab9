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
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a restarted task's open batches again from their source topics: for each partition, the
 * records from its batch's first offset up to its end, the offset after the last record the task
 * had consumed when it last committed ({@link BatchStarts}). The source topic is the batch's log:
 * the change buffer keeps no changelog of its own, and what it held is what these records give
 * again.
 *
 * <p>The consumer is Kafka Streams' restore consumer as the application configures it (the same
 * brokers, security and {@code read_committed} under exactly-once), assigned to the partitions; it
 * has no group.
 */
final class SourceReplay {

  private static final Logger LOG = LoggerFactory.getLogger(SourceReplay.class);
  /** How long reading may make no progress before the task's initialization fails (and retries). */
  static final Duration STALL = Duration.ofMinutes(2);

  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);

  /**
   * Counts of one replay; {@code gone}: partitions whose topic no longer exists, or now ends before
   * the batch did (nothing to read, and their batches are to be forgotten).
   */
  record Read(long records, int partitions, long missing, Set<TopicPartition> gone) {}

  private SourceReplay() {}

  /**
   * Hands {@code sink} every record of each partition from its batch's first offset to below its
   * end, in offset order per partition. Offsets that hold no record (transaction markers,
   * compacted-away records) are counted in {@link Read#missing()}; records retention deleted are
   * warned of; a partition that now ends before the batch's end is not read ({@link Read#gone()}).
   */
  static Read read(
      Map<String, Object> appConfigs,
      String clientId,
      Map<TopicPartition, BatchStarts.Start> batches,
      Consumer<ConsumerRecord<byte[], byte[]>> sink) {
    Map<String, Object> props =
        new QuietStreamsConfig(appConfigs).getRestoreConsumerConfigs(clientId);
    props.remove(ConsumerConfig.GROUP_ID_CONFIG);
    props.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    long records = 0;
    long missing = 0;
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      Set<TopicPartition> gone = new HashSet<>();
      for (TopicPartition tp : batches.keySet()) {
        if (consumer.partitionsFor(tp.topic()).stream()
            .noneMatch(p -> p.partition() == tp.partition())) {
          LOG.warn(
              "The open batch of {} (offsets {} to {}) is not read again: the partition no longer"
                  + " exists",
              tp,
              batches.get(tp).first,
              batches.get(tp).end - 1);
          gone.add(tp);
        }
      }
      Set<TopicPartition> present = new HashSet<>(batches.keySet());
      present.removeAll(gone);
      if (present.isEmpty()) {
        return new Read(0, 0, 0, gone);
      }
      Map<TopicPartition, Long> begin = consumer.beginningOffsets(present);
      Map<TopicPartition, Long> logEnd = consumer.endOffsets(present);
      Map<TopicPartition, Long> from = new HashMap<>();
      Map<TopicPartition, Long> until = new HashMap<>();
      for (TopicPartition tp : present) {
        long first = batches.get(tp).first;
        long end = batches.get(tp).end;
        if (begin.get(tp) > first) {
          LOG.warn(
              "The open batch of {} starts at offset {}, but the topic holds records from {} only"
                  + " (retention deleted the rest before the batch was flushed): those changes are"
                  + " not read again",
              tp,
              first,
              begin.get(tp));
        }
        if (logEnd.get(tp) < end) {
          // Not the log the batch was read from (created again, or truncated): nothing in it can
          // be trusted to be the batch's records.
          LOG.warn(
              "The open batch of {} (offsets {} to {}) is not read again: the topic now ends at {}"
                  + " (it was created again, or truncated)",
              tp,
              first,
              end - 1,
              logEnd.get(tp));
          gone.add(tp);
          continue;
        }
        if (end > first) {
          from.put(tp, first);
          until.put(tp, end);
        }
      }
      if (until.isEmpty()) {
        return new Read(0, 0, 0, gone);
      }
      consumer.assign(until.keySet());
      until.keySet().forEach(tp -> consumer.seek(tp, from.get(tp)));
      Map<TopicPartition, Long> expected = new HashMap<>(from);
      Set<TopicPartition> reading = new HashSet<>(until.keySet());
      long startedNs = System.nanoTime();
      long progressAt = startedNs;
      long loggedAt = startedNs;
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
        long now = System.nanoTime();
        if (progress) {
          progressAt = now;
        } else if (now - progressAt > STALL.toNanos()) {
          throw new IllegalStateException("reading the open batches of " + reading
              + " again from their source topics made no progress for " + STALL.toSeconds()
              + " s (positions " + positions(consumer, reading) + ", reading up to "
              + until + ")");
        }
        if (now - loggedAt > PROGRESS_EVERY.toNanos()) {
          LOG.info(
              "Reading open batches again: {} records in {}s, {} partition(s) still reading",
              records,
              String.format("%.0f", (now - startedNs) / 1e9),
              reading.size());
          loggedAt = now;
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
