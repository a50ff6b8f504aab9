package dev.lakestream.ingest.buffer;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ChangeOp;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.changelog.ChangeLog;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.ingest.fence.SourceFence;
import dev.lakestream.ingest.toast.UnavailableValues;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Buffers the changes of its task's source partitions and flushes each partition's batch as files
 * of the table: one data file with the latest after-image of every key whose last change leaves a
 * row, one equality-delete file with every key of the batch (an upsert: the key's older row,
 * wherever it is, must go). The flush forwards a {@link FilesWritten} keyed by table and clears the
 * batch; the Kafka transaction that commits the task makes both happen together or not at all.
 *
 * <p>The roles: {@link Admission} decides whether a record can be applied and to which table;
 * {@link SourceFence} drops what the source connector published again; {@link Batches} keeps one
 * batch per partition in the state store, the latest change per key; {@link BatchFlusher} writes a
 * batch. A batch is flushed when it reaches {@code ingest.flush.max.rows} keys or {@code
 * ingest.flush.max.bytes}, or {@code ingest.flush.interval.ms} after its first change.
 *
 * <p>A record that cannot be applied (malformed, no key, unknown op, a type, value or schema change
 * the table cannot take, an unchanged TOAST value with no previous row) goes to the dead-letter
 * child with the reason; the records after it flow on. Nothing a record holds can stop the thread.
 */
public final class ChangeBuffer implements Processor<byte[], byte[], Object, Object> {

  public static final String STORE = "change-buffer";
  /** Every change of the open batches of tables that keep a change log, by partition and offset. */
  public static final String CHANGELOG_STORE = "changelog-buffer";
  /** The schema texts the entries of the two stores above refer to ({@link SchemaTexts}). */
  public static final String SCHEMA_STORE = SchemaTexts.STORE;
  /** The last offset each source partition flushed. */
  public static final String FLUSHED_STORE = BatchFlusher.FLUSHED_STORE;

  public static final String FILES_WRITTEN_CHILD = "files-written";
  public static final String DEAD_LETTER_CHILD = "dead-letters";

  private static final Logger LOG = LoggerFactory.getLogger(ChangeBuffer.class);
  private static final long PROGRESS_EVERY_MS = 10_000;

  private final IngestConfig config;
  private final TableManager tables;
  private final IngestMetrics metrics;
  private final MeterRegistry meters;
  private final Admission admission;
  private final UnavailableValues unavailable;
  private final BatchFlusher flusher;
  /** Per source partition: the highest offset the table (and its change log) already holds. */
  private final Map<String, Long> committedOffsets = new HashMap<>();

  private ProcessorContext<Object, Object> context;
  private Batches batches;
  private SchemaTexts schemaTexts;
  private KeyValueStore<String, BufferedChange> changelog;
  private KeyValueStore<String, Long> flushedOffsets;
  private SourceFence fence;
  private long tickMs;
  private long progressAtMs;
  private long progressChanges;
  private long progressFlushes;

  public ChangeBuffer(IngestConfig config, TableManager tables, MeterRegistry meters) {
    this.config = config;
    this.tables = tables;
    this.meters = meters;
    this.metrics = new IngestMetrics(meters);
    this.admission = new Admission(config, tables);
    this.unavailable = new UnavailableValues(config.unavailableValuePlaceholder());
    this.flusher = new BatchFlusher(config, tables, admission, unavailable, metrics);
  }

  @Override
  public void init(ProcessorContext<Object, Object> context) {
    this.context = context;
    this.schemaTexts = new SchemaTexts(context.getStateStore(SCHEMA_STORE));
    this.batches = new Batches(
        context.getStateStore(STORE), schemaTexts, admission.decoder(), unavailable, metrics);
    this.changelog = context.getStateStore(CHANGELOG_STORE);
    this.flushedOffsets = context.getStateStore(FLUSHED_STORE);
    this.fence = new SourceFence(context.getStateStore(SourceFence.STORE), meters);
    int restored = batches.restore(context.currentSystemTimeMs());
    if (restored > 0) {
      LOG.info("Restored {} open batch(es) of task {}", restored, context.taskId());
    }
    progressAtMs = context.currentSystemTimeMs();
    tickMs = Math.max(10, Math.min(100, config.flushIntervalMs() / 4));
    context.schedule(Duration.ofMillis(tickMs), PunctuationType.WALL_CLOCK_TIME, this::flushDue);
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    RecordMetadata meta = context.recordMetadata().orElseThrow();
    metrics.changesIn.increment();
    progressChanges++;
    Admission.Admitted admitted;
    try {
      var result = admission.admit(meta.topic(), record.key(), record.value());
      if (result.isEmpty()) {
        metrics.tombstones.increment();
        return;
      }
      admitted = result.get();
    } catch (BadChangeException e) {
      deadLetter(record, meta.topic(), meta.partition(), meta.offset(), e.getMessage());
      return;
    }
    ChangeEvent event = admitted.event();
    // Offsets the table already holds come back only when ingest's consumer offsets were reset:
    // skipping them keeps every batch above what is committed.
    if (meta.offset()
        <= committedOffset(admitted.table(), meta.topic(), meta.partition(), admitted.logged())) {
      metrics.alreadyCommitted.increment();
      return;
    }
    Header oldKey = record.headers().lastHeader(SourceFence.OLD_KEY_HEADER);
    // After the checks: the fence holds the highest position applied, and a bad record applies
    // nothing.
    if (config.sourceFence()
        && !fence.admit(meta.topic(), meta.partition(), meta.offset(), event, oldKey != null)) {
      return;
    }
    long now = context.currentSystemTimeMs();
    if (event.op() == ChangeOp.TRUNCATE) {
      hops(event, record.timestamp(), now);
      truncate(record, meta, event, admitted.logged());
      return;
    }
    Batches.Batch batch;
    try {
      batch = batches.add(
          meta.topic(),
          meta.partition(),
          meta.offset(),
          admitted,
          record.key(),
          record.value(),
          oldKey == null ? null : oldKey.value(),
          !event.op().leavesRow() && record.headers().lastHeader(Batches.NEW_KEY_HEADER) != null,
          now);
    } catch (BadChangeException e) {
      deadLetter(record, meta.topic(), meta.partition(), meta.offset(), e.getMessage());
      return;
    }
    hops(event, record.timestamp(), now);
    if (admitted.logged()) {
      BufferedChange raw =
          new BufferedChange(meta.offset(), event.source().tsMs(), record.key(), record.value());
      changelog.put(
          batch.prefix() + String.format("%020d", meta.offset()), schemaTexts.compact(raw));
      batch.bytes += raw.sizeInBytes();
    }
    if (batch.keys >= config.flushMaxRows() || batch.bytes >= config.flushMaxBytes()) {
      flush(batch, now);
    }
  }

