package dev.lakestream.ingest.commit;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.InlineManifestWork;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.SummaryKeys;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One round of batches made into the RowDelta of one realtime snapshot: their files added, a
 * truncate among them applied ({@link Truncation#plan}), batches from before the table's latest
 * truncate trimmed of what precedes it ({@link Truncation#trim}), and the summary: the committed
 * offsets, the truncate position, the newest source time, the batch count. The delta validates that
 * nobody added files to the branch since {@code base}.
 */
final class RoundDelta {

  private static final Logger LOG = LoggerFactory.getLogger(RoundDelta.class);

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
  /** Files this round wrote itself (truncate deletes, trimmed data files): deleted if the commit fails. */
  final List<String> writtenHere = new ArrayList<>();
  /** Files of trimmed batches that the round replaced: deleted once it commits. */
  final List<String> obsolete = new ArrayList<>();

  private RoundDelta(RowDelta delta, String truncatedAt) {
    this.delta = delta;
    this.truncatedAt = truncatedAt;
  }

  /** The round over {@code base}, the realtime head its offsets {@code next} were read from. */
  static RoundDelta of(
      Table table,
      Snapshot base,
      String tableName,
      List<FilesWritten> batches,
      SourceOffsets next) {
    RowDelta delta = InlineManifestWork.on(table.newRowDelta()).toBranch(Branches.REALTIME);
    if (base != null) {
      delta
          .validateFromSnapshot(base.snapshotId())
          .conflictDetectionFilter(Expressions.alwaysTrue())
          .validateNoConflictingDataFiles()
          .validateNoConflictingDeleteFiles();
    }
    RoundDelta round = new RoundDelta(delta, next.truncatedAt());
    for (FilesWritten batch : batches) {
      round.add(table, tableName, base, batch);
    }
    next.recordIn(delta::set);
    if (round.truncatedAt != null) {
      delta.set(SummaryKeys.TRUNCATED_AT, round.truncatedAt);
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
    } else if (truncatedAt != null) {
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

  /** Applies a truncate newer than the one the table had; its delete files (none for an older one). */
  private List<DeleteFile> truncate(
      Table table, String tableName, Snapshot base, FilesWritten batch) {
    if (truncatedAt != null
        && SourcePositions.compare(
                SourcePositions.fromHex(batch.truncatedAt()), SourcePositions.fromHex(truncatedAt))
            <= 0) {
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
