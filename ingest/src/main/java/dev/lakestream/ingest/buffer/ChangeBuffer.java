package dev.lakestream.ingest.buffer;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ChangeOp;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.common.kafka.PartitionText;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.changelog.ChangeLog;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.ingest.commit.SourceTopicIds;
import dev.lakestream.ingest.fence.SourceFence;
import dev.lakestream.ingest.toast.UnavailableValues;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Buffers the changes of its task's source partitions and flushes each partition's batch as files
 * of the table: one data file with the latest after-image of every key whose last change leaves a
 * row, one equality-delete file with every key of the batch (an upsert: the key's older row,
 * wherever it is, must go). The flush forwards a {@link FilesWritten} keyed by table and clears the
 * batch; the Kafka transaction that commits the task makes both happen together or not at all.
 *
 * <p>The roles: {@link Admission} decides whether a record can be applied and to which table;
 * {@link SourceFence} drops what the source connector published again; {@link Batches} keeps one
 * batch per partition on the heap, the latest change per key; {@link BatchFlusher} writes a batch;
 * {@link BatchStarts} keeps where each open batch starts and ends in its source topic, so a task
 * that starts reads its open batches again from there ({@link SourceReplay}), in steps between its
 * polls: the open batches are not kept in a state store. A batch is flushed when it reaches {@code
 * ingest.flush.max.rows} keys or {@code ingest.flush.max.bytes}, or {@code ingest.flush.interval.ms}
 * after its first change; the task's largest batch is flushed early when its batches together hold
 * more than {@code ingest.buffer.max.bytes}.
 *
 * <p>A record that cannot be applied (malformed, no key, unknown op, a type, value or schema change
 * the table cannot take, an unchanged TOAST value with no previous row) goes to the dead-letter
 * child with the reason; the records after it flow on. Nothing a record holds can stop the thread.
 */
public final class ChangeBuffer implements Processor<byte[], byte[], Object, Object> {

  /**
   * Every change of the open batches of tables that keep a change log, by partition and offset;
   * without a changelog: after a restart they are read again from the source topics ({@link
   * BatchStarts}, {@link SourceReplay}).
   */
  public static final String CHANGELOG_STORE = "changelog-buffer-unlogged";
  /** Where each partition's open batch starts ({@link BatchStarts}). */
  public static final String STARTS_STORE = "batch-starts";
  /**
   * The open batches and {@link #CHANGELOG_STORE} as earlier versions kept them, with changelogs
   * ({@link LegacyBuffers}).
   */
  public static final String LEGACY_STORE = "change-buffer";

  public static final String LEGACY_CHANGELOG_STORE = "changelog-buffer";
  /** The schema texts the entries of the stores above refer to ({@link SchemaTexts}). */
  public static final String SCHEMA_STORE = SchemaTexts.STORE;
  /** The last offset each source partition flushed. */
  public static final String FLUSHED_STORE = FlushedOffsets.STORE;

  public static final String FILES_WRITTEN_CHILD = "files-written";
  public static final String DEAD_LETTER_CHILD = "dead-letters";

  private static final Logger LOG = LoggerFactory.getLogger(ChangeBuffer.class);
  private static final long PROGRESS_EVERY_MS = 10_000;

  /**
   * A flush that has waited this long for its partition's earlier batches to reach realtime is
   * reported on {@code /health} (the committer commits them within seconds when it can).
   */
  static final long FLUSH_WAIT_REPORTED_AFTER_MS = 5 * 60_000;
  /**
   * A batch whose records left out (dead-lettered, or dropped by the fence) between its added ones
   * make this many ranges is flushed: its {@link BatchStarts} entry, written with every record, stays
   * 16 KiB at most, however long the batch is held open.
   */
  public static final int MAX_LEFT_OUT_RANGES = 1024;

  private final IngestConfig config;
  private final boolean commitOnHandoff;
  private final TableManager tables;
  private final IngestMetrics metrics;
  private final MeterRegistry meters;
  private final Admission admission;
  private final UnavailableValues unavailable;
  private final BatchFlusher flusher;
  private final SourceTopicIds sourceTopicIds;
  private final Health health;
  /** The {@code /health} subjects of the partitions whose flush this task reported waiting. */
  private final Set<String> reportedWaits = new HashSet<>();
  /** Per source partition: the highest offset the table (and its change log) already holds. */
  private final Map<String, Long> committedOffsets = new HashMap<>();
  /**
   * The ID of the topic each source partition is read from (as the task found it after its start,
   * or when the partition's offsets started again), "" when none is known: the offsets of a topic
   * deleted and created again are not the old one's.
   */
  private final Map<String, String> topicIds = new HashMap<>();
  /** When the task (re)started: topic IDs are looked up no earlier. */
  private long startedAtMs;
  /** The last offset consumed of each partition since the task (re)started. */
  private final Map<String, long[]> lastConsumed = new HashMap<>();
  /** {@link Batches#prefix}, built once per run of a partition's records. */
  private final PartitionText prefixes = new PartitionText(Batches::prefix);

