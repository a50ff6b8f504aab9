package dev.lakestream.ingest.commit;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.event.Unreadable;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CommitRetry;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.changelog.ChangeLogCommitter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits flushed batches to each table's {@code realtime} branch with a RowDelta, then announces
 * the snapshot with a {@link RealtimeCommitted} event. One committer owns a table (its events are
 * keyed by table).
 *
 * <p>Batches wait in a state store and are committed every {@code ingest.commit.interval.ms},
 * split into rounds by {@link CommitRounds} (never two batches of one source partition in one
 * snapshot). Each snapshot's summary records the last committed source offset of every source
 * partition ({@link SourceOffsets}); a batch at or below it was committed before (a replay after a
 * crash between the Iceberg commit and the Kafka commit) and is skipped, so no file is committed
 * twice. The commit validates that nobody added files to the branch since the offsets were read
 * (a fenced-off zombie instance could have): if so it re-reads them and tries again.
 *
 * <p>A TRUNCATE (a batch that ends with one, from whichever partition carried it) is committed in a
 * snapshot of its own, in its partition's order, and applied by {@link Truncation}: what realtime
 * holds of before it is removed, what came after it stays. Every later commit carries its position
 * ({@link SummaryKeys#TRUNCATED_AT}), and a batch of another partition that arrives afterwards with
 * changes from before it is trimmed of them.
 *
 * <p>A batch that overlaps the committed offsets (its source offsets were reset, by hand or by
 * {@code auto.offset.reset}) is committed, its changes applied again as upserts: they are the
 * newest of their keys up to the batch's end, so the table ends as the source. A batch that waited
 * longer than {@code lakestream.max.stall.ms} is reported (the topics may have dropped batches
 * before it), and one whose files are gone is not committed but dead-lettered with the source
 * offsets it held: committing it would break every reader of the table.
 */
public final class RealtimeCommitter implements Processor<String, Object, String, Object> {

  public static final String STORE = "realtime-pending";
  /** A batch older than this has its files checked before it is committed (it waited: were they removed?). */
  static final long CHECK_FILES_AFTER_MS = 10 * 60_000L;

  private static final Logger LOG = LoggerFactory.getLogger(RealtimeCommitter.class);
  private static final int MAX_PENDING_PER_TABLE = 64;
  private static final long PROGRESS_EVERY_MS = 10_000;

  private final IngestConfig config;
  private final TableManager tables;
  private final RealtimeMetrics metrics;

  private final Health health;
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, FilesWritten> pending;
  private final Map<String, Integer> pendingPerTable = new LinkedHashMap<>();
  private long progressAtMs;
  private long progressCommits;
  private long progressRows;
  private long clockMs;
  private long clockNanos;

  public RealtimeCommitter(
      IngestConfig config, TableManager tables, MeterRegistry meters, Health health) {
    this.config = config;
    this.tables = tables;
    this.health = health;
    this.metrics = new RealtimeMetrics(meters);
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.pending = context.getStateStore(STORE);
    try (KeyValueIterator<String, FilesWritten> it = pending.all()) {
      it.forEachRemaining(e -> pendingPerTable.merge(e.value.table(), 1, Integer::sum));
    }
    progressAtMs = context.currentSystemTimeMs();
    context.schedule(
        Duration.ofMillis(config.commitIntervalMs()),
        PunctuationType.WALL_CLOCK_TIME,
        now -> commitAll());
  }

  @Override
  public void process(Record<String, Object> record) {
    startClock();
    if (record.value() instanceof Unreadable unreadable) {
      metrics.refused.increment();
      var meta = context.recordMetadata();
      String topic = meta.map(m -> m.topic()).orElse("?");
      int partition = meta.map(m -> m.partition()).orElse(-1);
      long offset = meta.map(m -> m.offset()).orElse(-1L);
      String reason = "unreadable batch event: " + unreadable.error();
      LOG.error(
          "Dead-lettering the record of {}-{} at offset {}: {}", topic, partition, offset, reason);
      context.forward(new Record<String, Object>(
          record.key(),
          unreadable,
          record.timestamp(),
          DeadLetters.headers(
              record.headers(), topic, partition, offset, "realtime-commit", reason)));
      return;
    }
    if (!(record.value() instanceof FilesWritten batch)) {
      return; // a tombstone
    }
    pending.put(pendingKey(batch), batch);
    int count = pendingPerTable.merge(batch.table(), 1, Integer::sum);
    if (count >= MAX_PENDING_PER_TABLE) {
      commitTable(batch.table());
    }
  }

  private void commitAll() {
    startClock();
    for (String table : new ArrayList<>(pendingPerTable.keySet())) {
      commitTable(table);
    }
    logProgress();
  }

  /**
   * Commits the pending batches of {@code tableName}. A table dropped from the catalog keeps its
   * batches pending: ingest creates it again with the next change it receives for it (the way to
   * change a table's primary key is to drop it and snapshot the source again), and they are
   * committed to the new table.
   */
  private void commitTable(String tableName) {
    try {
      commitPending(tableName);
    } catch (NoSuchTableException e) {
      tables.forget(tableName);
      int waiting = 0;
      try (KeyValueIterator<String, FilesWritten> it =
          pending.prefixScan(tableName + '\u0000', Serdes.String().serializer())) {
        while (it.hasNext()) {
          it.next();
          waiting++;
        }
      }
      if (waiting > 0) {
        pendingPerTable.put(tableName, waiting);
      }
      LOG.warn(
          "Table {} is not in the catalog (dropped?): its {} pending batches wait until ingest creates it again"
              + " with its next change",
          tableName,
          waiting);
    }
  }

  private void commitPending(String tableName) {
    List<FilesWritten> batches = new ArrayList<>();
    try (KeyValueIterator<String, FilesWritten> it =
        pending.prefixScan(tableName + '\u0000', Serdes.String().serializer())) {
      it.forEachRemaining((KeyValue<String, FilesWritten> e) -> batches.add(e.value));
    }
    pendingPerTable.remove(tableName);
    if (batches.isEmpty()) {
      return;
    }
    TableIdentifier id = TableIdentifier.parse(tableName);
    Table table = tables.refresh(id);
    SourceOffsets committed = SourceOffsets.of(table, Branches.REALTIME);
    List<FilesWritten> toCommit = new ArrayList<>();
    long now = context.currentSystemTimeMs();
    for (FilesWritten batch : batches) {
      String problem = alreadyCommitted(batch, committed) ? null : problem(table, batch, now);
      if (problem != null) {
        // Its offsets are committed without its files: the partition's later batches (and the
        // flushes that wait for it) go on; its changes are in the dead-letter topic.
        refuse(batch, problem);
        toCommit.add(batch.withoutFiles());
      } else if (alreadyCommitted(batch, committed)) {
        metrics.replaysSkipped.increment();
        LOG.info(
            "Skipping batch {} offsets {}..{} of {}: already committed to {} (last offset {})",
            batch.sourcePartitionName(),
            batch.firstOffset(),
            batch.lastOffset(),
            tableName,
            Branches.REALTIME,
            committed.last(batch.sourceTopic(), batch.sourcePartition()));
        pending.delete(pendingKey(batch));
      } else {
        toCommit.add(batch);
      }
    }
    if (toCommit.isEmpty()) {
      // The trigger for the skipped batches may have been lost with the crashed transaction.
      announce(tableName, table, batches.get(batches.size() - 1).maxSourceTsMs(), 0, 0, 0, nowMs());
      return;
    }
    for (List<FilesWritten> round : CommitRounds.of(toCommit)) {
      // A truncate first, alone: the round's other batches are then measured against it.
      List<FilesWritten> truncates =
          round.stream().filter(FilesWritten::isTruncate).toList();
      for (FilesWritten truncate : truncates) {
        committed = commitRound(tableName, id, table, List.of(truncate), committed);
      }
      List<FilesWritten> batchesOfRound =
          round.stream().filter(b -> !b.isTruncate()).toList();
      if (!batchesOfRound.isEmpty()) {
        committed = commitRound(tableName, id, table, batchesOfRound, committed);
      }
    }
  }

  private static boolean alreadyCommitted(FilesWritten batch, SourceOffsets committed) {
    return batch.lastOffset() <= committed.last(batch.sourceTopic(), batch.sourcePartition());
  }

  /**
   * Why {@code batch} must not be committed (its files are gone), or null. A batch that waited
   * longer than the longest stall is reported either way; only batches that waited at all have
   * their files looked up.
   */
  private String problem(Table table, FilesWritten batch, long now) {
    if (batch.tableUuid() != null && !batch.tableUuid().equals(table.uuid().toString())) {
      return "it was written for table " + batch.table() + " " + batch.tableUuid()
          + ", which was dropped; the table of" + " that name now is another (" + table.uuid()
          + ")";
    }
    try {
      batch.dataFiles(table.specs());
      batch.deleteFiles(table.specs());
    } catch (RuntimeException e) {
      return "its files cannot be read as the files they claim to be: " + e.getMessage();
    }
    long waited = now - batch.writtenAtMs();
    if (waited > config.pipeline().maxStallMs()) {
      String what = "a batch of " + batch.table() + " (" + batch.sourcePartitionName() + " offsets "
          + batch.firstOffset()
          + ".." + batch.lastOffset() + ") waited " + waited / 60_000
          + " min for its commit, longer than "
          + PipelineConfig.MAX_STALL_MS + " (" + config.pipeline().maxStallMs() / 60_000
          + " min): batches before it"
          + " may have been dropped by the topics' retention; run `lakestream verify` and re-snapshot the table if it"
          + " differs";
      LOG.error("{}", what);
      health.problem("ingest table " + batch.table(), what);
    }
    if (waited < CHECK_FILES_AFTER_MS) {
      return null;
    }
    List<String> files = new ArrayList<>();
    batch.dataFiles().forEach(f -> files.add(f.path()));
    batch.deleteFiles().forEach(f -> files.add(f.path()));
    for (String path : files) {
      if (!table.io().newInputFile(path).exists()) {
        return "file " + path + " of the batch is gone (written " + waited / 60_000
            + " min ago); committing it would" + " break every reader of " + batch.table();
      }
    }
    return null;
  }

  /** Dead-letters {@code batch}: its source offsets are named, so the user knows what to re-snapshot. */
  private void refuse(FilesWritten batch, String why) {
    metrics.refused.increment();
    String reason = "batch of " + batch.sourcePartitionName() + " offsets " + batch.firstOffset()
        + ".." + batch.lastOffset()
        + " not committed to " + batch.table() + ": " + why + "; its " + batch.changes()
        + " changes are not on the"
        + " table: re-snapshot it (README, \"When main differs from the source\")";
    LOG.error("{}", reason);
    health.problem("ingest table " + batch.table(), reason);
    context.forward(new Record<String, Object>(
        batch.table(),
        batch,
        context.currentSystemTimeMs(),
        DeadLetters.headers(
            new RecordHeaders(),
            batch.sourceTopic(),
            batch.sourcePartition(),
            batch.firstOffset(),
            "realtime-commit",
            reason)));
  }

  /** Logs a batch that starts at or below the committed offset: its source offsets were reset. */
  private void noteOverlap(FilesWritten batch, SourceOffsets committed) {
    long last = committed.last(batch.sourceTopic(), batch.sourcePartition());
    if (batch.firstOffset() <= last) {
      metrics.overlapping.increment();
      LOG.warn(
          "Batch {} offsets {}..{} of {} starts at or below the committed offset {} of branch realtime (the source"
              + " offsets were reset): committing it, its changes applied again as upserts",
          batch.sourcePartitionName(),
          batch.firstOffset(),
          batch.lastOffset(),
          batch.table(),
          last);
    }
  }

  private SourceOffsets commitRound(
      String tableName,
      TableIdentifier id,
      Table table,
      List<FilesWritten> round,
      SourceOffsets committed) {
    long started = System.nanoTime();
    try {
      return CommitRetry.onConflict(Conflict.class, attempt -> {
        if (attempt == 1) {
          return attemptRound(tableName, id, table, round, committed, started, false);
        }
        metrics.retries.increment();
        table.refresh(); // another writer committed: its offsets count, and the files it removed
        return attemptRound(
            tableName, id, table, round, SourceOffsets.of(table, Branches.REALTIME), started, true);
      });
    } catch (Conflict e) {
      throw new IllegalStateException(
          "cannot commit to " + id + " branch realtime: another writer keeps adding files ("
              + e.getCause().getMessage() + ")",
          e.getCause());
    }
  }

  /** The commit of a round lost to another writer's: attempted again from the branch as it is now. */
  private static final class Conflict extends RuntimeException {
    Conflict(ValidationException cause) {
      super(cause.getMessage(), cause);
    }
  }

  private SourceOffsets attemptRound(
      String tableName,
      TableIdentifier id,
      Table table,
      List<FilesWritten> round,
      SourceOffsets committed,
      long started,
      boolean retried) {
    SourceOffsets next = committed;
    List<FilesWritten> fresh = new ArrayList<>();
    for (FilesWritten batch : round) {
      if (alreadyCommitted(batch, committed)) {
        metrics.replaysSkipped.increment();
        pending.delete(pendingKey(batch));
      } else {
        noteOverlap(batch, committed);
        fresh.add(batch);
        next = next.with(batch.sourceTopic(), batch.sourcePartition(), batch.lastOffset());
      }
    }
    if (fresh.isEmpty()) {
      if (retried) {
        // Another writer (a zombie of this task) committed the round; its trigger may be lost.
        announce(
            tableName,
            table,
            round.stream().mapToLong(FilesWritten::maxSourceTsMs).max().orElse(0),
            0,
            0,
            0,
            nowMs());
      }
      return committed;
    }
    // The round's change-log rows first (exactly once by their own offsets), then the table.
    ChangeLogCommitter.commit(tables, fresh);
    RoundDelta delta = RoundDelta.of(table, tableName, fresh, next);
    try {
      delta.delta.commit();
    } catch (ValidationException e) {
      delta.writtenHere.forEach(
          path -> table.io().deleteFile(path)); // written again from the new state
      LOG.warn(
          "Commit to {} realtime conflicted ({}); re-reading committed offsets",
          id,
          e.getMessage());
      throw new Conflict(e);
    }
    long committedAt = nowMs();
    delta.obsolete.forEach(path -> table.io().deleteFile(path));
    fresh.forEach(batch -> pending.delete(pendingKey(batch)));
    for (FilesWritten batch : fresh) {
      if (!batch.dataFiles().isEmpty() || !batch.deleteFiles().isEmpty()) {
        metrics.hops.record(Hop.FLUSH_TO_REALTIME, batch.writtenAtMs(), committedAt);
      }
    }
    counted(delta, started, committedAt);
    announce(
        tableName, table, delta.maxSourceTsMs, fresh.size(), delta.rows, delta.keys, committedAt);
    return next.truncatedAt(delta.truncatedAt);
  }

  /** Kafka Streams' clock, read once per punctuation or record; {@link #nowMs} adds the time since. */
  private void startClock() {
    clockMs = context.currentSystemTimeMs();
    clockNanos = System.nanoTime();
  }

  /** The time now: the clock of this punctuation or record, plus the time its work took so far. */
  private long nowMs() {
    return clockMs + (System.nanoTime() - clockNanos) / 1_000_000;
  }

  private void counted(RoundDelta round, long startedNanos, long now) {
    metrics.committed(round, startedNanos, now);
    progressCommits++;
    progressRows += round.rows;
  }

  private void announce(
      String tableName, Table table, long maxTs, int batches, long rows, long keys, long now) {
    Snapshot head = table.snapshot(Branches.REALTIME);
    RealtimeCommitted event = new RealtimeCommitted(
        tableName, head.snapshotId(), head.sequenceNumber(), maxTs, batches, rows, keys, now);
    context.forward(new Record<String, Object>(event.table(), event, now));
  }

  private void logProgress() {
    long now = context.currentSystemTimeMs();
    if (now - progressAtMs >= PROGRESS_EVERY_MS) {
      double seconds = (now - progressAtMs) / 1000.0;
      if (progressCommits > 0) {
        LOG.info(
            "Realtime commits: {} snapshots, {} rows in {}s ({} rows/s), task {}",
            progressCommits,
            progressRows,
            String.format("%.1f", seconds),
            String.format("%.0f", progressRows / seconds),
            context.taskId());
      }
      progressAtMs = now;
      progressCommits = 0;
      progressRows = 0;
    }
  }

  private static String pendingKey(FilesWritten batch) {
    return batch.table()
        + '\u0000'
        + batch.sourceTopic()
        + '\u0000'
        + batch.sourcePartition()
        + '\u0000'
        + String.format("%020d", batch.firstOffset());
  }
}
