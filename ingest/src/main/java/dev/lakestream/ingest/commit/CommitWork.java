package dev.lakestream.ingest.commit;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CommitRetry;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.buffer.SourceNames;
import dev.lakestream.ingest.changelog.ChangeLogCommitter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.events.CreateSnapshotEvent;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One commit of the batches the {@link RealtimeCommitter} holds, table by table: what reaches the
 * catalog and the table's storage. It touches neither the committer's store nor its Kafka context,
 * so it may run on a thread other than the stream thread; what the store and the topics must learn
 * of it (the batches no longer pending, the events to forward) it returns as a {@link Done}, which
 * the committer applies on the stream thread, in the task's transaction.
 *
 * <p>Until that transaction commits, the batches stay pending: after a crash they are read again,
 * found at or below the source offsets the branch records, and skipped (see {@link
 * RealtimeCommitter}).
 */
final class CommitWork {

  /**
   * A batch this run committed, skipped as committed before, or refused: it leaves the store, under
   * the key it is stored under (with its topic's ID, or without, as stored before keys held it),
   * unless the store meanwhile holds another batch under that key (one that starts at the same
   * offset, after the source offsets were reset), which is still to commit.
   */
  record Settled(List<String> keys, String topicId, long lastOffset, long writtenAtMs) {
    Settled(FilesWritten batch) {
      this(
          List.of(RealtimeCommitter.pendingKey(batch), RealtimeCommitter.withoutTopicId(batch))
              .stream()
              .distinct()
              .toList(),
          batch.sourceTopicId(),
          batch.lastOffset(),
          batch.writtenAtMs());
    }

    boolean is(FilesWritten stored) {
      return stored != null
          && Objects.equals(stored.sourceTopicId(), topicId)
          && stored.lastOffset() == lastOffset
          && stored.writtenAtMs() == writtenAtMs;
    }
  }

  /**
   * What a run did: the batches it settled; {@code forwards} the realtime-commit events and dead
   * letters, in order; {@code missingTables} the tables not in the catalog, whose batches stay
   * pending; {@code deferredTables} the tables with batches left for the next commit.
   */
  record Done(
      List<Settled> settled,
      List<Record<String, Object>> forwards,
      List<String> missingTables,
      List<String> deferredTables,
      int commits,
      long rows) {}

  private static final Logger LOG = LoggerFactory.getLogger(CommitWork.class);
  /** Snapshots of realtime looked at for a replayed batch's refusal. */
  private static final int REFUSALS_LOOKED_BACK = 200;

  private final IngestConfig config;
  private final TableManager tables;
  private final RealtimeMetrics metrics;
  private final Health health;
  private final SourceTopicIds topicIds;
  private final Map<String, Long> committedSequence;
  private final long startMs;
  private final long startNanos;
  private final List<Settled> settled = new ArrayList<>();
  private final List<Record<String, Object>> forwards = new ArrayList<>();
  private final List<String> missingTables = new ArrayList<>();
  /** Tables with batches left pending for a later commit (of a topic created again). */
  private final List<String> deferredTables = new ArrayList<>();

  /**
   * The batches this run commits without their files, by {@link #refusalKey}: the time each was
   * written and the reason it was dead-lettered with, recorded in the round's summary.
   */
  private final Map<String, String> refusals = new HashMap<>();

  private int commits;
  private long rows;

  /**
   * A run begun at {@code startMs}, on the clock of the committer's stream thread. {@code
   * committedSequence}: per table UUID, the sequence number of the committer's last commit to its
   * realtime (kept across runs, updated here).
   */
  CommitWork(
      IngestConfig config,
      TableManager tables,
      RealtimeMetrics metrics,
      Health health,
      SourceTopicIds topicIds,
      Map<String, Long> committedSequence,
      long startMs) {
    this.config = config;
    this.tables = tables;
    this.metrics = metrics;
    this.health = health;
    this.topicIds = topicIds;
    this.committedSequence = committedSequence;
    this.startMs = startMs;
    this.startNanos = System.nanoTime();
  }

  /** Commits the pending batches of each table (in the order given); call once. */
  Done run(Map<String, List<FilesWritten>> batchesByTable) {
    batchesByTable.forEach(this::commitTable);
    return new Done(settled, forwards, missingTables, deferredTables, commits, rows);
  }