  private ProcessorContext<Object, Object> context;
  private Batches batches;
  private SchemaTexts schemaTexts;
  private KeyValueStore<String, BufferedChange> changelog;
  private FlushedOffsets flushedOffsets;
  private SourceFence fence;
  private BatchStarts starts;
  private LegacyBuffers legacy;
  /**
   * The partitions whose open batch the task found at its start and of which it has consumed
   * nothing yet: only their first record can follow skipped offsets. Empty on most records.
   */
  private final Set<String> notYetConsumed = new HashSet<>();
  /** Reads the open batches again, in steps; null when none is being read. */
  private SourceReplay replay;
  /** The time flushes took since the last punctuation, outside its rounds ({@link #flush}). */
  private long spentOutsideRoundsNs;
  /**
   * Records read again and skipped: the fence dropped them, they were dead-lettered, or they were
   * never consumed (a forward offset reset).
   */
  private long replaySkipped;

  private long tickMs;
  private long progressAtMs;
  private long progressChanges;
  private long progressFlushes;
  private long progressLeftForNextRound;

  public ChangeBuffer(
      IngestConfig config,
      TableManager tables,
      MeterRegistry meters,
      Health health,
      SourceTopicIds sourceTopicIds) {
    this.config = config;
    this.health = health;
    this.commitOnHandoff = config.pipeline().commitOnHandoff();
    this.sourceTopicIds = sourceTopicIds;
    this.tables = tables;
    this.meters = meters;
    this.metrics = new IngestMetrics(meters);
    this.admission = new Admission(config, tables, metrics.changelogSkipped);
    this.unavailable = new UnavailableValues(config.unavailableValuePlaceholder());
    this.flusher = new BatchFlusher(config, tables, admission, unavailable, metrics);
  }

  @Override
  public void init(ProcessorContext<Object, Object> context) {
    this.context = context;
    this.schemaTexts = new SchemaTexts(context.getStateStore(SCHEMA_STORE));
    this.batches = new Batches(
        schemaTexts, admission.decoder(), unavailable, metrics, config.deferrableKeyTables());
    this.changelog = context.getStateStore(CHANGELOG_STORE);
    this.flushedOffsets = new FlushedOffsets(context.getStateStore(FLUSHED_STORE));
    this.fence = new SourceFence(context.getStateStore(SourceFence.STORE), meters);
    this.starts = new BatchStarts(context.getStateStore(STARTS_STORE));
    // Kafka Streams initializes a processor again when it resumes or revives its task.
    closeReplay();
    clearReportedWaits();
    committedOffsets.clear();
    topicIds.clear();
    lastConsumed.clear();
    // The wall clock: Kafka Streams sets the context's time only for a record or a punctuation.
    startedAtMs = System.currentTimeMillis();
    notYetConsumed.clear();
    // What the unlogged store holds from an earlier run is not what the task committed: start
    // empty.
    clear(changelog);
    long now = context.currentSystemTimeMs();
    this.legacy = new LegacyBuffers(
        List.of(context.getStateStore(LEGACY_STORE), context.getStateStore(LEGACY_CHANGELOG_STORE)),
        List.of((key, stored) -> batches.restore(key, stored, now), changelog::put));
    int migrated = legacy.migrate();
    int restored = batches.open().size();
    if (migrated > 0) {
      LOG.info(
          "Task {}: {} open batch(es) ({} entries) restored from the changelogged stores of an"
              + " earlier version",
          context.taskId(),
          restored,
          migrated);
    }
    startReadingOpenBatchesAgain();
    progressAtMs = context.currentSystemTimeMs();
    tickMs = Math.max(10, Math.min(100, config.flushIntervalMs() / 4));
    context.schedule(Duration.ofMillis(tickMs), PunctuationType.WALL_CLOCK_TIME, this::flushDue);
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    RecordMetadata meta = context.recordMetadata().orElseThrow();
    metrics.changesIn.increment();
    progressChanges++;
    String prefix = prefixes.of(meta.topic(), meta.partition());
    consumed(prefix, meta.topic(), meta.partition(), meta.offset());
    if (!notYetConsumed.isEmpty() && notYetConsumed.remove(prefix)) {
      starts.firstConsumed(prefix, meta.offset());
    }
    if (starts.covers(prefix, meta.offset())) {
      return; // consumed again after an offset reset: the open batch has it as it was decided
    }
    if (replay != null && deferred(prefix, meta)) {
      return;
    }
    apply(meta.topic(), meta.partition(), meta.offset(), record, Reading.LIVE);
  }

  /**
   * Notes the offset consumed from a partition. The first one since the task started makes the
   * partition's state the current topic's ({@link FlushedOffsets#reading}); when that state was of
   * an earlier topic of the name and the consumer did not start from the beginning, it resumed at
   * the old topic's position, and the new topic's records before it were not read: said loudly,
   * for only a reset of the group's offsets can read them. An offset below the last one consumed
   * may mean the topic was deleted and created again while it was read ({@link #startedAgain}).
   */
  private void consumed(String prefix, String topic, int partition, long offset) {
    long[] last = lastConsumed.get(prefix);
    if (last != null) {
      if (offset < last[0]) {
        startedAgain(prefix, topic, partition, offset, last[0]);
      }
      last[0] = offset;
      return;
    }
    lastConsumed.put(prefix, new long[] {offset});
    String topicId = topicId(topic, partition);
    if (offset > 0 && flushedOffsets.ofAnotherTopic(topic, partition, topicId)) {
      metrics.topicRecreated.increment();
      LOG.error(
          "Source topic {} was deleted and created again (its ID is now {}), and partition {} is"
              + " read from offset {}, where the consumer was in the old topic: its records before"
              + " that offset may not have been read. Stop ingest, reset the group's offsets of"
              + " {} to the earliest (kafka-consumer-groups --reset-offsets --to-earliest --group"
              + " {} --topic {} --execute) and start it: what the table holds is skipped by its"
              + " offsets, the rest is read",
          topic,
          topicId,
          partition,
          offset,
          topic,
          config.applicationId(),
          topic);
    }
    flushedOffsets.reading(topic, partition, topicId);
  }

