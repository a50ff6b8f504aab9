package dev.lakestream.ingest.buffer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.common.schema.RowConverter;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.changelog.ChangeLog;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.ingest.toast.PreviousRows;
import dev.lakestream.ingest.toast.UnavailableValues;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one partition's open batch as files of its table: a data file with the latest row of every
 * key whose last change leaves one, an equality-delete file with every key of the batch, and the
 * change-log rows when the table keeps a log. Returns the {@link FilesWritten} to forward.
 *
 * <p>Changes that still lack unchanged TOAST values take them from the key's current row on {@code
 * realtime} ({@link PreviousRows}). That row is current only once every earlier batch of the
 * partition is committed there: until the realtime branch records the last offset flushed before,
 * the flush is postponed (the batch stays open and keeps growing). A change whose previous row is
 * not on the branch is dead-lettered, and the rest of the batch is written. A lookup that does not
 * end within its budget goes on at the next attempt ({@link LookingUp}).
 */
final class BatchFlusher {

  /** How a flush ended. */
  sealed interface Outcome permits Flushed, Postponed, LookingUp {}

  /** The batch is written (or was empty); {@code letters} are the changes refused at flush. */
  record Flushed(FilesWritten event, List<DeadLetter> letters) implements Outcome {}

  /** The partition's earlier batches are not on realtime yet; try again later. */
  record Postponed(long lastFlushed, long committed) implements Outcome {}

  /**
   * The lookup of previous rows (unchanged TOAST values) spent its budget: it goes on at the next
   * attempt, where it stopped ({@link Batches.Batch#lookup}), while the batch stays as it is.
   */
  record LookingUp(int steps) implements Outcome {}

  /** A change refused at flush, with where it came from and why. */
  record DeadLetter(String topic, int partition, BufferedChange change, String reason) {}

