package dev.lakestream.ingest.buffer;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.iceberg.TableNaming;
import dev.lakestream.common.schema.RowConverter;
import dev.lakestream.common.schema.RowShape;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.ingest.changelog.ChangeLog;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.ingest.dlq.DeadLetters;
import dev.lakestream.ingest.fence.SourceFence;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
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
 * <p>Per key only the latest change of a batch survives, so the store holds one entry per key. A
 * batch is flushed when it reaches {@code ingest.flush.max.rows} keys or {@code
 * ingest.flush.max.bytes}, or {@code ingest.flush.interval.ms} after its first change.
 *
 * <p>Changes a source connector published again after a restart are dropped by their source
 * position ({@link SourceFence}) once they are known to be applicable.
 *
 * <p>A record that cannot be applied (malformed, no key, unknown op, a type or schema change the
 * table cannot take) goes to the dead-letter child with the reason; the records after it flow on.
 * The table's schema is evolved here, when a record first needs it, so every buffered change fits
 * the table when its batch is written.
 */
public final class ChangeBuffer implements Processor<byte[], byte[], Object, Object> {

  public static final String STORE = "change-buffer";
  /** Every change of the open batches of tables that keep a change log, by partition and offset. */
  public static final String CHANGELOG_STORE = "changelog-buffer";
  public static final String FILES_WRITTEN_CHILD = "files-written";
  public static final String DEAD_LETTER_CHILD = "dead-letters";

  private static final Logger LOG = LoggerFactory.getLogger(ChangeBuffer.class);
  private static final char SEP = '\u0000';
  private static final long PROGRESS_EVERY_MS = 10_000;

  private final IngestConfig config;
  private final TableManager tables;
  private final TableNaming naming;
  private final DebeziumDecoder decoder = new DebeziumDecoder();
  private final RowShape.Resolver shapes = new RowShape.Resolver();
  private final Map<String, Batch> batches = new HashMap<>();
  /** Key columns by table and schema id. */
  private final Map<TableIdentifier, Map<Integer, Types.StructType>> keyTypes = new HashMap<>();
  /** Shapes (the resolver returns one instance per schema) each table already holds. */
  private final Map<TableIdentifier, Set<RowShape>> accepted = new HashMap<>();

  private final Counter changesIn;
  private final Counter tombstones;
  private final Counter alreadyCommitted;
  /** Per source partition: the highest offset the table (and its change log) already holds. */
  private final Map<String, Long> committedOffsets = new HashMap<>();
  private final Counter deadLettered;
  private final Counter flushes;
  private final Counter rowsWritten;
  private final Counter keysWritten;
  private final Counter filesWritten;
  private final Counter bytesWritten;
  private final Timer flushTime;
  private final MeterRegistry meters;
  private final AtomicLong flushSeq = new AtomicLong();

  private ProcessorContext<Object, Object> context;
  private KeyValueStore<String, BufferedChange> store;
  private KeyValueStore<String, BufferedChange> changelog;
  private final Map<TableIdentifier, Boolean> logged = new HashMap<>();
  private SourceFence fence;
  private long progressAtMs;
  private long progressChanges;
  private long progressFlushes;

  /** What the buffer knows of one source partition's open batch. */
  private static final class Batch {
    final String topic;
    final int partition;
    final long openedAtMs;
    long keys;
    long bytes;

    Batch(String topic, int partition, long openedAtMs) {
      this.topic = topic;
      this.partition = partition;
      this.openedAtMs = openedAtMs;
    }
  }

  public ChangeBuffer(IngestConfig config, TableManager tables, MeterRegistry meters) {
    this.config = config;
    this.tables = tables;
    this.naming = config.tableNaming();
    this.changesIn = meters.counter("lakestream.ingest.changes");
    this.tombstones = meters.counter("lakestream.ingest.tombstones");
    this.alreadyCommitted = meters.counter("lakestream.ingest.already.committed");
    this.deadLettered = meters.counter("lakestream.ingest.dead.letters");
    this.flushes = meters.counter("lakestream.ingest.flushes");
    this.rowsWritten = meters.counter("lakestream.ingest.rows.written");
    this.keysWritten = meters.counter("lakestream.ingest.delete.keys.written");
    this.filesWritten = meters.counter("lakestream.ingest.files.written");
    this.bytesWritten = meters.counter("lakestream.ingest.bytes.written");
    this.flushTime = meters.timer("lakestream.ingest.flush.duration");
    this.meters = meters;
  }