  /**
   * The partition's offsets went back while the task read it. When its topic's ID is another now,
   * the topic was deleted and created again: the open batch, of the old topic, is flushed now (even
   * ahead of its partition's earlier batches' commit, so an unchanged TOAST value in it may be
   * filled from a row a little older), reading it again stops, and the partition is read as the new
   * topic's, whose offsets nothing the table holds is measured against. With the same ID (a log
   * truncated after an unclean leader election, a consumer sought back), records at or below the
   * committed offsets are skipped as committed, as before.
   */
  private void startedAgain(
      String prefix, String topic, int partition, long offset, long lastOffset) {
    String was = Objects.requireNonNullElse(topicIds.get(prefix), "");
    String id =
        Objects.requireNonNullElse(sourceTopicIds.current(topic, System.currentTimeMillis()), "");
    if (id.equals(was)) {
      LOG.warn(
          "Offset {} of {}-{} follows offset {} in the same topic (its log was truncated, or the"
              + " consumer sought back): what the table holds is skipped as committed",
          offset,
          topic,
          partition,
          lastOffset);
      return;
    }
    metrics.topicRecreated.increment();
    LOG.warn(
        "Offset {} of {}-{} follows offset {}: the topic was deleted and created again while"
            + " ingest read it (its ID is now {}); its open batch is flushed, and the partition is"
            + " read as the new topic's",
        offset,
        topic,
        partition,
        lastOffset,
        id);
    TopicPartition tp = new TopicPartition(topic, partition);
    if (replay != null && replay.reading(tp)) {
      BatchStarts.Start start = starts.get(prefix);
      if (start != null && replay.next(tp) < start.end) {
        // Consumed from the old topic while its batch was being read again, or held back during a
        // lookup: gone with the topic, as records it held that ingest had not reached yet.
        LOG.warn(
            "Offsets {} to {} of the old topic {}-{} (records of its open batch not read again yet,"
                + " or consumed while it was read again or held back during a lookup of previous"
                + " rows) were not applied, and went with the topic",
            replay.next(tp),
            start.end - 1,
            topic,
            partition);
      }
      replay.stop(tp);
    }
    Batches.Batch open = batches.open().get(prefix);
    if (open != null) {
      flush(open, context.currentSystemTimeMs(), false, Long.MAX_VALUE);
    }
    starts.closed(prefix);
    topicIds.put(prefix, id);
    committedOffsets.remove(prefix);
    flushedOffsets.reading(topic, partition, id.isEmpty() ? null : id);
  }

  /**
   * Whether the record is left to the reading of its partition's open batch, which has not reached
   * it yet: it is read after the ones before it, and decided then.
   */
  private boolean deferred(String prefix, RecordMetadata meta) {
    TopicPartition tp = new TopicPartition(meta.topic(), meta.partition());
    if (!replay.reading(tp)) {
      return false;
    }
    BatchStarts.Start start = starts.get(prefix);
    if (replay.caughtUp(tp, start == null ? Long.MIN_VALUE : start.end)) {
      doneReading(Set.of(tp));
      return false;
    }
    starts.deferred(prefix, meta.offset());
    metrics.deferred.increment();
    return true;
  }

  /** How a record reaches {@link #apply}. */
  private enum Reading {
    /** Consumed, and decided now. */
    LIVE,
    /**
     * Read again from the source topic, decided before: it passed the fence then (those the fence
     * dropped, or dead-lettered, are not read again).
     */
    AGAIN,
    /** Read from the source topic after it was consumed while its batch was being read again. */
    DEFERRED
  }

