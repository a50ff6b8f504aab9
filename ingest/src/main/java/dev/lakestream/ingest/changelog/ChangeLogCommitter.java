package dev.lakestream.ingest.changelog;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.ChangeLogTables;
import dev.lakestream.common.iceberg.CommitRetry;
import dev.lakestream.common.iceberg.InlineManifestWork;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.ingest.commit.SourceOffsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expressions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends the change-log files of a round of batches to the change log, exactly once: like the
 * realtime commit, each snapshot records the last committed source offset of every source
 * partition, and a batch at or below it is not appended again (a replay after a crash between this
 * commit and the realtime commit, or between the realtime commit and the Kafka commit). It commits
 * before the realtime commit of the same round, so the log never lags the table.
 */
public final class ChangeLogCommitter {

  private static final Logger LOG = LoggerFactory.getLogger(ChangeLogCommitter.class);

  private ChangeLogCommitter() {}

  /** Returns the batches appended now (empty when none keeps a log, or all were appended before). */
  public static List<FilesWritten> commit(TableManager tables, List<FilesWritten> round) {
    List<FilesWritten> logged = round.stream()
        .filter(b -> b.changelogTable() != null && !b.changelogFiles().isEmpty())
        .toList();
    if (logged.isEmpty()) {
      return List.of();
    }
    TableIdentifier id = TableIdentifier.parse(logged.get(0).changelogTable());
    try {
      return CommitRetry.onConflict(
          ValidationException.class, attempt -> append(tables, id, logged));
    } catch (ValidationException e) {
      throw new IllegalStateException(
          "cannot append to change log " + id + ": another writer keeps adding files", e);
    }
  }

  private static List<FilesWritten> append(
      TableManager tables, TableIdentifier id, List<FilesWritten> logged) {
    TableIdentifier source = TableIdentifier.parse(logged.get(0).table());
    Table log;
    try {
      log = tables.refresh(id);
    } catch (NoSuchTableException e) {
      // Dropped since the flush (an operator who stopped keeping it): its table commits without it.
      tables.forget(id.toString());
      LOG.warn(
          "Change log {} of {} no longer exists: {} change-log file(s) of {} batch(es) not appended",
          id,
          source,
          logged.stream().mapToInt(b -> b.changelogFiles().size()).sum(),
          logged.size());
      return List.of();
    }
    if (!ChangeLogTables.isLogOf(log, source)) {
      // Dropped and made again as another table since the flush (a mirrored source table of that
      // name): its rows are not appended there. Their files are left to orphan removal.
      LOG.warn(
          "Table {} is no longer the change log of {}: {} change-log file(s) of {} batch(es) not"
              + " appended",
          id,
          source,
          logged.stream().mapToInt(b -> b.changelogFiles().size()).sum(),
          logged.size());
      return List.of();
    }
    // The offsets and the validation from one snapshot (other threads refresh the shared table).
    Snapshot base = log.snapshot(SnapshotRef.MAIN_BRANCH);
    SourceOffsets done = SourceOffsets.at(log, base);
    List<FilesWritten> todo = new ArrayList<>();
    SourceOffsets next = done;
    for (FilesWritten b : logged) {
      // Offsets of an earlier topic of the same name (deleted and created again) do not count.
      SourceOffsets ofItsTopic = done.following(b.sourceTopic(), b.sourceTopicId());
      if (b.lastOffset() > ofItsTopic.last(b.sourceTopic(), b.sourcePartition())) {
        todo.add(b);
        next = next.following(b.sourceTopic(), b.sourceTopicId())
            .with(b.sourceTopic(), b.sourcePartition(), b.lastOffset());
      }
    }
    if (todo.isEmpty()) {
      return List.of();
    }
    RowDelta append = InlineManifestWork.on(log.newRowDelta());
    if (base != null) {
      append.validateFromSnapshot(base.snapshotId());
    }
    // Without a base (the log's first append), validated against all its history: another
    // committer's append of the same round in between is a conflict, not a second copy.
    append.conflictDetectionFilter(Expressions.alwaysTrue()).validateNoConflictingDataFiles();
    for (FilesWritten b : todo) {
      for (DataFile f : b.changelogFiles(log.specs())) {
        append.addRows(f);
      }
    }
    next.recordIn(append::set);
    String loggedTable = todo.get(todo.size() - 1).tableUuid();
    if (loggedTable != null) {
      append.set(SummaryKeys.LOGGED_TABLE_UUID, loggedTable);
    }
    append.commit();
    return todo;
  }
}