  /**
   * Commits the pending batches of {@code tableName}. A table dropped from the catalog keeps its
   * batches pending: ingest creates it again with the next change it receives for it (the way to
   * change a table's primary key is to drop it and snapshot the source again), and they are
   * committed to the new table.
   */
  private void commitTable(String tableName, List<FilesWritten> batches) {
    try {
      commitPending(tableName, batches);
    } catch (NoSuchTableException | NoSuchNamespaceException e) {
      // (A REST catalog may say the namespace is missing: one of a table not created yet.)
      tables.forget(tableName);
      missingTables.add(tableName);
    }
  }

  private void commitPending(String tableName, List<FilesWritten> batches) {
    if (batches.isEmpty()) {
      return;
    }
    TableIdentifier id = TableIdentifier.parse(tableName);
    Table table = tables.refresh(id);
    SourceOffsets committed = SourceOffsets.of(table, Branches.REALTIME);
    List<FilesWritten> toCommit = new ArrayList<>();
    long now = nowMs();
    for (FilesWritten batch : batches) {
      if (!committed.follows(batch.sourceTopic(), batch.sourceTopicId())) {
        if (refusedAsOfADeletedTopic(batch, committed)) {
          continue;
        }
        if (pendingOfRecordedTopic(batches, committed, batch.sourceTopic())) {
          // The recorded topic's batches first, without it: no round mixes the two topics (a
          // retry of a mixed round would measure the old topic's batches by the new one's
          // offsets). It stays pending for the next commit.
          if (!deferredTables.contains(tableName)) {
            deferredTables.add(tableName);
          }
          continue;
        }
        committed = committed.following(batch.sourceTopic(), batch.sourceTopicId());
      }
      if (awaitedItsTable(batch) && !alreadyCommitted(batch, committed)) {
        if (sourceNotRecordedYet(table)) {
          // Made by a change whose source table is recorded just after: checked then.
          if (!deferredTables.contains(tableName)) {
            deferredTables.add(tableName);
          }
          continue;
        }
        String notOurs = madeByAnotherHand(table, batch.awaitedSource());
        if (notOurs != null) {
          String reason = refuse(batch, notOurs);
          if (table.refs().containsKey(Branches.REALTIME)) {
            // Its offsets committed without the truncate: read again after an offset reset, it is
            // skipped rather than applied to the table as it is then.
            refusals.put(refusalKey(batch), batch.writtenAtMs() + " " + reason);
            toCommit.add(batch.withoutFiles());
          } else {
            settled.add(new Settled(batch)); // no branch of ingest's to commit to
          }
          continue;
        }
      }
      String problem = alreadyCommitted(batch, committed) ? null : problem(table, batch, now);
      if (problem != null) {
        // Its offsets are committed without its files: the partition's later batches (and the
        // flushes that wait for it) go on; its changes are in the dead-letter topic.
        String reason = refuse(batch, problem);
        refusals.put(refusalKey(batch), batch.writtenAtMs() + " " + reason);
        toCommit.add(batch.withoutFiles());
      } else if (alreadyCommitted(batch, committed)) {
        metrics.replaysSkipped.increment();
        refusedBefore(table, batch);
        LOG.info(
            "Skipping batch {} offsets {}..{} of {}: already committed to {} (last offset {})",
            batch.sourcePartitionName(),
            batch.firstOffset(),
            batch.lastOffset(),
            tableName,
            Branches.REALTIME,
            committed.last(batch.sourceTopic(), batch.sourcePartition()));
        settled.add(new Settled(batch));
      } else {
        toCommit.add(batch);
      }
    }
    if (toCommit.isEmpty()) {
      if (table.refs().containsKey(Branches.REALTIME)) {
        // The trigger for the skipped batches may have been lost with the crashed transaction.
        announce(
            tableName, table, batches.get(batches.size() - 1).maxSourceTsMs(), 0, 0, 0, nowMs());
      }
      return;
    }
    for (List<FilesWritten> round : CommitRounds.of(toCommit)) {
      // A truncate first, alone: the round's other batches are then measured against it.
      List<FilesWritten> truncates =
          round.stream().filter(FilesWritten::isTruncate).toList();
      for (FilesWritten truncate : truncates) {
        commitRound(tableName, id, table, List.of(truncate));
      }
      List<FilesWritten> batchesOfRound =
          round.stream().filter(b -> !b.isTruncate()).toList();
      if (!batchesOfRound.isEmpty()) {
        commitRound(tableName, id, table, batchesOfRound);
      }
    }
  }