  /** Adds a record to its partition's batch, or drops or dead-letters it. */
  private void apply(
      String topic, int partition, long offset, Record<byte[], byte[]> record, Reading reading) {
    boolean again = reading == Reading.AGAIN;
    Admission.Admitted admitted;
    try {
      var result = admission.admit(topic, record.key(), record.value());
      if (result.isEmpty()) {
        if (!again) {
          metrics.tombstones.increment();
          starts.passedOver(prefixes.of(topic, partition), offset);
        }
        return;
      }
      admitted = result.get();
    } catch (BadChangeException e) {
      refuse(record, topic, partition, offset, e.getMessage(), again);
      return;
    }
    ChangeEvent event = admitted.event();
    // Offsets the table already holds come back only when ingest's consumer offsets were reset:
    // skipping them keeps every batch above what is committed.
    if (offset <= committedOffset(admitted.table(), topic, partition, admitted.logged())) {
      if (!again) {
        metrics.alreadyCommitted.increment();
      }
      return;
    }
    Header oldKey = record.headers().lastHeader(SourceFence.OLD_KEY_HEADER);
    // After the checks: the fence holds the highest position applied, and a bad record applies
    // nothing.
    if (!again
        && config.sourceFence()
        && !fence.admit(topic, partition, offset, event, oldKey != null)) {
      leftOut(topic, partition, offset);
      return;
    }
    long now = context.currentSystemTimeMs();
    if (event.op() == ChangeOp.TRUNCATE) {
      if (again) {
        // Applied, a TRUNCATE ends its batch, so the first time this one was not applied (an
        // earlier
        // version dropped a TRUNCATE of a table that did not exist yet): not applied now either.
        LOG.warn(
            "TRUNCATE at {}-{}@{} inside an open batch read again: not applied, as it was not the"
                + " first time",
            topic,
            partition,
            offset);
        return;
      }
      hops(event, record.timestamp(), now);
      truncate(record, topic, partition, offset, event, admitted.logged());
      return;
    }
    Batches.Batch batch;
    try {
      batch = batches.add(
          topic,
          partition,
          offset,
          admitted,
          record.key(),
          record.value(),
          oldKey == null ? null : oldKey.value(),
          !event.op().leavesRow() && record.headers().lastHeader(Batches.NEW_KEY_HEADER) != null,
          now);
    } catch (BadChangeException e) {
      refuse(record, topic, partition, offset, e.getMessage(), again);
      return;
    }
    starts.added(batch.prefix(), offset);
    if (batch.topicId == null) {
      batch.topicId = topicId(topic, partition);
    }
    if (!again) {
      hops(event, record.timestamp(), now);
    }
    if (admitted.logged()) {
      BufferedChange raw =
          new BufferedChange(offset, event.source().tsMs(), record.key(), record.value());
      changelog.put(batch.prefix() + String.format("%020d", offset), schemaTexts.compact(raw));
      batches.counted(batch, raw.sizeInBytes());
    }
    if (batch.keys >= config.flushMaxRows() || batch.bytes >= config.flushMaxBytes()) {
      flush(batch, now);
    }
    if (batches.bytes() > config.bufferMaxBytes()) {
      flushLargest(now);
    }
  }

  /**
   * The task's batches are on the heap and hold more than they may: its largest batch that can be
   * flushed now goes first, so the fewest files are small. One whose flush waits for its earlier
   * batches to reach realtime is passed over until it can go.
   */
  private void flushLargest(long now) {
    Batches.Batch largest = batches.largest(now);
    if (largest == null) {
      return;
    }
    long bytes = batches.bytes();
    flush(largest, now);
    if (!batches.open().containsKey(largest.prefix())) {
      metrics.flushesForMemory.increment();
      LOG.debug(
          "Task {}: open batches held {} bytes, above {}: flushed {}-{} ({} bytes) early",
          context.taskId(),
          bytes,
          config.bufferMaxBytes(),
          largest.topic,
          largest.partition,
          largest.bytes);
    }
  }

  /**
   * A record that cannot be applied: dead-lettered, and left out when its partition's batch is read
   * again. {@code again}: it was added the first time, and is refused only on reading it again.
   */
  private void refuse(
      Record<byte[], byte[]> record,
      String topic,
      int partition,
      long offset,
      String reason,
      boolean again) {
    deadLetter(record, topic, partition, offset, reason);
    batches.forgetCreates(topic, partition);
    if (again) {
      starts.refusedOnReading(prefixes.of(topic, partition), offset);
    } else {
      leftOut(topic, partition, offset);
    }
  }

  /**
   * A record consumed now is not added to its partition's batch: reading the batch again leaves it
   * out too. A batch with {@link #MAX_LEFT_OUT_RANGES} such ranges is flushed.
   */
  private void leftOut(String topic, int partition, long offset) {
    String prefix = prefixes.of(topic, partition);
    starts.leftOut(prefix, offset);
    if (starts.leftOutRanges(prefix) >= MAX_LEFT_OUT_RANGES) {
      Batches.Batch batch = batches.open().get(prefix);
      if (batch != null) {
        LOG.info(
            "Task {}: {}-{}'s open batch has {} runs of records left out (dead-lettered or fenced)"
                + " between its changes: flushed now",
            context.taskId(),
            topic,
            partition,
            MAX_LEFT_OUT_RANGES);
        flush(batch, context.currentSystemTimeMs());
      }
    }
  }

  /**
   * Starts reading the open batches of the task's source partitions again, from each batch's first
   * offset to its end, after a restart or a rebalance (the open batches are in no changelogged store): in
   * steps, with the flushes ({@link #readOpenBatchesAgain}), so the thread keeps polling. A batch
   * whose partition is gone is forgotten now.
   */
  private void startReadingOpenBatchesAgain() {
    Map<TopicPartition, BatchStarts.Start> byPartition = new HashMap<>();
    for (var e : starts.load().entrySet()) {
      TopicPartition tp = BatchStarts.partitionOf(e.getKey());
      String topicId = topicId(tp.topic(), tp.partition());
      if (flushedOffsets.ofAnotherTopic(tp.topic(), tp.partition(), topicId)) {
        LOG.warn(
            "The open batch of {} (offsets {} to {}) is not read again: it was read from the topic"
                + " of that name that was deleted since (the topic's ID is now {}); its changes"
                + " went with it",
            tp,
            e.getValue().first,
            e.getValue().end - 1,
            topicId);
        starts.closed(e.getKey());
      } else {
        byPartition.put(tp, e.getValue());
        notYetConsumed.add(e.getKey());
      }
    }
    if (byPartition.isEmpty()) {
      return;
    }
    replay = new SourceReplay(
        context.appConfigs(), config.applicationId() + "-" + context.taskId() + "-buffer-replay");
    replaySkipped = 0;
    for (TopicPartition gone : replay.start(byPartition)) {
      starts.closed(Batches.prefix(gone.topic(), gone.partition()));
    }
    if (!replay.reading()) {
      closeReplay();
      return;
    }
    LOG.info(
        "Task {}: reading {} open batch(es) again from the source topics, between polls",
        context.taskId(),
        byPartition.size());
  }