  /** A snapshot read's time is the snapshot's, not a commit's: only changes time the hop to Kafka. */
  private void hops(ChangeEvent event, long recordTimestamp, long now) {
    if (!event.source().snapshot()) {
      metrics.hops.record(Hop.SOURCE_TO_KAFKA, event.source().tsMs(), recordTimestamp);
    }
    metrics.hops.record(Hop.KAFKA_TO_INGEST, recordTimestamp, now);
  }

  private void flushDue(long nowMs) {
    for (Batches.Batch batch : new ArrayList<>(batches.open().values())) {
      if (nowMs - batch.openedAtMs >= config.flushIntervalMs()) {
        flush(batch, nowMs);
      }
    }
    fence.flushLog();
    if (nowMs - progressAtMs >= PROGRESS_EVERY_MS) {
      if (progressChanges > 0) {
        double seconds = (nowMs - progressAtMs) / 1000.0;
        LOG.info(
            "Task {}: {} changes in {}s ({}/s), {} batches flushed, {} batches open",
            context.taskId(),
            progressChanges,
            String.format("%.1f", seconds),
            String.format("%.0f", progressChanges / seconds),
            progressFlushes,
            batches.open().size());
      }
      progressAtMs = nowMs;
      progressChanges = 0;
      progressFlushes = 0;
    }
  }

  private void flush(Batches.Batch batch, long nowMs) {
    if (nowMs < batch.retryAtMs) {
      return;
    }
    List<Batches.Entry> entries = batches.entries(batch);
    BatchFlusher.Outcome outcome =
        flusher.flush(batch, entries, changelog, schemaTexts, flushedOffsets, nowMs);
    if (outcome instanceof BatchFlusher.Postponed postponed) {
      // The key's current row is on realtime only once the partition's earlier batches are.
      batch.retryAtMs = nowMs + tickMs;
      LOG.debug(
          "Flush of {}-{} waits for its earlier batches on realtime (flushed up to offset {}, committed {})",
          batch.topic,
          batch.partition,
          postponed.lastFlushed(),
          postponed.committed());
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
      progressFlushes++;
    }
    batches.clear(batch, entries);
  }

  /**
   * A TRUNCATE ends its partition's batch: the batch's changes, all before it, are dropped (their
   * change-log rows kept) and the truncate goes to the committer in the batch's place, ordered
   * after the partition's earlier batches and before its later ones.
   */
  private void truncate(
      Record<byte[], byte[]> record, RecordMetadata meta, ChangeEvent event, boolean logged) {
    try {
      BatchFlusher.truncatePosition(event);
    } catch (BadChangeException e) {
      deadLetter(record, meta.topic(), meta.partition(), meta.offset(), e.getMessage());
      return;
    }
    long now = context.currentSystemTimeMs();
    Batches.Batch batch = batches.of(meta.topic(), meta.partition(), now);
    BufferedChange raw = new BufferedChange(
        meta.offset(),
        event.source().tsMs(),
        record.key() == null ? new byte[0] : record.key(),
        record.value());
    if (logged) {
      changelog.put(
          batch.prefix() + String.format("%020d", meta.offset()), schemaTexts.compact(raw));
    }
    List<Batches.Entry> entries = batches.entries(batch);
    FilesWritten written =
        flusher.truncate(batch, entries, changelog, schemaTexts, flushedOffsets, raw, event, now);
    context.forward(new Record<Object, Object>(written.table(), written, now), FILES_WRITTEN_CHILD);
    batches.clear(batch, entries);
  }

  /**
   * The highest offset of the partition committed to the table's realtime branch or its change log,
   * read once per partition per task (after that, only higher offsets arrive).
   */
  private long committedOffset(TableIdentifier id, String topic, int partition, boolean logged) {
    return committedOffsets.computeIfAbsent(Batches.prefix(topic, partition), p -> {
      Table table = tables.refresh(id);
      long offset = SourceOffsets.of(table, Branches.REALTIME).last(topic, partition);
      if (logged) {
        Table log = ChangeLog.ensure(tables, id);
        log.refresh();
        offset =
            Math.max(offset, SourceOffsets.of(log, SnapshotRef.MAIN_BRANCH).last(topic, partition));
      }
      return offset;
    });
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
