package dev.lakestream.ingest.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.MetricsReport;
import org.junit.jupiter.api.Test;

/** A round's commit on realtime, against what other writers committed since its base. */
class RoundDeltaTest {

  private static final Schema SCHEMA = KeyFiles.ID_NAME;

  @Test
  void aTruncateWhoseFilesACompactionReplacedMeanwhileConflictsInsteadOfLeavingTheirRows()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", SCHEMA).create();
      DataFile before = KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10));
      table.newAppend().appendFile(before).commit();
      table
          .manageSnapshots()
          .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
          .commit();
      Snapshot base = table.snapshot(Branches.REALTIME);
      FilesWritten truncate = new FilesWritten(
          "t.items",
          "items",
          0,
          5,
          5,
          1,
          0,
          0,
          0L,
          List.of(),
          List.of(),
          0L,
          null,
          null,
          null,
          null,
          SourcePositions.toHex(SourcePositions.encode(new long[] {100})));
      RoundDelta round = RoundDelta.of(
          table, base, "t.items", List.of(truncate), SourceOffsets.empty().with("items", 0, 5));

      // A compaction replaces the file the truncate removes, before the truncate commits.
      DataFile compacted = KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10));
      table
          .newRewrite()
          .toBranch(Branches.REALTIME)
          .validateFromSnapshot(base.snapshotId())
          .dataSequenceNumber(base.sequenceNumber())
          .rewriteFiles(Set.of(before), Set.of(compacted))
          .commit();

      assertThatThrownBy(() -> round.delta.commit())
          .as("a truncate that would remove a file no longer there, leaving its rows compacted")
          .isInstanceOf(ValidationException.class);
      table.refresh();
      assertThat(BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME)))
          .containsOnlyKeys(compacted.location());
    }
  }

  @Test
  void changesCommittedWellAfterATruncateAreKeptThoughTheSourcesPositionsStartedOverBelowIt()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtimeTable(warehouse);
      long truncatedAtMs = 1_700_000_000_000L;
      commit(table, batch(table, 0, 5, hex(100), truncatedAtMs, null, true));
      assertThat(ids(table)).isEmpty();
      assertThat(table.snapshot(Branches.REALTIME).summary())
          .containsEntry(SummaryKeys.TRUNCATED_AT, hex(100))
          .containsEntry(SummaryKeys.TRUNCATED_AT_TS_MS, Long.toString(truncatedAtMs));

      // Another partition's batch from before the truncate, committed after it: trimmed.
      commit(table, batch(table, 1, 7, hex(60), truncatedAtMs - 500, KeyFiles.ids(20, 25), false));
      assertThat(ids(table)).as("changes from before the truncate").isEmpty();

      // The connector now reads a source whose positions are lower (a restored or promoted
      // database): its changes committed minutes after the truncate, at positions before it.
      long later = truncatedAtMs + 5 * 60_000;
      commit(table, batch(table, 0, 9, hex(40), later, KeyFiles.ids(30, 35), false));
      assertThat(ids(table))
          .as("changes of the source that started over")
          .containsExactlyInAnyOrderElementsOf(KeyFiles.ids(30, 35));

      // A truncate on that source, below the first one's position: applied.
      commit(table, batch(table, 0, 12, hex(45), later + 1_000, null, true));
      assertThat(ids(table)).as("after the new source's truncate").isEmpty();
      commit(table, batch(table, 1, 14, hex(47), later + 2_000, KeyFiles.ids(40, 42), false));
      assertThat(ids(table)).containsExactlyInAnyOrderElementsOf(KeyFiles.ids(40, 42));
    }
  }

  @Test
  void aMysqlChangeLoggedBeforeATruncateIsTrimmedHoweverLateItsStatementStarted() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtimeTable(warehouse);
      long truncatedAtMs = 1_700_000_000_000L;
      commit(table, batch(table, 0, 5, binlog(3, 900), truncatedAtMs, null, true));
      // A transaction that held the table's lock while the TRUNCATE waited: its later statements
      // started minutes after the truncate's and are logged before it.
      commit(
          table,
          batch(table, 1, 7, binlog(3, 800), truncatedAtMs + 300_000, KeyFiles.ids(20, 25), false));
      assertThat(ids(table)).as("changes logged before the truncate").isEmpty();
    }
  }

  /**
   * Two committers of one table (a task moved while its old owner is still committing): the old
   * owner's round, built from offsets that another commit has replaced since, is refused though
   * that commit added no file (a truncate that removed whole files). Committed, its summary, written
   * whole from the older offsets, would have taken back the truncate's offset and position: the
   * rows it carries from before the truncate would have stayed, and so would every later batch's.
   */
  @Test
  void aRoundBuiltFromOffsetsAnotherCommitReplacedIsRefusedThoughThatCommitAddedNoFile()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtimeTable(warehouse);
      long ts = 1_700_000_000_000L;
      commit(table, batch(table, 1, 3, hex(20), ts, KeyFiles.ids(10, 12), false));
      Snapshot base = table.snapshot(Branches.REALTIME);
      RoundDelta old = RoundDelta.of(
          table,
          base,
          "t.items",
          List.of(batch(table, 1, 7, hex(60), ts, KeyFiles.ids(20, 25), false)),
          SourceOffsets.at(table, base).with("items", 1, 7));

      commit(table, batch(table, 0, 5, hex(100), ts + 10, null, true));
      Snapshot truncated = table.snapshot(Branches.REALTIME);
      assertThat(truncated.addedDataFiles(table.io()))
          .as("files the truncate added")
          .isEmpty();
      assertThat(truncated.addedDeleteFiles(table.io())).isEmpty();

      assertThatThrownBy(() -> old.delta.commit())
          .as("a round built from the offsets before the truncate's")
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining("another commit recorded offsets");
      table.refresh();
      assertThat(table.snapshot(Branches.REALTIME).snapshotId()).isEqualTo(truncated.snapshotId());
      assertThat(ids(table)).isEmpty();

      // Built again from the branch as it is, the round is trimmed by the truncate.
      commit(table, batch(table, 1, 7, hex(60), ts, KeyFiles.ids(20, 25), false));
      assertThat(ids(table)).as("changes from before the truncate").isEmpty();
      assertThat(table.snapshot(Branches.REALTIME).summary())
          .containsEntry(SummaryKeys.TRUNCATED_AT, hex(100));
    }
  }

  /** A round's commit reaches the catalog's metrics reporter (the commit and retry counters). */
  @Test
  void aRoundsCommitIsReportedToTheTablesMetricsReporter() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtimeTable(warehouse);
      List<MetricsReport> reports = new ArrayList<>();
      ((BaseTable) table).combineMetricsReporter(reports::add);
      commit(table, batch(table, 1, 3, hex(20), 1_000L, KeyFiles.ids(10, 12), false));
      assertThat(reports).hasAtLeastOneElementOfType(CommitReport.class);
    }
  }

  /** A table with ten rows and a realtime branch. */
  private static Table realtimeTable(TemporaryWarehouse warehouse) throws Exception {
    Table table = warehouse.v3Table("t", "items", SCHEMA).create();
    table
        .newAppend()
        .appendFile(KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10)))
        .commit();
    table
        .manageSnapshots()
        .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
        .commit();
    return table;
  }

  /** A MySQL position: binlog file, position, row. */
  private static String binlog(long file, long position) {
    return SourcePositions.toHex(SourcePositions.encode(new long[] {file, position, 0}));
  }

  /**
   * One batch of partition {@code partition} ending at {@code offset}, at source position {@code
   * position} and commit time {@code tsMs}: a truncate, or the rows {@code ids}.
   */
  private static FilesWritten batch(
      Table table,
      int partition,
      long offset,
      String position,
      long tsMs,
      List<Object> ids,
      boolean truncate)
      throws Exception {
    return new FilesWritten(
        "t.items",
        "items",
        partition,
        offset,
        offset,
        1,
        ids == null ? 0 : ids.size(),
        0,
        tsMs,
        ids == null
            ? List.of()
            : List.of(DataFileJson.of(KeyFiles.data(table, SCHEMA, ids), table.specs())),
        List.of(),
        0L,
        null,
        null,
        truncate ? null : position,
        truncate ? null : position,
        truncate ? position : null,
        null,
        null,
        tsMs);
  }

  /** A PostgreSQL position: the change's LSN after the commit at the same LSN. */
  private static String hex(long position) {
    return SourcePositions.toHex(SourcePositions.encode(new long[] {position, position}));
  }

  private static void commit(Table table, FilesWritten batch) {
    table.refresh();
    Snapshot base = table.snapshot(Branches.REALTIME);
    SourceOffsets next = SourceOffsets.at(table, base)
        .with(batch.sourceTopic(), batch.sourcePartition(), batch.lastOffset());
    RoundDelta.of(table, base, "t.items", List.of(batch), next).delta.commit();
  }

  private static List<Object> ids(Table table) throws Exception {
    table.refresh();
    List<Object> ids = new ArrayList<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table)
        .useSnapshot(table.snapshot(Branches.REALTIME).snapshotId())
        .build()) {
      rows.forEach(r -> ids.add(r.getField("id")));
    }
    return ids;
  }
}