  /**
   * One step of reading the open batches again: a record decided before is applied as it was
   * decided (left out, or added past the fence), one consumed meanwhile is decided now.
   */
  private void readOpenBatchesAgain() {
    if (replay == null) {
      return;
    }
    Set<TopicPartition> done = replay.step(
        tp -> {
          BatchStarts.Start start = starts.get(prefixes.of(tp.topic(), tp.partition()));
          return start == null ? Long.MIN_VALUE : start.end;
        },
        r -> {
          BatchStarts.Start start = starts.get(prefixes.of(r.topic(), r.partition()));
          if (start == null) {
            // Reading stops at the end; a batch ended while read starts again where reading is.
            throw new IllegalStateException("read " + r.topic() + "-" + r.partition() + "@"
                + r.offset() + " again, but its partition has no open batch");
          }
          long[] skipped = start.rangeOf(r.offset());
          if (skipped != null) {
            replaySkipped++;
            return skipped[1] + 1; // past the run
          }
          metrics.replayed.increment();
          apply(
              r.topic(),
              r.partition(),
              r.offset(),
              new Record<>(r.key(), r.value(), r.timestamp(), r.headers()),
              r.offset() < start.checked ? Reading.AGAIN : Reading.DEFERRED);
          return r.offset() + 1;
        });
    doneReading(done);
  }

  /** Partitions read again to their end: what is consumed from them now is applied as it comes. */
  private void doneReading(Set<TopicPartition> done) {
    for (TopicPartition tp : done) {
      String prefix = Batches.prefix(tp.topic(), tp.partition());
      // Nothing to flush (every record refused or passed over now): nothing to read again.
      if (!batches.open().containsKey(prefix)) {
        starts.closed(prefix);
      }
    }
    if (replay != null && !replay.reading()) {
      // (A partition held back during a lookup, with nothing consumed meanwhile, read none.)
      LOG.atLevel(replay.records() > 0 ? Level.INFO : Level.DEBUG)
          .log(
              "Task {}: read the open batches again from the source topics: {} records ({} left out as"
                  + " before) in {}s",
              context.taskId(),
              replay.records(),
              replaySkipped,
              String.format("%.1f", replay.seconds()));
      closeReplay();
    }
  }

  private void closeReplay() {
    if (replay != null) {
      replay.close();
      replay = null;
    }
  }

  @Override
  public void close() {
    closeReplay();
    clearReportedWaits();
  }

  /** The waits this task reported end with it: its batches are read again where it starts next. */
  private void clearReportedWaits() {
    reportedWaits.forEach(health::clear);
    reportedWaits.clear();
  }

  private static void clear(KeyValueStore<String, BufferedChange> store) {
    List<String> keys = new ArrayList<>();
    try (KeyValueIterator<String, BufferedChange> it = store.all()) {
      it.forEachRemaining(e -> keys.add(e.key));
    }
    keys.forEach(k -> store.put(k, null));
  }

  /** A snapshot read's time is the snapshot's, not a commit's: only changes time the hop to Kafka. */
  private void hops(ChangeEvent event, long recordTimestamp, long now) {
    if (!event.source().snapshot()) {
      metrics.hops.record(Hop.SOURCE_TO_KAFKA, event.source().tsMs(), recordTimestamp);
    }
    metrics.hops.record(Hop.KAFKA_TO_INGEST, recordTimestamp, now);
  }

  /**
   * The punctuation: flushes the batches open for the flush interval, in their turns (oldest first,
   * a batch waiting for its partition's earlier batches after those opened before its last
   * attempt), until the round's time ({@code ingest.flush.round.budget.ms}) is spent; the rest
   * wait for the next.
   */
  private void flushDue(long nowMs) {
    readOpenBatchesAgain();
    List<Batches.Batch> due = new ArrayList<>();
    for (Batches.Batch batch : batches.open().values()) {
      // A batch whose lookup goes on is due whatever its age (a size limit may have started it).
      if (nowMs - batch.openedAtMs >= config.flushIntervalMs() || batch.lookup != null) {
        due.add(batch);
      }
    }
    due.sort(Comparator.comparingLong(b -> b.flushTurn(tickMs)));
    spentOutsideRoundsNs = 0;
    long started = System.nanoTime();
    for (int i = 0; i < due.size(); i++) {
      if (i > 0 && System.nanoTime() - started >= config.flushRoundBudgetMs() * 1_000_000) {
        metrics.flushesLeftForNextRound.increment(due.size() - i);
        progressLeftForNextRound += due.size() - i;
        LOG.debug(
            "Task {}: {} due batches left for the next round ({} ms spent flushing {})",
            context.taskId(),
            due.size() - i,
            (System.nanoTime() - started) / 1_000_000,
            i);
        break;
      }
      long spent = System.nanoTime() - started;
      flush(due.get(i), nowMs, true, Math.max(0, config.flushRoundBudgetMs() * 1_000_000 - spent));
    }
    fence.flushLog();
    if (nowMs - progressAtMs >= PROGRESS_EVERY_MS) {
      if (progressChanges > 0) {
        double seconds = (nowMs - progressAtMs) / 1000.0;
        LOG.info(
            "Task {}: {} changes in {}s ({}/s), {} batches flushed, {} batches open{}",
            context.taskId(),
            progressChanges,
            String.format("%.1f", seconds),
            String.format("%.0f", progressChanges / seconds),
            progressFlushes,
            batches.open().size(),
            progressLeftForNextRound == 0
                ? ""
                : ", " + progressLeftForNextRound + " due batches left to a later round (the"
                    + " rounds spent " + IngestConfig.FLUSH_ROUND_BUDGET_MS + ")");
      }
      progressAtMs = nowMs;
      progressChanges = 0;
      progressFlushes = 0;
      progressLeftForNextRound = 0;
    }
  }