  /**
   * Whether {@code batch}, of a topic whose ID is not the one the branch's offsets record, is of a
   * topic that no longer exists (dead-lettered, and settled without its offsets, which are no
   * topic's now); else its topic replaced the recorded one, whose offsets it is committed without
   * (warned). When the topic of that name does not exist now either, which one is newer cannot be
   * told, and the batch is dead-lettered rather than committed over changes that may be newer.
   */
  private boolean refusedAsOfADeletedTopic(FilesWritten batch, SourceOffsets committed) {
    String topic = batch.sourceTopic();
    String now = topicIds.current(topic, startMs);
    if (now == null || !now.equals(batch.sourceTopicId())) {
      refuse(
          batch,
          "its source topic " + topic + " (ID " + batch.sourceTopicId() + ") no longer exists: "
              + (now == null
                  ? "no topic of that name exists now"
                  : "the topic of that name now has ID " + now)
              + ", and the table holds the offsets of the topic of ID "
              + committed.topicId(topic));
      settled.add(new Settled(batch));
      return true;
    }
    LOG.warn(
        "Source topic {} was deleted and created again: batch {} offsets {}..{} is of the topic of"
            + " ID {}, and {} holds offsets of the topic of ID {}, which do not apply to it",
        topic,
        batch.sourcePartitionName(),
        batch.firstOffset(),
        batch.lastOffset(),
        batch.sourceTopicId(),
        batch.table(),
        committed.topicId(topic));
    return false;
  }