  @Override
  public void init(ProcessorContext<Object, Object> context) {
    this.context = context;
    this.store = context.getStateStore(STORE);
    this.changelog = context.getStateStore(CHANGELOG_STORE);
    this.fence = new SourceFence(context.getStateStore(SourceFence.STORE), meters);
    restoreBatches();
    progressAtMs = context.currentSystemTimeMs();
    long tick = Math.max(10, Math.min(100, config.flushIntervalMs() / 4));
    context.schedule(Duration.ofMillis(tick), PunctuationType.WALL_CLOCK_TIME, this::flushDue);
  }

  /** Rebuilds the open batches' bookkeeping from the store after a restart or a rebalance. */
  private void restoreBatches() {
    long now = context.currentSystemTimeMs();
    try (KeyValueIterator<String, BufferedChange> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<String, BufferedChange> entry = it.next();
        String key = entry.key;
        int first = key.indexOf(SEP);
        int second = key.indexOf(SEP, first + 1);
        String topic = key.substring(0, first);
        int partition = Integer.parseInt(key.substring(first + 1, second));
        Batch batch = batches.computeIfAbsent(prefix(topic, partition), p -> new Batch(topic, partition, now));
        batch.keys++;
        batch.bytes += entry.value.sizeInBytes();
      }
    }
    if (!batches.isEmpty()) {
      LOG.info("Restored {} open batch(es) of task {}", batches.size(), context.taskId());
    }
  }

  @Override
  public void process(org.apache.kafka.streams.processor.api.Record<byte[], byte[]> record) {
    RecordMetadata meta = context.recordMetadata().orElseThrow();
    changesIn.increment();
    progressChanges++;
    ChangeEvent event;
    TableIdentifier id;
    try {
      id = naming.tableFor(meta.topic());
      Optional<ChangeEvent> decoded = decoder.decode(record.key(), record.value());
      if (decoded.isEmpty()) {
        tombstones.increment();
        return;
      }
      event = decoded.get();
      RowShape shape = shapes.of(event);
      Set<RowShape> acceptedOfTable = accepted.computeIfAbsent(id, t -> Collections.newSetFromMap(new IdentityHashMap<>()));
      Table table;
      if (acceptedOfTable.contains(shape)) {
        table = tables.table(id);
      } else {
        table = tables.ensure(id, shape.type(), shape.keyColumns(), shape.fingerprint());
        acceptedOfTable.add(shape);
      }
      // Convert now so a value that does not fit its column is dead-lettered, not found at flush.
      checkConvertible(event, id, table.schema());
      if (logged.computeIfAbsent(id, config::changelogFor)) {
        ChangeLog.ensure(tables, id);
      }
    } catch (BadChangeException | IllegalArgumentException e) {
      deadLetter(record, meta, e.getMessage());
      return;
    }
    // Offsets the table already holds come back only when ingest's consumer offsets were reset:
    // skipping them keeps every batch above what is committed.
    if (meta.offset() <= committedOffset(id, meta.topic(), meta.partition())) {
      alreadyCommitted.increment();
      return;
    }
    // After the checks: the fence holds the highest position applied, and a bad record applies nothing.
    if (config.sourceFence() && !fence.admit(meta.topic(), meta.partition(), meta.offset(), event,
        record.headers().lastHeader(SourceFence.OLD_KEY_HEADER) != null)) {
      return;
    }
    String prefix = prefix(meta.topic(), meta.partition());
    BufferedChange change = new BufferedChange(meta.offset(), event.source().tsMs(), record.key(), record.value());
    String storeKey = prefix + event.key().toString();
    BufferedChange previous = store.get(storeKey);
    store.put(storeKey, change);
    Batch batch =
        batches.computeIfAbsent(
            prefix, p -> new Batch(meta.topic(), meta.partition(), context.currentSystemTimeMs()));
    if (previous == null) {
      batch.keys++;
    } else {
      batch.bytes -= previous.sizeInBytes();
    }
    batch.bytes += change.sizeInBytes();
    if (logged.get(id)) {
      changelog.put(prefix + String.format("%020d", meta.offset()), change);
      batch.bytes += change.sizeInBytes();
    }
    if (batch.keys >= config.flushMaxRows() || batch.bytes >= config.flushMaxBytes()) {
      flush(prefix, batch);
    }
  }

  private void flushDue(long nowMs) {
    for (Map.Entry<String, Batch> e : new ArrayList<>(batches.entrySet())) {
      if (nowMs - e.getValue().openedAtMs >= config.flushIntervalMs()) {
        flush(e.getKey(), e.getValue());
      }
    }
    fence.flushLog();
    if (nowMs - progressAtMs >= PROGRESS_EVERY_MS) {
      if (progressChanges > 0) {
        double seconds = (nowMs - progressAtMs) / 1000.0;
        LOG.info(
            "Task {}: {} changes in {}s ({}/s), {} batches flushed, {} batches open",
            context.taskId(), progressChanges, String.format("%.1f", seconds),
            String.format("%.0f", progressChanges / seconds), progressFlushes, batches.size());
      }
      progressAtMs = nowMs;
      progressChanges = 0;
      progressFlushes = 0;
    }
  }

  private void flush(String prefix, Batch batch) {
    long started = System.nanoTime();
    TableIdentifier id = naming.tableFor(batch.topic);
    Table table = tables.table(id);
    Schema schema = table.schema();
    Types.StructType keyType = keyType(id, schema);
    List<Record> rows = new ArrayList<>();
    List<Record> keys = new ArrayList<>();
    List<String> storeKeys = new ArrayList<>();
    long firstOffset = Long.MAX_VALUE;
    long lastOffset = Long.MIN_VALUE;
    long maxTs = -1;
    try (KeyValueIterator<String, BufferedChange> it = store.prefixScan(prefix, Serdes.String().serializer())) {
      while (it.hasNext()) {
        KeyValue<String, BufferedChange> entry = it.next();
        BufferedChange change = entry.value;
        ChangeEvent event = decoder.decode(change.key(), change.value()).orElseThrow();
        if (event.op().leavesRow()) {
          rows.add(RowConverter.toRecord(event.after(), event.rowSchema(), schema.asStruct()));
        }
        keys.add(keyRecord(event, keyType));
        storeKeys.add(entry.key);
        firstOffset = Math.min(firstOffset, change.offset());
        lastOffset = Math.max(lastOffset, change.offset());
        maxTs = Math.max(maxTs, change.sourceTsMs());
      }
    }
    batches.remove(prefix);
    if (storeKeys.isEmpty()) {
      return;
    }
    long taskId = flushSeq.incrementAndGet();
    BatchWriter.Written written = BatchWriter.write(table, schema, rows, keys, batch.partition, taskId);
    var specs = table.specs();
    String logName = null;
    List<com.fasterxml.jackson.databind.JsonNode> logFiles = List.of();
    List<String> logKeys = new ArrayList<>();
    if (logged.computeIfAbsent(id, config::changelogFor)) {
      Table log = ChangeLog.ensure(tables, id);
      List<Record> logRows = new ArrayList<>();
      try (KeyValueIterator<String, BufferedChange> it = changelog.prefixScan(prefix, Serdes.String().serializer())) {
        while (it.hasNext()) {
          KeyValue<String, BufferedChange> entry = it.next();
          BufferedChange change = entry.value;
          ChangeEvent event = decoder.decode(change.key(), change.value()).orElseThrow();
          logRows.add(ChangeLog.row(event, change.value(), batch.topic, batch.partition, change.offset()));
          logKeys.add(entry.key);
        }
      }
      logName = ChangeLog.of(id).toString();
      if (!logRows.isEmpty()) {
        var logFile = ChangeLog.write(log, logRows, batch.partition, taskId);
        logFiles = List.of(ContentFiles.toJson(logFile, log.specs().get(logFile.specId())));
      }
    }
    FilesWritten event =
        new FilesWritten(
            id.toString(),
            batch.topic,
            batch.partition,
            firstOffset,
            lastOffset,
            storeKeys.size(),
            rows.size(),
            keys.size(),
            maxTs,
            written.dataFiles().stream().map(f -> ContentFiles.toJson(f, specs.get(f.specId()))).toList(),
            written.deleteFiles().stream().map(f -> ContentFiles.toJson(f, specs.get(f.specId()))).toList(),
            context.currentSystemTimeMs(),
            logName,
            logFiles);
    context.forward(
        new org.apache.kafka.streams.processor.api.Record<Object, Object>(
            id.toString(), event, context.currentSystemTimeMs()),
        FILES_WRITTEN_CHILD);
    storeKeys.forEach(store::delete);
    logKeys.forEach(changelog::delete);

    flushes.increment();
    progressFlushes++;
    rowsWritten.increment(rows.size());
    keysWritten.increment(keys.size());
    filesWritten.increment(written.dataFiles().size() + written.deleteFiles().size());
    bytesWritten.increment(written.bytes());
    long tookNs = System.nanoTime() - started;
    flushTime.record(Duration.ofNanos(tookNs));
    LOG.debug(
        "Flushed {}-{} offsets {}..{} to {}: {} rows, {} delete keys, {} bytes in {} ms",
        batch.topic, batch.partition, firstOffset, lastOffset, id, rows.size(), keys.size(), written.bytes(),
        tookNs / 1_000_000);
  }

  /**
   * The highest offset of the partition committed to the table's realtime branch or its change log,
   * read once per partition per task (after that, only higher offsets arrive).
   */
  private long committedOffset(TableIdentifier id, String topic, int partition) {
    return committedOffsets.computeIfAbsent(prefix(topic, partition), p -> {
      Table table = tables.refresh(id);
      long offset = SourceOffsets.of(table, Branches.REALTIME).last(topic, partition);
      if (logged.getOrDefault(id, false)) {
        Table log = ChangeLog.ensure(tables, id);
        log.refresh();
        offset = Math.max(offset, SourceOffsets.of(log, SnapshotRef.MAIN_BRANCH).last(topic, partition));
      }
      return offset;
    });
  }

  /** Converts the change's row and key, throwing {@link BadChangeException} when they do not fit. */
  private void checkConvertible(ChangeEvent event, TableIdentifier id, Schema schema) {
    if (event.op().leavesRow()) {
      RowConverter.toRecord(event.after(), event.rowSchema(), schema.asStruct());
    }
    keyRecord(event, keyType(id, schema));
  }

  /** The key columns of a table schema; computed once per schema version, not per record. */
  private Types.StructType keyType(TableIdentifier id, Schema schema) {
    return keyTypes
        .computeIfAbsent(id, t -> new HashMap<>())
        .computeIfAbsent(schema.schemaId(), i -> TypeUtil.select(schema, schema.identifierFieldIds()).asStruct());
  }

  private static Record keyRecord(ChangeEvent event, Types.StructType keyType) {
    return RowConverter.toRecord(event.key(), event.keySchema(), keyType);
  }

  private void deadLetter(
      org.apache.kafka.streams.processor.api.Record<byte[], byte[]> record, RecordMetadata meta, String reason) {
    deadLettered.increment();
    LOG.warn("Dead-lettered {}-{}@{}: {}", meta.topic(), meta.partition(), meta.offset(), reason);
    var letter = DeadLetters.of(record, meta.topic(), meta.partition(), meta.offset(), "ingest", reason);
    context.forward(
        new org.apache.kafka.streams.processor.api.Record<Object, Object>(
            letter.key(), letter.value(), letter.timestamp(), letter.headers()),
        DEAD_LETTER_CHILD);
  }

  private static String prefix(String topic, int partition) {
    return topic + SEP + partition + SEP;
  }
}