  /**
   * A flush as a record comes (a size limit, memory, left-out records): the lookups of such
   * flushes between two punctuations share one round's budget ({@link #spentOutsideRoundsNs}), so
   * that many of them cannot together hold the task's transaction for long.
   */
  private void flush(Batches.Batch batch, long nowMs) {
    long started = System.nanoTime();
    flush(
        batch,
        nowMs,
        true,
        Math.max(0, config.flushRoundBudgetMs() * 1_000_000 - spentOutsideRoundsNs));
    spentOutsideRoundsNs += System.nanoTime() - started;
  }

  /**
   * Flushes the batch; with {@code mayWait} false, even before its partition's earlier batches are
   * on realtime, and with its lookup of previous rows read to the end. A lookup that has not ended
   * after {@code lookupBudgetNanos} goes on at the next attempt, the partition held back meanwhile.
   */
  private void flush(Batches.Batch batch, long nowMs, boolean mayWait, long lookupBudgetNanos) {
    if (mayWait && nowMs < batch.retryAtMs) {
      return;
    }
    List<Batches.Entry> entries = batches.entries(batch);
    BatchStarts.Start start = starts.get(batch.prefix());
    // Without a start (a batch an earlier version left in its stores) it cannot be held back.
    long budget = mayWait && start != null ? lookupBudgetNanos : Long.MAX_VALUE;
    BatchFlusher.Outcome outcome;
    try {
      outcome = flusher.flush(
          batch, entries, changelog, schemaTexts, flushedOffsets, mayWait, budget, nowMs);
    } catch (BadChangeException e) {
      // The table as it is now refuses the batch (it took a column of a name ingest cannot write
      // beside its own since the changes were admitted; it was dropped and cannot be made again
      // from them): its changes are dead-lettered, not retried on every attempt.
      outcome = BatchFlusher.refused(batch, entries, changelog, e.getMessage());
    }
    if (outcome instanceof BatchFlusher.Postponed postponed) {
      // The key's current row is on realtime only once the partition's earlier batches are.
      batch.retryAtMs = nowMs + tickMs;
      if (batch.postponedSinceMs < 0) {
        batch.postponedSinceMs = nowMs;
      }
      reportLongWait(batch, postponed, nowMs);
      LOG.debug(
          "Flush of {}-{} waits for its earlier batches on realtime (flushed up to offset {}, committed {})",
          batch.topic,
          batch.partition,
          postponed.lastFlushed(),
          postponed.committed());
      return;
    }
    if (outcome instanceof BatchFlusher.LookingUp lookingUp) {
      batch.retryAtMs = nowMs + tickMs;
      if (batch.postponedSinceMs < 0) {
        batch.postponedSinceMs = nowMs;
      }
      if (batch.lookingUpSinceMs < 0) {
        batch.lookingUpSinceMs = nowMs;
      }
      if (start != null) {
        hold(batch, start);
      }
      reportLongLookup(batch, nowMs);
      LOG.debug(
          "Flush of {}-{}: its lookup of previous rows goes on at the next attempt ({} so far)",
          batch.topic,
          batch.partition,
          lookingUp.steps());
      return;
    }
    BatchFlusher.Flushed flushed = (BatchFlusher.Flushed) outcome;
    for (BatchFlusher.DeadLetter letter : flushed.letters()) {
      BufferedChange change = letter.change();
      deadLetter(
          new Record<>(change.key(), change.value(), nowMs, new RecordHeaders()),
          letter.topic(),
          letter.partition(),
          change.offset(),
          letter.reason());
    }
    if (flushed.event() != null) {
      context.forward(
          new Record<Object, Object>(flushed.event().table(), flushed.event(), nowMs),
          FILES_WRITTEN_CHILD);
      handedOff();
      progressFlushes++;
    }
    batches.clear(batch, flushed.letters().isEmpty());
    ended(batch);
  }

  /**
   * Holds the batch's partition back while its flush's lookup goes on over several attempts: what
   * the task consumes from it meanwhile is not added (the batch's end moves past it, as for a
   * partition still being read again), so the batch the lookup is for stays as it is, and is read
   * from the source topic into the next batch once this one is flushed ({@link #ended}). A lookup
   * that let the batch grow would have new keys to look for at each attempt, and might never end.
   */
  private void hold(Batches.Batch batch, BatchStarts.Start start) {
    TopicPartition tp = new TopicPartition(batch.topic, batch.partition);
    if (replay == null) {
      replay = new SourceReplay(
          context.appConfigs(), config.applicationId() + "-" + context.taskId() + "-buffer-replay");
      replaySkipped = 0;
    }
    if (!replay.held(tp)) {
      LOG.info(
          "Task {}: the flush of {}-{} looks up the current rows of updates that left out-of-line"
              + " (TOAST) values unchanged over several attempts; the partition's later records"
              + " wait in the source topic until it is flushed",
          context.taskId(),
          batch.topic,
          batch.partition);
    }
    replay.hold(tp, start.end);
  }