  /** Whether {@code batches} hold one of {@code topic} of the ID the offsets record. */
  private static boolean pendingOfRecordedTopic(
      List<FilesWritten> batches, SourceOffsets committed, String topic) {
    String recorded = committed.topicId(topic);
    return batches.stream()
        .anyMatch(b -> b.sourceTopic().equals(topic) && recorded.equals(b.sourceTopicId()));
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
    if (waited > config.pipeline().maxStallMs() && !awaitedItsTable(batch)) {
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
    if (waited < RealtimeCommitter.CHECK_FILES_AFTER_MS) {
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

  /**
   * Whether {@code batch} is a TRUNCATE read before its table existed: it waits for the table's
   * first change, however late, and its wait stalls nothing. (A truncate of an older writer names
   * neither a table UUID nor its source: it is applied as before.)
   */
  static boolean awaitedItsTable(FilesWritten batch) {
    return batch.isTruncate() && batch.tableUuid() == null && batch.awaitedSource() != null;
  }

  /**
   * Whether {@code table} records no source table yet: ingest makes a table, then records the
   * source table of the change that made it ({@code SourceNames}), and a waiting truncate is
   * checked against that record. A table that never records one (another hand's) is refused by
   * {@link #madeByAnotherHand} once it has rows, or has no realtime branch.
   */
  private static boolean sourceNotRecordedYet(Table table) {
    return table.refs().containsKey(Branches.REALTIME)
        && table.properties().keySet().stream().noneMatch(k -> k.startsWith(SourceNames.PREFIX))
        && madeByAnotherHand(table, null) == null;
  }

  /**
   * Why a TRUNCATE read before {@code table} existed must not be applied to it, or null: the table
   * was made meanwhile by another hand, as a truncate of a table ingest has not taken over is not
   * applied either ({@code Admission}). Ingest makes a table with an empty first snapshot, where its
   * realtime branch starts; one made with rows (a backfill by another engine) would lose them all,
   * their files having no source positions. A table made from another source table whose name
   * Debezium's topic names or the catalog do not tell from the truncate's ({@code SourceNames})
   * holds none of the truncated table's rows.
   */
  static String madeByAnotherHand(Table table, SourceTable source) {
    SnapshotRef realtime = table.refs().get(Branches.REALTIME);
    String why = "it was read before table " + table.name() + " existed, and the table was then"
        + " made by another hand";
    Optional<String> other = source == null ? Optional.empty() : SourceNames.another(table, source);
    if (other.isPresent()) {
      return "it was read before table " + table.name() + " existed, and the table was then made"
          + " from source table " + other.get() + ", whose name the topic names or the catalog do"
          + " not tell from this truncate's " + source.schema() + "." + source.table() + ": the"
          + " rows of the two would merge (rename one of the source tables, or map its topic to"
          + " another table)";
    }
    if (realtime == null) {
      return why + ", which ingest has not taken over (no " + Branches.REALTIME + " branch): the"
          + " TRUNCATE is not applied; truncate the table by hand if it was meant for its rows";
    }
    Snapshot first = SnapshotUtil.oldestAncestorOf(table, realtime.snapshotId());
    String records = first == null || first.summary() == null
        ? null
        : first.summary().get(SnapshotSummary.TOTAL_RECORDS_PROP);
    if (records != null && !"0".equals(records)) {
      return why + " with " + records + " rows, which it would remove (their files carry no source"
          + " positions): truncate the table by hand if the source's TRUNCATE was meant for them";
    }
    return null;
  }

  /**
   * Dead-letters {@code batch}: its source offsets are named, so the user knows what to re-snapshot.
   * Returns the reason.
   */
  private String refuse(FilesWritten batch, String why) {
    metrics.refused.increment();
    String reason = "batch of " + batch.sourcePartitionName() + " offsets " + batch.firstOffset()
        + ".." + batch.lastOffset()
        + " not committed to " + batch.table() + ": " + why
        + (awaitedItsTable(batch)
            ? ""
            : "; its " + batch.changes() + " changes are not on the table: re-snapshot it (README,"
                + " \"When main differs from the source\")");
    deadLetter(batch, reason);
    return reason;
  }

  /** The summary property of a round that records {@code batch} committed without its files. */
  static String refusalKey(FilesWritten batch) {
    return SummaryKeys.REFUSED_PREFIX + batch.sourcePartitionName() + "@" + batch.lastOffset();
  }

  /**
   * A batch found committed already (a replay after the committer's Kafka transaction did not
   * commit): when the commit recorded it refused, it is dead-lettered again, that transaction having
   * taken the first dead letter with it. The same batch (written at the same time) only: one flushed
   * again from the same offsets is another. Realtime's newest {@link #REFUSALS_LOOKED_BACK} snapshots
   * are looked at (a replay comes soon after its commit).
   */
  private void refusedBefore(Table table, FilesWritten batch) {
    String key = refusalKey(batch);
    Snapshot s = table.snapshot(Branches.REALTIME);
    for (int seen = 0; s != null && seen < REFUSALS_LOOKED_BACK; seen++) {
      String recorded = s.summary() == null ? null : s.summary().get(key);
      if (recorded != null) {
        int space = recorded.indexOf(' ');
        if (space > 0 && recorded.substring(0, space).equals(Long.toString(batch.writtenAtMs()))) {
          metrics.refused.increment();
          deadLetter(batch, recorded.substring(space + 1));
        }
        return;
      }
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
  }

  private void deadLetter(FilesWritten batch, String reason) {
    LOG.error("{}", reason);
    health.problem("ingest table " + batch.table(), reason);
    forwards.add(new Record<String, Object>(
        batch.table(),
        batch,
        nowMs(),
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

  private void commitRound(
      String tableName, TableIdentifier id, Table table, List<FilesWritten> round) {
    long started = System.nanoTime();
    try {
      CommitRetry.onConflict(Conflict.class, attempt -> {
        if (attempt > 1) {
          metrics.retries.increment();
          table.refresh(); // another writer committed: its offsets count, and the files it removed
        }
        attemptRound(tableName, id, table, round, started, attempt > 1);
        return null;
      });
    } catch (Conflict e) {
      throw new IllegalStateException(
          "cannot commit to " + id + " branch realtime: another writer keeps adding files ("
              + e.getCause().getMessage() + ")",
          e.getCause());
    }
  }

  /**
   * Realtime's head, read again while it is older than this committer's last commit to it. The
   * table is shared with the stream threads, which refresh it, and Iceberg's refresh puts what it
   * read into the table whether or not it is newer: one that read the table's pointer before that
   * commit and ended after it sets the table back. A round built on that head would record the
   * offsets and truncate position of before the commit (a commit that adds no file, a truncate
   * that removed nothing, passes the round's validation), and lose the commit's.
   */
  static Snapshot notOlderThanOurs(
      Map<String, Long> committedSequence, String tableName, Table table) {
    String key = table.uuid().toString(); // a table made again starts its numbers again
    Long ours = committedSequence.get(key);
    Snapshot head = table.snapshot(Branches.REALTIME);
    for (int read = 1; ours != null && older(head, ours) && read <= 3; read++) {
      table.refresh();
      head = table.snapshot(Branches.REALTIME);
    }
    if (ours != null && older(head, ours)) {
      // Set back on purpose (an operator moved the branch): taken as it is.
      LOG.warn(
          "{} {} is at sequence number {}, before this committer's last commit to it ({}): set"
              + " back since; committing on it as it is",
          tableName,
          Branches.REALTIME,
          head == null ? "(none)" : head.sequenceNumber(),
          ours);
      committedSequence.remove(key);
    }
    return head;
  }

  /**
   * The sequence number of the snapshot {@code round} committed (Iceberg commits it on the newest
   * head, which may be past {@code base}: a compaction in between); at least the one after {@code
   * base} when Iceberg cannot tell.
   */
  private static long committedSequenceNumber(RoundDelta round, Snapshot base) {
    long after = base == null ? 1 : base.sequenceNumber() + 1;
    return round.delta.updateEvent() instanceof CreateSnapshotEvent event
        ? Math.max(after, event.sequenceNumber())
        : after;
  }

  private static boolean older(Snapshot head, long sequence) {
    return head == null || head.sequenceNumber() < sequence;
  }

  /** The commit of a round lost to another writer's: attempted again from the branch as it is now. */
  private static final class Conflict extends RuntimeException {
    Conflict(ValidationException cause) {
      super(cause.getMessage(), cause);
    }
  }

  private void attemptRound(
      String tableName,
      TableIdentifier id,
      Table table,
      List<FilesWritten> round,
      long started,
      boolean retried) {
    // One snapshot for both the offsets and the commit's validation: the table is shared with
    // other threads, which refresh it, and offsets older than the validation's base would let a
    // batch another writer committed in between be committed again.
    Snapshot base = notOlderThanOurs(committedSequence, tableName, table);
    Optional<Snapshot> recording = SourceOffsets.recordingSnapshot(table, base);
    SourceOffsets committed =
        recording.flatMap(SourceOffsets::recordedBy).orElse(SourceOffsets.empty());
    SourceOffsets next = committed;
    List<FilesWritten> fresh = new ArrayList<>();
    for (FilesWritten batch : round) {
      // A batch of a topic created again after the one the offsets are of: not measured by them.
      SourceOffsets ofItsTopic = committed.following(batch.sourceTopic(), batch.sourceTopicId());
      if (alreadyCommitted(batch, ofItsTopic)) {
        metrics.replaysSkipped.increment();
        refusedBefore(table, batch);
        settled.add(new Settled(batch));
      } else {
        noteOverlap(batch, ofItsTopic);
        fresh.add(batch);
        next = next.following(batch.sourceTopic(), batch.sourceTopicId())
            .with(batch.sourceTopic(), batch.sourcePartition(), batch.lastOffset());
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
      return;
    }
    // The round's change-log rows first (exactly once by their own offsets), then the table.
    ChangeLogCommitter.commit(tables, fresh);
    RoundDelta delta = RoundDelta.of(
        table, base, recording.map(Snapshot::snapshotId).orElse(null), tableName, fresh, next);
    for (FilesWritten batch : fresh) {
      String refusal = refusals.get(refusalKey(batch));
      if (refusal != null) {
        delta.delta.set(refusalKey(batch), refusal);
      }
    }
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
    committedSequence.merge(
        table.uuid().toString(), committedSequenceNumber(delta, base), Math::max);
    delta.obsolete.forEach(path -> table.io().deleteFile(path));
    fresh.forEach(batch -> settled.add(new Settled(batch)));
    for (FilesWritten batch : fresh) {
      if (!batch.dataFiles().isEmpty() || !batch.deleteFiles().isEmpty()) {
        metrics.hops.record(Hop.FLUSH_TO_REALTIME, batch.writtenAtMs(), committedAt);
      }
    }
    metrics.committed(delta, started, committedAt);
    commits++;
    rows += delta.rows;
    announce(
        tableName, table, delta.maxSourceTsMs, fresh.size(), delta.rows, delta.keys, committedAt);
  }

  /** The time now: the clock of the run's start, plus the time its work took so far. */
  private long nowMs() {
    return startMs + (System.nanoTime() - startNanos) / 1_000_000;
  }

  private void announce(
      String tableName, Table table, long maxTs, int batches, long rows, long keys, long now) {
    Snapshot head = table.snapshot(Branches.REALTIME);
    RealtimeCommitted event = new RealtimeCommitted(
        tableName, head.snapshotId(), head.sequenceNumber(), maxTs, batches, rows, keys, now);
    forwards.add(new Record<String, Object>(event.table(), event, now));
  }
}
