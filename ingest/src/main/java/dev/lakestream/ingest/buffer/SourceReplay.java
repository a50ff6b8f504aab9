package dev.lakestream.ingest.buffer;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a task's open batches again from their source topics, in steps: for each partition, the
 * records from its batch's first offset up to its end ({@link BatchStarts}), which moves on while
 * the task consumes meanwhile. The source topic is the batch's log: the change buffer keeps no
 * changelog of its own, and what it held is what these records give again.
 *
 * <p>Each step reads for a bounded time and returns, so the stream thread goes back to polling
 * well within {@code max.poll.interval.ms} however long the batches are; one thread's tasks share a
 * budget (at most 0.8 s of each second: the read comes first, and the thread's other tasks keep going
 * in the rest).
 *
 * <p>The consumer is Kafka Streams' restore consumer as the application configures it (the same
 * brokers, security and {@code read_committed} under exactly-once), assigned to the partitions; it
 * has no group.
 */
final class SourceReplay implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SourceReplay.class);
  /** How long reading may make no progress before the task fails (and starts again). */
  static final Duration STALL = Duration.ofMinutes(2);

  /** The reading time one stream thread may spend per {@link #WINDOW_NS}. */
  static final long BUDGET_NS = Duration.ofMillis(800).toNanos();

  private static final long WINDOW_NS = Duration.ofSeconds(1).toNanos();
  /** Per stream thread: when its window started, and the reading time spent in it. */
  private static final ThreadLocal<long[]> SPENT = ThreadLocal.withInitial(() -> new long[2]);

  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);

  private final Map<String, Object> props;
  private KafkaConsumer<byte[], byte[]> consumer;
  /** The next offset to read, per partition still being read. */
  private final Map<TopicPartition, Long> next = new HashMap<>();
  /**
   * Partitions of {@link #next} not read for now ({@link #hold}): what the task consumes from them
   * is left to a later read, as for a partition still being read.
   */
  private final Set<TopicPartition> held = new HashSet<>();

  private long records;
  private long missing;
  private long startedNs;
  /** Reading time, within the budget, since the last record read or partition finished. */
  private long idleNs;

  private long loggedAtNs;

  SourceReplay(Map<String, Object> appConfigs, String clientId) {
    Map<String, Object> p = new QuietStreamsConfig(appConfigs).getRestoreConsumerConfigs(clientId);
    p.remove(ConsumerConfig.GROUP_ID_CONFIG);
    p.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // Each partition is sought to where its batch starts; a log truncated under the read fails it
    // (and the task starts again, checking the log anew) rather than reading from elsewhere.
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    this.props = p;
  }

  /**
   * Starts reading the open batches: returns the partitions that cannot be read (their topic is
   * gone, or now ends before the batch did; warned), whose batches are to be forgotten. Records
   * retention deleted before the batch was flushed are warned of, and the rest is read.
   */
  Set<TopicPartition> start(Map<TopicPartition, BatchStarts.Start> batches) {
    if (batches.isEmpty()) {
      return Set.of();
    }
    open();
    try {
      return seek(batches);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  private void open() {
    if (consumer == null) {
      consumer =
          new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }
  }

  /** Assigns the consumer the partitions still being read, the held ones paused. */
  private void assign() {
    consumer.assign(next.keySet());
    consumer.pause(held);
  }

  /**
   * Holds {@code tp} back: it is not read, and what the task consumes from it meanwhile is left to
   * a later read (its batch's end moves past it), until {@link #release}. A partition not being read
   * is then read from {@code from} (its batch's end) once released; one being read goes on where it
   * was. The change buffer holds a partition while its batch's flush looks up previous rows over
   * several attempts: the batch stays as the lookup found it, and the records held back go to the
   * next batch.
   */
  void hold(TopicPartition tp, long from) {
    open();
    held.add(tp);
    if (next.putIfAbsent(tp, from) == null) {
      assign();
      consumer.seek(tp, from);
      if (startedNs == 0) {
        startedNs = System.nanoTime();
        loggedAtNs = startedNs;
      }
    } else {
      consumer.pause(Set.of(tp));
    }
  }

  /** Reads {@code tp} again, from where it was held. */
  void release(TopicPartition tp) {
    if (held.remove(tp) && next.containsKey(tp)) {
      consumer.resume(Set.of(tp));
    }
  }

  /** Whether {@code tp} is held back. */
  boolean held(TopicPartition tp) {
    return held.contains(tp);
  }

  private Set<TopicPartition> seek(Map<TopicPartition, BatchStarts.Start> batches) {
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
      return gone;
    }
    Map<TopicPartition, Long> begin = consumer.beginningOffsets(present);
    Map<TopicPartition, Long> logEnd = consumer.endOffsets(present);
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
        // Not the log the batch was read from (created again, or truncated): nothing in it can be
        // trusted to be the batch's records.
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
      next.put(tp, Math.max(first, begin.get(tp)));
    }
    assign();
    next.forEach(consumer::seek);
    startedNs = System.nanoTime();
    loggedAtNs = startedNs;
    return gone;
  }

  /** Whether any partition is still being read. */
  boolean reading() {
    return !next.isEmpty();
  }

  /** Whether {@code tp} is still being read. */
  boolean reading(TopicPartition tp) {
    return next.containsKey(tp);
  }

  /** The offset {@code tp} is read from next. */
  long next(TopicPartition tp) {
    return next.get(tp);
  }

  /**
   * Stops reading {@code tp} when every record below {@code end} is read (a record consumed at
   * {@code end} is then applied as it comes); whether it did.
   */
  boolean caughtUp(TopicPartition tp, long end) {
    Long at = next.get(tp);
    if (at == null || at < end || held.contains(tp)) {
      return false;
    }
    next.remove(tp);
    assign();
    return true;
  }

  /** Stops reading {@code tp}, whatever is left of it (its topic is not the one its batch was of). */
  void stop(TopicPartition tp) {
    held.remove(tp);
    if (next.remove(tp) != null) {
      assign();
    }
  }

  /**
   * Reads for at most the thread's remaining budget, handing {@code sink} each record below its
   * partition's end ({@code endOf}, which moves only between steps), in offset order per partition;
   * {@link #next} is already past the record when the sink sees it. The sink returns the offset to
   * read next: past the record, or past a run of offsets not to be read (sought over). Returns the
   * partitions read to their end in this step.
   */
  Set<TopicPartition> step(
      ToLongFunction<TopicPartition> endOf, ToLongFunction<ConsumerRecord<byte[], byte[]>> sink) {
    Set<TopicPartition> done = new HashSet<>();
    if (held.containsAll(next.keySet())) {
      return done; // none, or only held ones: nothing to read (and no stall)
    }
    long stepStartNs = System.nanoTime();
    long[] spent = SPENT.get();
    if (stepStartNs - spent[0] > WINDOW_NS) {
      spent[0] = stepStartNs;
      spent[1] = 0;
    }
    long budgetNs = BUDGET_NS - spent[1];
    if (budgetNs <= 0) {
      return done;
    }
    boolean progress = false;
    long now = stepStartNs;
    while (!finished(endOf, done) && now - stepStartNs < budgetNs) {
      long waitMs = Math.max(1, Math.min(100, (budgetNs - (now - stepStartNs)) / 1_000_000));
      var polled = consumer.poll(Duration.ofMillis(waitMs));
      for (TopicPartition tp : polled.partitions()) {
        long end = endOf.applyAsLong(tp);
        for (ConsumerRecord<byte[], byte[]> record : polled.records(tp)) {
          if (held.contains(tp)) {
            // Held back by a record just handed to the sink (its flush, or another partition's
            // flush for memory, looks rows up): the rest is read once it is released.
            consumer.seek(tp, next.get(tp));
            break;
          }
          if (record.offset() >= end) {
            consumer.seek(tp, record.offset()); // the end: read when it has moved past
            break;
          }
          if (record.offset() < next.get(tp)) {
            continue; // read before
          }
          long gap = record.offset() - next.get(tp);
          if (gap > 0) {
            missing += gap;
          }
          next.put(tp, record.offset() + 1);
          records++;
          progress = true;
          long resume = sink.applyAsLong(record);
          if (resume > record.offset() + 1) {
            next.put(tp, resume);
            consumer.seek(tp, resume);
            break;
          }
        }
      }
      now = System.nanoTime();
    }
    finished(endOf, done);
    progress |= !done.isEmpty();
    spent[1] += now - stepStartNs;
    // Only time this task had to read counts: another task of the thread may take the budget for
    // long.
    idleNs = progress ? 0 : idleNs + (now - stepStartNs);
    if (idleNs > STALL.toNanos()) {
      throw new IllegalStateException("reading the open batches of " + next.keySet()
          + " again from their source topics made no progress for " + STALL.toSeconds()
          + " s (reading from " + next + ")");
    }
    if (now - loggedAtNs > PROGRESS_EVERY.toNanos()) {
      LOG.info(
          "Reading open batches again: {} records in {}s, {} partition(s) still reading",
          records,
          String.format("%.0f", (now - startedNs) / 1e9),
          next.size());
      loggedAtNs = now;
    }
    if (next.isEmpty() && missing > 0) {
      LOG.info(
          "Reading open batches again: {} offset(s) held no record (transaction markers, or"
              + " records compaction removed)",
          missing);
    }
    return done;
  }

  /**
   * Moves the partitions whose position reached their end from {@link #next} to {@code done};
   * whether none is left to read.
   */
  private boolean finished(ToLongFunction<TopicPartition> endOf, Set<TopicPartition> done) {
    boolean assigned = false;
    for (TopicPartition tp : Set.copyOf(next.keySet())) {
      if (!held.contains(tp) && consumer.position(tp) >= endOf.applyAsLong(tp)) {
        next.remove(tp);
        done.add(tp);
        assigned = true;
      }
    }
    if (assigned) {
      assign();
    }
    return held.containsAll(next.keySet());
  }

  /** Records read so far. */
  long records() {
    return records;
  }

  /** Seconds since reading started. */
  double seconds() {
    return (System.nanoTime() - startedNs) / 1e9;
  }

  @Override
  public void close() {
    next.clear();
    held.clear();
    if (consumer != null) {
      consumer.close();
      consumer = null;
    }
  }

  /** Streams' configuration without its INFO dump of every setting at each task's start. */
  private static final class QuietStreamsConfig extends StreamsConfig {
    QuietStreamsConfig(Map<?, ?> props) {
      super(props, false);
    }
  }
}