  /**
   * Reports, once, a lookup of previous rows under way for {@link #FLUSH_WAIT_REPORTED_AFTER_MS}
   * or more: the partition's later changes wait in the source topic meanwhile, and must not outlast
   * its retention.
   */
  private void reportLongLookup(Batches.Batch batch, long nowMs) {
    long waited = nowMs - batch.lookingUpSinceMs;
    reportOnce(
        lookupSubject(batch),
        waited,
        () -> "the flush of " + batch.topic + "-" + batch.partition + "'s open batch ("
            + batch.keys + " keys) has looked up the current rows of updates that left"
            + " out-of-line (TOAST) values unchanged for " + waited / 60_000 + " min, and the"
            + " partition's later changes wait in the source topic until it is flushed"
            + " (they must not outlast the topic's retention). The table is too large to look rows"
            + " up in: set REPLICA IDENTITY FULL on it at the source, so PostgreSQL sends the values");
  }

  /**
   * Reports {@code what} under {@code subject} (logged, and on {@code /health} until the batch is
   * flushed) once it has gone on for {@link #FLUSH_WAIT_REPORTED_AFTER_MS}, once.
   */
  private void reportOnce(String subject, long waited, Supplier<String> what) {
    if (waited < FLUSH_WAIT_REPORTED_AFTER_MS || !reportedWaits.add(subject)) {
      return;
    }
    metrics.flushWaitsReported.increment();
    String text = what.get();
    LOG.error("Task {}: {}", context.taskId(), text);
    health.problem(subject, text);
  }

  /** Clears what {@link #reportOnce} reported under {@code subject}, saying how long it went on. */
  private void clearReport(Batches.Batch batch, String subject, String doing, long sinceMs) {
    if (reportedWaits.remove(subject)) {
      health.clear(subject);
      LOG.info(
          "Task {}: the flush of {}-{} went through after {} for {} s",
          context.taskId(),
          batch.topic,
          batch.partition,
          doing,
          (context.currentSystemTimeMs() - sinceMs) / 1000);
    }
  }

  private static String waitSubject(Batches.Batch batch) {
    return "ingest partition " + batch.topic + "-" + batch.partition;
  }

  private static String lookupSubject(Batches.Batch batch) {
    return waitSubject(batch) + " lookup";
  }

  /**
   * Reports, once, a flush postponed for {@link #FLUSH_WAIT_REPORTED_AFTER_MS} or more: the
   * partition's batches are stuck until the earlier batch is on realtime, and the open batch grows
   * on the heap meanwhile.
   */
  private void reportLongWait(Batches.Batch batch, BatchFlusher.Postponed postponed, long nowMs) {
    // Since the earlier batch was handed off, as the store says: a restart does not start it again.
    Long handedOff = flushedOffsets.lastFlushedAtMs(batch.topic, batch.partition);
    long since =
        handedOff == null ? batch.postponedSinceMs : Math.min(batch.postponedSinceMs, handedOff);
    long waited = nowMs - since;
    reportOnce(
        waitSubject(batch),
        waited,
        () -> "the flush of " + batch.topic + "-" + batch.partition + "'s open batch ("
            + batch.keys + " keys) has waited " + waited / 60_000 + " min for the partition's"
            + " earlier batches to be committed to " + Branches.REALTIME + ": it has changes"
            + " lacking unchanged TOAST values, which only the key's row on " + Branches.REALTIME
            + " has, and the partition was flushed up to offset " + postponed.lastFlushed()
            + " while " + Branches.REALTIME + " records offset " + postponed.committed()
            + ". Either the realtime committer cannot commit (its log and /health say why), or"
            + " the files-written event of"
            + " the batch up to offset " + postponed.lastFlushed() + " was lost (dead-lettered as"
            + " unreadable by realtime-commit): then its changes are not on the table, and the way on"
            + " is to drop the table and snapshot it again (README, \"When main differs from the"
            + " source\"). Until then the partition's changes stay in its open batch, on the heap");
  }

  /**
   * A TRUNCATE ends its partition's batch: the batch's changes, all before it, are dropped (their
   * change-log rows kept) and the truncate goes to the committer in the batch's place, ordered
   * after the partition's earlier batches and before its later ones.
   */
  private void truncate(
      Record<byte[], byte[]> record,
      String topic,
      int partition,
      long offset,
      ChangeEvent event,
      boolean logged) {
    try {
      BatchFlusher.truncatePosition(event);
    } catch (BadChangeException e) {
      refuse(record, topic, partition, offset, e.getMessage(), false);
      return;
    }
    long now = context.currentSystemTimeMs();
    Batches.Batch batch = batches.of(topic, partition, now);
    if (batch.topicId == null) {
      batch.topicId = topicId(topic, partition);
    }
    BufferedChange raw = new BufferedChange(
        offset,
        event.source().tsMs(),
        record.key() == null ? new byte[0] : record.key(),
        record.value());
    if (logged) {
      changelog.put(batch.prefix() + String.format("%020d", offset), schemaTexts.compact(raw));
    }
    List<Batches.Entry> entries = batches.entries(batch);
    FilesWritten written =
        flusher.truncate(batch, entries, changelog, schemaTexts, flushedOffsets, raw, event, now);
    context.forward(new Record<Object, Object>(written.table(), written, now), FILES_WRITTEN_CHILD);
    handedOff();
    batches.clear(batch, false);
    ended(batch);
  }

