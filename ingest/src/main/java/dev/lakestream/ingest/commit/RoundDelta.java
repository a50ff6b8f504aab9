package dev.lakestream.ingest.commit;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.InlineManifestWork;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.SummaryKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * One round of batches made into the RowDelta of one realtime snapshot: their files added, a
 * truncate among them applied ({@link Truncation#plan}), batches from before the table's latest
 * truncate trimmed of what precedes it ({@link Truncation#trim}), and the summary: the committed
 * offsets, the truncate position, the newest source time, the batch count. The delta validates that
 * nobody added files to the branch since {@code base}, and that no other commit recorded offsets
 * since ({@link RealtimeRowDelta}).
 */
final class RoundDelta {

  private static final Logger LOG = LoggerFactory.getLogger(RoundDelta.class);
  /**
   * How much later than a truncate a batch must have committed at the source for its positions not
   * to be compared with the truncate's. A change before the truncate committed before it, so at a
   * time no later; a minute leaves room for clocks and for a subscriber whose replicated
   * transactions carry their origin's times.
   */
  static final long STARTED_OVER_AFTER_MS = 60_000;
  /** The tables and truncates warned of a source that started over ({@link #startedOver}). */
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

  final RowDelta delta;
  long files;
  long bytes;
  long rows;
  long keys;
  long maxSourceTsMs = -1;
  int truncatesApplied;
  long rowsTrimmed;
  /** The truncate position every later snapshot carries, or null. */
  String truncatedAt;
  /** That truncate's source commit time, or null when not known (an older writer's). */
  Long truncatedAtTsMs;
  /** Batches left whole though their positions are before the truncate's ({@link #startedOver}). */
  int startedOverBatches;
  /** Files this round wrote itself (truncate deletes, trimmed data files): deleted if the commit fails. */
  final List<String> writtenHere = new ArrayList<>();
  /** Files of trimmed batches that the round replaced: deleted once it commits. */
  final List<String> obsolete = new ArrayList<>();

  private RoundDelta(RowDelta delta, String truncatedAt, Long truncatedAtTsMs) {
    this.delta = delta;
    this.truncatedAt = truncatedAt;
    this.truncatedAtTsMs = truncatedAtTsMs;
  }

  /** The round over {@code base}, the realtime head its offsets {@code next} were read from. */
  static RoundDelta of(
      Table table,
      Snapshot base,
      String tableName,
      List<FilesWritten> batches,
      SourceOffsets next) {
    return of(
        table,
        base,
        SourceOffsets.recordingSnapshot(table, base).map(Snapshot::snapshotId).orElse(null),
        tableName,
        batches,
        next);
  }

  /**
   * The same, {@code recordedBy} the snapshot (base or an ancestor) that recorded the offsets the
   * round was built from, or null.
   */
  static RoundDelta of(
      Table table,
      Snapshot base,
      Long recordedBy,
      String tableName,
      List<FilesWritten> batches,
      SourceOffsets next) {
    RowDelta delta = InlineManifestWork.on((RowDelta) new RealtimeRowDelta(table, recordedBy))
        .toBranch(Branches.REALTIME);
    if (base != null) {
      delta
          .validateFromSnapshot(base.snapshotId())
          .conflictDetectionFilter(Expressions.alwaysTrue())
          .validateNoConflictingDataFiles()
          .validateNoConflictingDeleteFiles();
    }
    RoundDelta round = new RoundDelta(delta, next.truncatedAt(), next.truncatedAtTsMs());
    for (FilesWritten batch : batches) {
      round.add(table, tableName, base, batch);
    }
    next.recordIn(delta::set);
    if (round.truncatedAt != null) {
      delta.set(SummaryKeys.TRUNCATED_AT, round.truncatedAt);
      if (round.truncatedAtTsMs != null) {
        delta.set(SummaryKeys.TRUNCATED_AT_TS_MS, Long.toString(round.truncatedAtTsMs));
      }
    }
    delta.set(SummaryKeys.MAX_SOURCE_TS_MS, Long.toString(round.maxSourceTsMs));
    delta.set(SummaryKeys.BATCHES, Integer.toString(batches.size()));
    return round;
  }

  private void add(Table table, String tableName, Snapshot base, FilesWritten batch) {
    List<DataFile> dataFiles = batch.dataFiles(table.specs());
    List<DeleteFile> deleteFiles = batch.deleteFiles(table.specs());
    if (batch.isTruncate()) {
      deleteFiles = truncate(table, tableName, base, batch);
    } else if (truncatedAt != null && !startedOver(tableName, batch, batch.minSourceTsMs())) {
      Truncation.Trimmed trimmed =
          Truncation.trim(table, batch, SourcePositions.fromHex(truncatedAt));
      if (trimmed != null) {
        dataFiles = trimmed.dataFiles();
        deleteFiles = trimmed.deleteFiles();
        trimmed.dataFiles().forEach(f -> writtenHere.add(f.location()));
        obsolete.addAll(trimmed.obsolete());
        rowsTrimmed += trimmed.rowsDropped();
      }
    }
    for (DataFile f : dataFiles) {
      delta.addRows(f);
      files++;
      bytes += f.fileSizeInBytes();
    }
    for (DeleteFile f : deleteFiles) {
      delta.addDeletes(f);
      files++;
      bytes += f.fileSizeInBytes();
    }
    rows += batch.dataRows();
    keys += batch.deleteKeys();
    maxSourceTsMs = Math.max(maxSourceTsMs, batch.maxSourceTsMs());
  }

  /**
   * Whether {@code batch}, every change of which committed at the source at {@code sinceTsMs} or
   * later, committed more than {@link #STARTED_OVER_AFTER_MS} after the table's latest truncate
   * while its positions say it is before it: the source's positions started over (the connector
   * now reads another database: a restored or promoted one, another cluster), so the positions of its changes say nothing of their order against that truncate, and
   * the batch is not trimmed by them (a truncate of it is applied). Positions alone would drop every
   * change of the new source until its positions passed the old truncate's. False when either time
   * is unknown (written by an older version, or a change without one), and for MySQL and MariaDB
   * positions.
   */
  private boolean startedOver(String tableName, FilesWritten batch, Long sinceTsMs) {
    if (truncatedAtTsMs == null
        || truncatedAtTsMs <= 0
        || sinceTsMs == null
        || sinceTsMs <= truncatedAtTsMs + STARTED_OVER_AFTER_MS
        // Only where a change's time is its commit's: a MySQL or MariaDB change carries its
        // statement's start, and a transaction holding the table's lock while a TRUNCATE waits logs
        // changes before it whose statements started minutes after the truncate's.
        || !SourcePositions.isPostgres(SourcePositions.fromHex(truncatedAt))) {
      return false;
    }
    String position = batch.isTruncate() ? batch.truncatedAt() : batch.minPosition();
    if (position != null
        && SourcePositions.compare(
                SourcePositions.fromHex(position), SourcePositions.fromHex(truncatedAt))
            < 0) {
      startedOverBatches++;
      // Once per table and truncate in a process: every batch of the new source is such a batch
      // until its positions pass the truncate's (counted in the metric).
      LOG.atLevel(WARNED.add(tableName + '\u0000' + truncatedAt) ? Level.WARN : Level.DEBUG)
          .log(
              "{}: {}@{}..{} committed at the source {} s after the table's latest TRUNCATE (at {}),"
                  + " but its positions (from {}) are before that truncate's: the source's positions"
                  + " started over, so they are not compared with it",
              tableName,
              batch.sourcePartitionName(),
              batch.firstOffset(),
              batch.lastOffset(),
              (sinceTsMs - truncatedAtTsMs) / 1000,
              truncatedAt,
              position);
    }
    return true;
  }

  /** Applies a truncate newer than the one the table had; its delete files (none for an older one). */
  private List<DeleteFile> truncate(
      Table table, String tableName, Snapshot base, FilesWritten batch) {
    if (truncatedAt != null
        && SourcePositions.compare(
                SourcePositions.fromHex(batch.truncatedAt()), SourcePositions.fromHex(truncatedAt))
            <= 0
        && !startedOver(tableName, batch, batch.maxSourceTsMs())) {
      LOG.info(
          "TRUNCATE of {} at {} ({}@{}) is older than the one applied at {}: nothing more to remove",
          tableName,
          batch.truncatedAt(),
          batch.sourcePartitionName(),
          batch.lastOffset(),
          truncatedAt);
      return List.of();
    }
    Truncation.Plan plan = Truncation.plan(
        table, base, SourcePositions.fromHex(batch.truncatedAt()), batch.sourcePartition());
    plan.remove().forEach(delta::removeRows);
    if (!plan.remove().isEmpty()) {
      // A compaction that replaced one of them since the base holds its rows in a file the plan
      // did not see: the commit then fails, and the round is planned again from the new head.
      delta.validateDeletedFiles();
    }
    plan.deletes().forEach(f -> writtenHere.add(f.location()));
    truncatedAt = batch.truncatedAt();
    truncatedAtTsMs = batch.maxSourceTsMs() >= 0 ? batch.maxSourceTsMs() : null;
    delta.set(SummaryKeys.TRUNCATE_FILES_REMOVED, Integer.toString(plan.remove().size()));
    delta.set(SummaryKeys.TRUNCATE_ROWS_DELETED, Long.toString(plan.rowsDeleted()));
    truncatesApplied++;
    LOG.info(
        "TRUNCATE of {} at {} ({}@{}): {} data files removed whole, {} rows deleted from files that straddle it",
        tableName,
        batch.truncatedAt(),
        batch.sourcePartitionName(),
        batch.lastOffset(),
        plan.remove().size(),
        plan.rowsDeleted());
    return plan.deletes();
  }
}