  private static final Logger LOG = LoggerFactory.getLogger(BatchFlusher.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A lookup of previous rows this long is reported (the transaction timeout is a minute). */
  private static final long SLOW_LOOKUP_MS = 10_000;

  private final IngestConfig config;
  private final TableManager tables;
  private final Admission admission;
  private final DebeziumDecoder decoder;
  private final UnavailableValues unavailable;
  private final IngestMetrics metrics;
  private final AtomicLong flushSeq = new AtomicLong();

  BatchFlusher(
      IngestConfig config,
      TableManager tables,
      Admission admission,
      UnavailableValues unavailable,
      IngestMetrics metrics) {
    this.config = config;
    this.tables = tables;
    this.admission = admission;
    this.decoder = admission.decoder();
    this.unavailable = unavailable;
    this.metrics = metrics;
  }

  /** A change of the batch, decoded, with the columns it still lacks. */
  private record Pending(Batches.Entry entry, ChangeEvent event, Set<String> missing) {

    /**
     * The row to write: admission's conversion when it was to the same struct (the same columns,
     * ids and types), else converted now.
     */
    Record row(Types.StructType withPosition) {
      Admission.Admitted d = entry.decoded();
      if (d != null
          && d.row() != null
          && (d.rowType() == withPosition || withPosition.equals(d.rowType()))) {
        return d.row();
      }
      return RowConverter.toRecord(event.afterImage(), event.rowSchema(), withPosition);
    }
  }

  private ChangeEvent decode(BufferedChange change) {
    return decoder.decode(change.key(), change.value()).orElseThrow();
  }

  /** The source table the first change of {@code entries} names (read from its bytes). */
  private static Optional<SourceTable> sourceOf(List<Batches.Entry> entries) {
    return entries.stream()
        .filter(e -> !e.movedOut())
        .findFirst()
        .flatMap(e -> SourceTable.of(e.change().value()));
  }

  /**
   * The batch refused whole at flush: each of its changes a dead letter, nothing written, its
   * change-log rows dropped (they would be taken for the partition's next batch's).
   */
  static Flushed refused(
      Batches.Batch batch,
      List<Batches.Entry> entries,
      KeyValueStore<String, BufferedChange> changelog,
      String reason) {
    List<String> logKeys = new ArrayList<>();
    try (KeyValueIterator<String, BufferedChange> it =
        changelog.prefixScan(batch.prefix(), Serdes.String().serializer())) {
      it.forEachRemaining(e -> logKeys.add(e.key));
    }
    logKeys.forEach(k -> changelog.put(k, null)); // a delete that does not read first
    String why = "the batch of " + batch.topic + "-" + batch.partition + " holding this change"
        + " cannot be written: " + reason;
    LOG.error(
        "Dead-lettering the {} change(s) of a batch of {}-{}: {}",
        entries.size(),
        batch.topic,
        batch.partition,
        reason);
    return new Flushed(
        null,
        entries.stream()
            .filter(e -> !e.movedOut()) // not the batch's to write
            .map(e -> new DeadLetter(batch.topic, batch.partition, e.change(), why))
            .toList());
  }

  Outcome flush(
      Batches.Batch batch,
      List<Batches.Entry> entries,
      KeyValueStore<String, BufferedChange> changelog,
      SchemaTexts schemaTexts,
      FlushedOffsets flushedOffsets,
      boolean mayWait,
      long lookupBudgetNanos,
      long nowMs) {
    long started = System.nanoTime();
    String topicId = batch.topicId;
    TableIdentifier id = admission.tableOf(batch.topic, () -> sourceOf(entries));
    List<Pending> changes = new ArrayList<>();
    boolean lookups = false;
    for (Batches.Entry entry : entries) {
      if (entry.movedOut()) {
        continue;
      }
      ChangeEvent event = entry.decoded() != null
          ? entry.decoded().event()
          : schemaTexts.decode(entry.held(), decoder);
      Set<String> missing = unavailable.columns(event, entry.previousKey() != null);
      lookups |= !missing.isEmpty();
      changes.add(new Pending(entry, event, missing));
    }
    Table table = changes.isEmpty()
        ? tables.table(id)
        : admission.tableFor(id, changes.stream().map(Pending::event).toList());
    if (lookups) {
      table = current(id, changes, table);
      SourceOffsets offsets = SourceOffsets.of(table, Branches.REALTIME);
      Long lastFlushed =
          flushedOffsets.lastFlushed(batch.topic, batch.partition, topicId, offsets, table.uuid());
      long committed = offsets.following(batch.topic, topicId).last(batch.topic, batch.partition);
      if (mayWait && lastFlushed != null && committed < lastFlushed) {
        metrics.flushesPostponed.increment();
        return new Postponed(lastFlushed, committed);
      }
    }
    Schema schema = table.schema();
    Types.StructType keyType = admission.keyType(table);
    Types.StructType withPosition = admission.rowType(table);
    List<DeadLetter> letters = new ArrayList<>();
    List<Record> rows = new ArrayList<>();
    List<Record> keys = new ArrayList<>();
    Span span = new Span();
    List<Record> previous = null;
    if (lookups) {
      previous = fillFromTable(table, keyType, changes, letters, batch, lookupBudgetNanos);
      if (previous == null) {
        metrics.previousRowLookupsResumed.increment();
        return new LookingUp(batch.lookup == null ? 0 : batch.lookup.steps());
      }
    } else {
      batch.lookup = null;
    }
    for (int i = 0; i < changes.size(); i++) {
      Pending p = changes.get(i);
      ByteBuffer position = span.add(p.entry().offset(), p.entry().sourceTsMs(), p.event());
      if (previous != null && previous.get(i) == null && !p.missing().isEmpty()) {
        continue; // dead-lettered: its row stays as it was
      }
      if (p.event().op().leavesRow()) {
        Record row = p.row(withPosition);
        for (String column : p.missing()) {
          row.setField(column, previous.get(i).getField(column));
        }
        row.setField(SourcePositions.NAME, position);
        rows.add(row);
      }
      keys.add(Admission.keyRecord(p.event(), keyType));
    }

    FilesWritten written = null;
    if (!changes.isEmpty()) {
      written = write(
          id, table, schema, batch, rows, keys, changelog, schemaTexts, span, null, null, nowMs);
      flushedOffsets.flushed(
          batch.topic, batch.partition, span.lastOffset, topicId, table.uuid(), nowMs);
      metrics.flushes.increment();
      metrics.rowsWritten.increment(rows.size());
      metrics.keysWritten.increment(keys.size());
      metrics.flushTime.record(Duration.ofNanos(System.nanoTime() - started));
      metrics.hops.record(Hop.BUFFERED, batch.openedAtMs, nowMs);
      LOG.debug(
          "Flushed {}-{} offsets {}..{} to {}: {} rows, {} delete keys in {} ms",
          batch.topic,
          batch.partition,
          span.firstOffset,
          span.lastOffset,
          id,
          rows.size(),
          keys.size(),
          (System.nanoTime() - started) / 1_000_000);
    }
    return new Flushed(written, letters);
  }

  /**
   * The table as the catalog holds it now, for the lookups of unchanged TOAST values. One dropped
   * since it was cached (within the second {@link Admission#tableFor} trusts its cache) is made
   * again from the batch's changes, and one made again meanwhile (by another instance, perhaps from
   * an older shape) is checked against them, as the next flush would do: the rows are written in
   * the table's columns.
   */
  private Table current(TableIdentifier id, List<Pending> changes, Table admitted) {
    Table now;
    try {
      now = tables.refresh(id);
    } catch (NoSuchTableException e) {
      tables.forget(id.toString());
      now = null;
    }
    return now == admitted
        ? now
        : admission.tableFor(id, changes.stream().map(Pending::event).toList());
  }

  /**
   * Ends a partition's batch with a TRUNCATE of its table: the batch's changes, all before it, are
   * gone, so nothing of them is written but their change-log rows; the committer applies the
   * truncate to what realtime holds. Of a table that does not exist yet, the truncate names no
   * table UUID, and the committer keeps it until a change creates the table.
   */
  FilesWritten truncate(
      Batches.Batch batch,
      List<Batches.Entry> entries,
      KeyValueStore<String, BufferedChange> changelog,
      SchemaTexts schemaTexts,
      FlushedOffsets flushedOffsets,
      BufferedChange truncate,
      ChangeEvent event,
      long nowMs) {
    TableIdentifier id = admission.tableOf(batch.topic, () -> sourceOf(entries));
    Table table;
    try {
      table = tables.table(id);
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      // (A REST catalog may say the namespace is missing.)
      table = null;
      metrics.truncatesBeforeTable.increment();
    }
    Span span = new Span();
    for (Batches.Entry entry : entries) {
      if (!entry.movedOut()) {
        span.add(entry.offset(), entry.sourceTsMs(), null);
      }
    }
    span.add(truncate.offset(), truncate.sourceTsMs(), event);
    FilesWritten written = write(
        id,
        table,
        table == null ? null : table.schema(),
        batch,
        List.of(),
        List.of(),
        changelog,
        schemaTexts,
        span,
        SourcePositions.toHex(truncatePosition(event)),
        table == null ? event.table() : null,
        nowMs);
    if (table != null) {
      flushedOffsets.flushed(
          batch.topic, batch.partition, span.lastOffset, batch.topicId, table.uuid(), nowMs);
    }
    LOG.info(
        "TRUNCATE of {} at {} ({}-{}@{}): {} buffered change(s) before it dropped",
        id,
        event.source().describe(),
        batch.topic,
        batch.partition,
        truncate.offset(),
        entries.size());
    return written;
  }

  /**
   * Where a TRUNCATE stands in the source's order. Without a commit LSN (the first transaction a
   * restarted connector streams) PostgreSQL's truncate still orders by its own LSN: it holds an
   * exclusive lock, so every change before it committed below that LSN and every change after it
   * above.
   */
  static ByteBuffer truncatePosition(ChangeEvent event) {
    return SourcePositions.encode(rowPosition(event)
        .orElseThrow(() -> new BadChangeException(
            "a TRUNCATE without a source position (" + event.source().describe()
                + ") cannot be ordered against the changes of the table's other partitions")));
  }

  /**
   * Where a change stands against the table's truncates: its source order, or, for a PostgreSQL
   * change without a commit LSN (snapshot reads, and the transactions the connector streams before
   * it has seen a commit: seen with Debezium 3.6.1 for one committed while its snapshot ran), its
   * own LSN twice, as for a truncate. That is not an order across transactions, but it
   * is one against a truncate of the same table: the truncate's exclusive lock puts every change of
   * the table that committed before it below its LSN, and every one after it above its commit, so
   * such a change is neither taken for one before a truncate it follows (and removed) nor for one
   * after a truncate it precedes (and kept). Empty when the source gives no position.
   */
  static Optional<long[]> rowPosition(ChangeEvent event) {
    Optional<long[]> order = event.source().order();
    if (order.isPresent()) {
      return order;
    }
    Long lsn = event.source().lsn();
    return lsn == null ? Optional.empty() : Optional.of(new long[] {lsn, lsn});
  }

  /** The offsets, source times and source positions a batch covers. */
  private static final class Span {
    long firstOffset = Long.MAX_VALUE;
    long lastOffset = Long.MIN_VALUE;
    long changes;
    long maxTs = -1;
    /** The oldest source time added (Long.MAX_VALUE when none); -1 once a change had none. */
    long minTs = Long.MAX_VALUE;

    private long[] minOrder;
    private long[] maxOrder;

    /** Adds a change; returns its source position, null when the source gives none. */
    ByteBuffer add(long offset, long sourceTsMs, ChangeEvent event) {
      firstOffset = Math.min(firstOffset, offset);
      lastOffset = Math.max(lastOffset, offset);
      maxTs = Math.max(maxTs, sourceTsMs);
      minTs = sourceTsMs > 0 ? Math.min(minTs, sourceTsMs) : -1;
      changes++;
      Optional<long[]> order = event == null ? Optional.empty() : rowPosition(event);
      if (order.isEmpty()) {
        return null;
      }
      long[] o = order.get();
      // Compared as the numbers they encode (the order of their bytes), not byte by byte.
      if (minOrder == null || SourcePositions.compare(o, minOrder) < 0) {
        minOrder = o;
      }
      if (maxOrder == null || SourcePositions.compare(o, maxOrder) > 0) {
        maxOrder = o;
      }
      return SourcePositions.encode(o);
    }

    /** The lowest source position added, in hex, or null when none had one. */
    String minPositionHex() {
      return minOrder == null ? null : SourcePositions.toHex(SourcePositions.encode(minOrder));
    }

    /** The highest source position added, in hex, or null when none had one. */
    String maxPositionHex() {
      return maxOrder == null ? null : SourcePositions.toHex(SourcePositions.encode(maxOrder));
    }
  }

  /**
   * The previous rows of the changes that lack values, by change index (null where none is needed or
   * none was found; those found wanting become dead letters); null while the lookup is not done
   * after {@code budgetNanos} (at least one file is read in each attempt).
   */
  private List<Record> fillFromTable(
      Table table,
      Types.StructType keyType,
      List<Pending> changes,
      List<DeadLetter> letters,
      Batches.Batch batch,
      long budgetNanos) {
    List<Record> lookupKeys = new ArrayList<>();
    Set<String> columns = new LinkedHashSet<>();
    for (Pending p : changes) {
      if (p.missing().isEmpty()) {
        lookupKeys.add(null);
        continue;
      }
      columns.addAll(p.missing());
      byte[] from = p.entry().previousKey();
      lookupKeys.add(
          from == null
              ? Admission.keyRecord(p.event(), keyType)
              : RowConverter.toRecord(readJson(from), p.event().keySchema(), keyType));
    }
    List<Record> sought = lookupKeys.stream().filter(k -> k != null).toList();
    PreviousRows.Found found;
    PreviousRows.Lookup lookup = batch.lookup;
    batch.lookup = null;
    boolean resumed = lookup != null && lookup.isOf(table.uuid().toString(), sought, columns);
    long startedNs = System.nanoTime();
    Duration before = Duration.ZERO; // spent by a lookup started again
    while (true) {
      if (!resumed) {
        Snapshot realtime = table.snapshot(Branches.REALTIME);
        lookup =
            realtime == null ? null : new PreviousRows.Lookup(table, realtime, sought, columns);
      }
      if (lookup == null) {
        break;
      }
      try {
        long left = budgetNanos == Long.MAX_VALUE
            ? budgetNanos
            : Math.max(0, budgetNanos - (System.nanoTime() - startedNs));
        if (!lookup.step(left)) {
          // Run on the stream thread, in the task's transaction: the rest at the next attempt.
          batch.lookup = lookup;
          return null;
        }
        break;
      } catch (NotFoundException e) {
        if (!resumed) {
          throw e; // a file of the branch as it is now is missing: not the lookup's to mend
        }
        // A file of the older snapshot it went on reading is gone: expired, after a compaction,
        // while the lookup went on over many attempts. It starts again on the branch as it is.
        LOG.warn(
            "Flush of {}-{}: a file of realtime snapshot {} was removed while the lookup of the"
                + " rows of {} updates that left out-of-line (TOAST) values unchanged read it ({});"
                + " looking again on the current snapshot",
            batch.topic,
            batch.partition,
            lookup.snapshotId(),
            sought.size(),
            e.getMessage());
        before = before.plus(lookup.spent());
        resumed = false;
      }
    }
    if (lookup == null) {
      found = PreviousRows.Found.none();
    } else {
      found = lookup.found();
    }
    Duration took = lookup == null ? before : before.plus(lookup.spent());
    metrics.previousRowLookups.record(took);
    if (took.toMillis() >= SLOW_LOOKUP_MS) {
      LOG.warn(
          "Flush of {}-{}: looking up the rows of {} updates that left out-of-line (TOAST) values"
              + " unchanged took {} s over {} attempt(s) ({} files, {} MB read of {}), while the"
              + " partition's later changes waited; on a table this large, REPLICA IDENTITY FULL"
              + " makes PostgreSQL send the values, and nothing is looked up",
          batch.topic,
          batch.partition,
          sought.size(),
          took.toSeconds(),
          lookup == null ? 0 : lookup.steps(),
          found.filesRead(),
          found.bytesRead() / 1_000_000,
          table.name());
    }
    metrics.previousRowFiles.increment(found.filesRead());
    metrics.previousRowBytes.increment(found.bytesRead());
    List<Record> previous = new ArrayList<>();
    for (int i = 0; i < changes.size(); i++) {
      Pending p = changes.get(i);
      Record key = lookupKeys.get(i);
      Record row = key == null ? null : found.rows().get((StructLike) key);
      Set<String> unknown = new TreeSet<>(p.missing());
      unknown.retainAll(
          key == null ? Set.of() : found.unwritten().getOrDefault((StructLike) key, Set.of()));
      if (!unknown.isEmpty()) {
        // The table's row was written before the table had these columns (the source renamed a
        // column, or filled one without logging it: a volatile default): their values are unknown.
        letters.add(unfillable(
            batch,
            p,
            "the table's row was written before it had column(s) "
                + unknown + " (renamed at the source, or filled there without a change to log), so"
                + " their values are unknown"));
        row = null;
      } else if (key != null && row == null) {
        letters.add(unfillable(
            batch,
            p,
            "the table has no row of "
                + (from(p) == null ? p.event().key() : new String(from(p), StandardCharsets.UTF_8))
                + " to take them from"));
      } else if (row != null) {
        metrics.unavailableFilledFromTable.increment();
      }
      previous.add(row);
    }
    return previous;
  }

  /** The dead letter of a change whose placeholders cannot be filled, for {@code why}. */
  private static DeadLetter unfillable(Batches.Batch batch, Pending p, String why) {
    return new DeadLetter(
        batch.topic,
        batch.partition,
        p.entry().change(),
        "column(s) " + p.missing() + " of " + p.event().key()
            + " hold Debezium's unavailable-value placeholder (unchanged TOAST values) and " + why
            + "; an incremental snapshot of the table brings the row whole"
            + " (README: When main differs from the source)");
  }

  private static byte[] from(Pending p) {
    return p.entry().previousKey();
  }

  private FilesWritten write(
      TableIdentifier id,
      Table table,
      Schema schema,
      Batches.Batch batch,
      List<Record> rows,
      List<Record> keys,
      KeyValueStore<String, BufferedChange> changelog,
      SchemaTexts schemaTexts,
      Span span,
      String truncatedAt,
      SourceTable awaitedSource,
      long nowMs) {
    long taskId = flushSeq.incrementAndGet();
    // No table: a truncate of a table not created yet, which writes no file of its own.
    BatchWriter.Written written = table == null
        ? new BatchWriter.Written(List.of(), List.of(), 0)
        : BatchWriter.write(table, schema, rows, keys, batch.partition, taskId);
    Map<Integer, PartitionSpec> specs = table == null ? Map.of() : table.specs();
    String logName = null;
    List<DataFileJson> logFiles = List.of();
    if (config.changelogFor(id)) {
      List<Record> logRows = new ArrayList<>();
      List<String> logKeys = new ArrayList<>();
      try (KeyValueIterator<String, BufferedChange> it =
          changelog.prefixScan(batch.prefix(), Serdes.String().serializer())) {
        while (it.hasNext()) {
          KeyValue<String, BufferedChange> entry = it.next();
          BufferedChange change = schemaTexts.expand(entry.value);
          ChangeEvent event = decode(change);
          logRows.add(
              ChangeLog.row(event, change.value(), batch.topic, batch.partition, change.offset()));
          logKeys.add(entry.key);
        }
      }
      logKeys.forEach(k -> changelog.put(k, null)); // a delete that does not read first
      if (!logRows.isEmpty()) {
        // Admitted as logged; the name is checked again here (a batch an earlier version kept in
        // its stores was never admitted by this run).
        Optional<Table> log = ChangeLog.ensure(tables, id);
        if (log.isPresent()) {
          logName = ChangeLog.of(id).toString();
          var logFile = ChangeLog.write(log.get(), logRows, batch.partition, taskId);
          logFiles = List.of(DataFileJson.of(logFile, log.get().specs()));
        } else {
          metrics.changelogSkipped.increment(logRows.size());
        }
      }
    }
    metrics.filesWritten.increment(
        written.dataFiles().size() + written.deleteFiles().size());
    metrics.bytesWritten.increment(written.bytes());
    return new FilesWritten(
        id.toString(),
        batch.topic,
        batch.partition,
        span.firstOffset,
        span.lastOffset,
        span.changes,
        rows.size(),
        keys.size(),
        span.maxTs,
        written.dataFiles().stream().map(f -> DataFileJson.of(f, specs)).toList(),
        written.deleteFiles().stream().map(f -> DeleteFileJson.of(f, specs)).toList(),
        nowMs,
        logName,
        logFiles,
        span.minPositionHex(),
        span.maxPositionHex(),
        truncatedAt,
        table == null ? null : table.uuid().toString(),
        batch.topicId,
        span.minTs == Long.MAX_VALUE || span.minTs <= 0 ? null : span.minTs,
        awaitedSource);
  }

  private static JsonNode readJson(byte[] json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new BadChangeException("unreadable key " + new String(json, StandardCharsets.UTF_8), e);
    }
  }
}