  /**
   * The batch was flushed or ended by a TRUNCATE: forgotten, or, while its partition is still read
   * again, the next batch starts where reading goes on.
   */
  private void ended(Batches.Batch batch) {
    clearReport(batch, lookupSubject(batch), "looking rows up", batch.lookingUpSinceMs);
    clearReport(
        batch, waitSubject(batch), "waiting for its earlier batches", batch.postponedSinceMs);
    TopicPartition tp = new TopicPartition(batch.topic, batch.partition);
    if (replay != null && replay.reading(tp)) {
      starts.restartAt(batch.prefix(), replay.next(tp));
      replay.release(tp);
    } else {
      starts.closed(batch.prefix());
    }
    legacy.cleared(batch.prefix());
  }

  /**
   * The highest offset of the partition committed to the table's realtime branch or its change log,
   * read once per partition per task (after that, only higher offsets arrive).
   */
  private long committedOffset(TableIdentifier id, String topic, int partition, boolean logged) {
    String prefix = Batches.prefix(topic, partition);
    Long known = committedOffsets.get(prefix);
    if (known != null) {
      return known;
    }
    Table table;
    try {
      table = tables.refresh(id);
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      // A TRUNCATE of a table no change has created yet: nothing of it is committed (not kept, the
      // table's first change reads it again).
      return logged ? loggedOffset(id, null, topic, partition) : -1L;
    }
    long offset = ofThisTopic(SourceOffsets.of(table, Branches.REALTIME), id, topic, partition);
    if (logged) {
      // Admission found the log (a change is logged only then): a table of that name now.
      offset = Math.max(offset, loggedOffset(id, table.uuid(), topic, partition));
    }
    committedOffsets.put(prefix, offset);
    return offset;
  }

  /**
   * The partition's highest offset committed to the change log of {@code id}, the table of UUID
   * {@code tableUuid} (null: none exists); -1 when the log is gone (dropped since admission found it
   * in the cache: its next flush makes it again, and none of the dropped log's offsets count), or
   * when its offsets are of another table of that name, dropped since (a table made again from the
   * source topic read from its start must take those changes). A log made again meanwhile is read
   * anew.
   */
  private long loggedOffset(TableIdentifier id, UUID tableUuid, String topic, int partition) {
    TableIdentifier logId = ChangeLog.of(id);
    Table log;
    try {
      log = tables.refresh(logId);
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      tables.forget(logId.toString());
      return -1L;
    }
    Optional<String> of = ChangeLog.loggedTableUuid(log);
    if (of.isPresent() && (tableUuid == null || !of.get().equals(tableUuid.toString()))) {
      LOG.info(
          "Change log {} holds the offsets of table {} {}, dropped since: they do not count for"
              + " {}'s changes",
          logId,
          id,
          of.get(),
          tableUuid == null ? "a table not made yet" : "table " + tableUuid);
      return -1L;
    }
    return ofThisTopic(SourceOffsets.of(log, SnapshotRef.MAIN_BRANCH), logId, topic, partition);
  }

  /**
   * The partition's committed offset in {@code offsets} when they are of the topic as it is now;
   * -1, with a warning, when they are of an earlier topic of that name (deleted and created again),
   * so that nothing of the new one is skipped as committed.
   */
  private long ofThisTopic(
      SourceOffsets offsets, TableIdentifier table, String topic, int partition) {
    String topicId = topicId(topic, partition);
    if (!offsets.follows(topic, topicId)) {
      metrics.topicRecreated.increment();
      LOG.warn(
          "Source topic {} was deleted and created again: its ID is {}, and {} holds the offsets of"
              + " the topic of ID {} (up to {} on partition {}), which do not apply to it; nothing"
              + " of the new topic is skipped as committed",
          topic,
          topicId,
          table,
          offsets.topicId(topic),
          offsets.last(topic, partition),
          partition);
    }
    return offsets.following(topic, topicId).last(topic, partition);
  }

  /**
   * The ID of the topic the partition is read from (looked up once per task start), or null when
   * unknown.
   */
  private String topicId(String topic, int partition) {
    String prefix = prefixes.of(topic, partition);
    String id = topicIds.get(prefix);
    if (id == null) {
      id = Objects.requireNonNullElse(sourceTopicIds.current(topic, startedAtMs), "");
      topicIds.put(prefix, id);
    }
    return id.isEmpty() ? null : id;
  }

  /**
   * A batch went to the committer: the transaction is committed at once ({@link
   * PipelineConfig#commitOnHandoff()}), since the committer reads the batch only then.
   */
  private void handedOff() {
    if (commitOnHandoff) {
      context.commit();
    }
  }

  private void deadLetter(
      Record<byte[], byte[]> record, String topic, int partition, long offset, String reason) {
    metrics.deadLettered.increment();
    LOG.warn("Dead-lettered {}-{}@{}: {}", topic, partition, offset, reason);
    var letter = DeadLetters.of(record, topic, partition, offset, "ingest", reason);
    context.forward(
        new Record<Object, Object>(
            letter.key(), letter.value(), letter.timestamp(), letter.headers()),
        DEAD_LETTER_CHILD);
  }
}
