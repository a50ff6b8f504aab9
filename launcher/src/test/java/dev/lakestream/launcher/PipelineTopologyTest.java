package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.ColumnType;
import dev.lakestream.testkit.LostReplyJdbcDriver;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TestTable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ingest and sync chained over a real local warehouse: after every sync cycle main equals the
 * independent model of the source table, and Verify's invariants hold.
 */
class PipelineTopologyTest {

  /** Maps the topics of {@link #threePartitionsOf} to their table. */
  private static final Map<String, String> PARTITIONS_AS_ONE_TABLE =
      Map.of(IngestConfig.TABLE_NAME_REGEX, "^[^.]+\\.([^.]+)\\.([^.]+)\\.p[0-9]$");

  private static final int CHANGES_PER_SEED = 7_000;

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {101, 202, 303})
  void mainEqualsModelAndInvariantsHoldAfterEveryCycle(long seed) throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed);
      Random random = new Random(seed);
      pipeline.send(gen.snapshot(500));
      pipeline.ingestCommit();
      assertThat(pipeline.sync()).hasSize(1);
      assertCycle(pipeline, table, 0);
      int sent = 0;
      int cycles = 0;
      while (sent < CHANGES_PER_SEED) {
        int commits = 1 + random.nextInt(3);
        for (int i = 0; i < commits; i++) {
          List<Change> batch = gen.next(1 + random.nextInt(300));
          pipeline.send(batch);
          sent += batch.size();
          pipeline.ingestCommit();
        }
        List<MainCommitted> committed = pipeline.sync();
        assertThat(committed).as("one main snapshot per cycle").hasSize(1);
        assertCycle(pipeline, table, ++cycles);
      }
      assertThat(pipeline.syncCounter("lakestream.sync.keys.converted")).isGreaterThan(0);
    }
  }

  /**
   * The catalog database applies a commit but its reply is lost (the connection fails after the
   * update ran), for every third commit of ingest and sync: Iceberg's JDBC pool runs the update
   * again and the catalog reports the commit refused. Main still equals the model after every
   * cycle, with every snapshot of the table readable.
   */
  @Test
  void commitsWhoseRepliesAreLostAreOnMainOnceAndEverySnapshotStaysReadable() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    List<String> database = new ArrayList<>();
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), Map.of(), uri -> {
      database.add(uri);
      return LostReplyJdbcDriver.url(uri);
    })) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 404);
      Random random = new Random(404);
      pipeline.send(gen.snapshot(300));
      pipeline.ingestCommit();
      pipeline.sync();
      LostReplyJdbcDriver.loseEvery(database.get(0), 3);
      for (int cycle = 1; cycle <= 12; cycle++) {
        for (int i = 0, commits = 1 + random.nextInt(3); i < commits; i++) {
          pipeline.send(gen.next(1 + random.nextInt(200)));
          pipeline.ingestCommit();
        }
        pipeline.sync();
        assertCycle(pipeline, table, cycle);
        Table read = pipeline.table(table);
        for (Snapshot snapshot : read.snapshots()) {
          assertThat(read.io().newInputFile(snapshot.manifestListLocation()).exists())
              .as("manifest list of snapshot %s after cycle %d", snapshot.snapshotId(), cycle)
              .isTrue();
        }
      }
      assertThat(LostReplyJdbcDriver.lost(database.get(0)))
          .as("commits whose reply was lost")
          .isGreaterThan(10);
    }
  }

  @Test
  void deleteThenReinsertOfOneKeyInOneBatchIsOnMain() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      ChangeStreamGenerator gen =
          new ChangeStreamGenerator(table, 5, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      Change insert = gen.next(1).get(0);
      pipeline.send(List.of(insert));
      pipeline.ingestCommit();
      pipeline.sync();
      Map<String, Object> back = new LinkedHashMap<>(insert.after());
      back.put("name", "back again");
      pipeline.send(List.of(
          new Change(
              'd',
              table,
              insert.key(),
              insert.after(),
              null,
              insert.sourceTsMs() + 1,
              insert.lsn() + 1),
          new Change(
              't', table, insert.key(), null, null, insert.sourceTsMs() + 1, insert.lsn() + 1),
          new Change(
              'c', table, insert.key(), null, back, insert.sourceTsMs() + 2, insert.lsn() + 2)));
      pipeline.ingestCommit();
      pipeline.sync();
      assertThat(pipeline.rows(table, Branches.MAIN).get(insert.key()).get("name"))
          .isEqualTo("back again");
      assertCycle(pipeline, table, 2);
    }
  }

  @Test
  void twentyPendingRealtimeCommitsBecomeOneMainSnapshot() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 20);
      pipeline.send(gen.snapshot(300));
      pipeline.ingestCommit();
      pipeline.sync();
      int mainBefore = pipeline.snapshots(table, Branches.MAIN).size();
      int realtimeBefore = pipeline.snapshots(table, Branches.REALTIME).size();
      for (int i = 0; i < 20; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
      }
      assertThat(pipeline.snapshots(table, Branches.REALTIME)).hasSize(realtimeBefore + 20);

      List<MainCommitted> committed = pipeline.sync();

      assertThat(committed).hasSize(1);
      List<Snapshot> main = pipeline.snapshots(table, Branches.MAIN);
      assertThat(main).hasSize(mainBefore + 1);
      assertThat(main.get(main.size() - 1).summary())
          .containsEntry(SummaryKeys.REALTIME_SNAPSHOTS, "20");
      assertCycle(pipeline, table, 1);
    }
  }

  @Test
  void dataFilesOnMainKeepTheirRealtimeSequenceNumbers() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 21);
      for (int i = 0; i < 5; i++) {
        pipeline.send(gen.next(200));
        pipeline.ingestCommit();
      }
      pipeline.sync();
      Table t = pipeline.table(table);
      Map<String, DataFile> main = BranchFiles.liveDataFiles(t, t.snapshot(Branches.MAIN));
      Map<String, DataFile> realtime = BranchFiles.liveDataFiles(t, t.snapshot(Branches.REALTIME));
      assertThat(main.keySet()).isEqualTo(realtime.keySet()).hasSize(5);
      for (DataFile f : main.values()) {
        assertThat(f.dataSequenceNumber())
            .isEqualTo(realtime.get(f.location()).dataSequenceNumber());
        assertThat(f.dataSequenceNumber()).isLessThan(t.snapshot(Branches.MAIN).sequenceNumber());
      }
      assertThat(main.values().stream().map(DataFile::dataSequenceNumber).distinct())
          .hasSize(5);
    }
  }

  @Test
  void eachDataFileIsReadOncePerCycle() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 22);
      pipeline.send(gen.snapshot(1000));
      pipeline.ingestCommit();
      for (int i = 0; i < 6; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
      }
      pipeline.sync();
      pipeline.sync();
      double before = pipeline.syncCounter("lakestream.sync.convert.files.scanned");
      for (int i = 0; i < 6; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
      }
      List<MainCommitted> committed = pipeline.sync();
      assertThat(committed).hasSize(1);
      Snapshot head = pipeline.table(table).snapshot(Branches.MAIN);
      long scanned = Long.parseLong(head.summary().get(SummaryKeys.FILES_SCANNED));
      int liveFiles = BranchFiles.liveDataFiles(pipeline.table(table), head).size();
      assertThat(pipeline.syncCounter("lakestream.sync.convert.files.scanned") - before)
          .as("converter reads in the cycle")
          .isEqualTo(scanned);
      assertThat(scanned)
          .as("each data file read at most once")
          .isLessThanOrEqualTo(liveFiles)
          .isGreaterThan(1);
      assertCycle(pipeline, table, 2);
    }
  }

  @Test
  void backstopTimerSyncsWithoutAnyEvent() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 23);
      pipeline.send(gen.next(100));
      pipeline.ingestCommit();
      pipeline.sync();
      pipeline.send(gen.next(100));
      pipeline.ingestCommit();
      assertThat(pipeline.syncBackstop()).hasSize(1);
      assertCycle(pipeline, table, 2);
    }
  }

  @Test
  void compactionOnRealtimeIsMirroredOnMainWhileIngestKeepsCommitting() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 24);
      pipeline.send(gen.snapshot(500));
      pipeline.ingestCommit();
      for (int i = 0; i < 6; i++) {
        pipeline.send(gen.next(200));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      assertCycle(pipeline, table, 6);
      int filesBefore = BranchFiles.liveDataFiles(
              pipeline.table(table), pipeline.table(table).snapshot(Branches.REALTIME))
          .size();

      RealtimeCompaction compaction = RealtimeCompaction.prepare(pipeline.table(table));
      // Ingest commits updates and deletes of the rows being compacted while the compaction runs.
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(200));
        pipeline.ingestCommit();
      }
      compaction.commit();
      assertThat(pipeline.rows(table, Branches.REALTIME))
          .as("realtime after the compaction")
          .isEqualTo(pipeline.model(table).rows());

      List<MainCommitted> mirrored = pipeline.sync();
      assertThat(mirrored).hasSize(1);
      assertThat(mirrored.get(0).dataFilesRemoved())
          .as("every data file but the newest, which the compaction leaves in place")
          .isEqualTo(filesBefore - 1);
      assertCycle(pipeline, table, 7);
      Table t = pipeline.table(table);
      assertThat(BranchFiles.liveDataFiles(t, t.snapshot(Branches.MAIN)))
          .as("the compacted file, the one left in place, the three committed meanwhile")
          .hasSize(5);

      pipeline.send(gen.next(300));
      pipeline.ingestCommit();
      pipeline.sync();
      assertCycle(pipeline, table, 8);
    }
  }

  @Test
  void randomUuidKeysThroughUpdatesDeletesAndCompactions() throws Exception {
    TestTable table = TestTable.uuidKeyed("app", "sessions");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      cyclesWithCompactions(pipeline, table, 25, 1_000, 400, 12, 4);
      // Iceberg 1.12 compares UUIDs as signed longs, Parquet's bounds are unsigned: files record
      // none.
      Table t = pipeline.table(table);
      int idField = t.schema().findField("id").fieldId();
      int tagField = t.schema().findField("tag").fieldId();
      for (DataFile f :
          BranchFiles.liveDataFiles(t, t.snapshot(Branches.REALTIME)).values()) {
        assertThat(f.lowerBounds()).doesNotContainKeys(idField, tagField);
      }
      for (var d : BranchFiles.liveDeleteFiles(t, t.snapshot(Branches.REALTIME))) {
        assertThat(d.lowerBounds() == null ? Map.of() : d.lowerBounds())
            .doesNotContainKeys(idField);
      }
    }
  }

  /**
   * Source columns named like Iceberg's metadata columns are the table's own: readers tell them
   * apart by field id, through updates, deletes and compactions. ({@code _pos} is refused: Iceberg's
   * Java readers cannot apply position deletes to a table with it, see PoisonRecordTest.)
   */
  @Test
  void columnsNamedLikeIcebergsMetadataColumnsAreTheTablesOwn() throws Exception {
    List<TestTable.Column> columns = new ArrayList<>();
    columns.add(new TestTable.Column("id", ColumnType.INT64));
    for (String name : List.of(
        "_file",
        "_row_id",
        "_last_updated_sequence_number",
        "_deleted",
        "_spec_id",
        "_partition",
        "_change_type")) {
      columns.add(new TestTable.Column(name, ColumnType.INT64));
    }
    TestTable table = new TestTable("dbserver1", "app", "reserved", columns, List.of("id"));
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      cyclesWithCompactions(pipeline, table, 26, 500, 300, 8, 3);
      assertThat(pipeline.table(table).schema().columns()).hasSize(columns.size());
    }
  }

  /**
   * Source tables named like Iceberg's metadata tables ({@code history}, {@code files}, ...): a
   * catalog loads a table of the name before it looks for a metadata table, so they are mirrored
   * like any other, through updates, deletes and compactions.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"files", "history", "snapshots", "entries", "partitions", "refs"})
  void tablesNamedLikeIcebergsMetadataTablesAreMirrored(String name) throws Exception {
    TestTable plain = TestTable.plain("app", "x");
    TestTable table = new TestTable("dbserver1", "app", name, plain.columns(), plain.key());
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      cyclesWithCompactions(pipeline, table, 27, 100, 100, 4, 2);
    }
  }

  /**
   * A table whose topic has three partitions (here three topics mapped to one table, so the test
   * controls the interleaving): the changes of each key on its own partition, each TRUNCATE on one
   * partition, delivered partition by partition in random runs, flushed and committed at random
   * moments, so batches before, around and after each truncate meet the committer in every order.
   * After every round realtime and main equal the model, which applied everything in source order.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {31, 32, 33})
  void truncatesWithChangesInFlightOnEveryPartitionLeaveExactlyTheRowsChangedAfterThem(long seed)
      throws Exception {
    truncatesInFlight(TestTable.plain("app", "accounts"), seed, true);
  }

  /**
   * The same with a table of more than 100 columns: Iceberg keeps no bounds of the columns past
   * its first 100 ({@code write.metadata.metrics.max-inferred-column-defaults}), so the files of
   * such a table carry no bounds of their source positions: a truncate reads them, removes whole
   * those with no live row after it, and deletes the rows before it from the others (a file with
   * rows after the truncate was removed whole before).
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {34})
  void truncatesOfATableOfMoreThan100ColumnsLeaveExactlyTheRowsChangedAfterThem(long seed)
      throws Exception {
    TestTable table = TestTable.plain("app", "ledger");
    for (int c = 1; c <= 100; c++) {
      table = table.withColumn("c" + c, c % 2 == 0 ? ColumnType.INT32 : ColumnType.STRING);
    }
    truncatesInFlight(table, seed, true);
  }

  /**
   * The same with changes that carry no commit LSN (PostgreSQL's connector sends none in the first
   * transaction it streams after a restart): each is placed against the truncates by its own LSN,
   * as a truncate without one is, so it is neither removed by a truncate it follows nor kept past
   * one it precedes, whichever partition's batch reaches the committer first.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {35})
  void truncatesAmongChangesWithoutACommitLsnLeaveExactlyTheRowsChangedAfterThem(long seed)
      throws Exception {
    truncatesInFlight(TestTable.plain("app", "accounts"), seed, false);
  }

  /** The three topics that stand for the three partitions of {@code table}'s topic. */
  private static List<String> threePartitionsOf(TestTable table) {
    return List.of(table.topic() + ".p0", table.topic() + ".p1", table.topic() + ".p2");
  }

  private static void truncatesInFlight(TestTable table, long seed, boolean commitLsn)
      throws Exception {
    List<String> partitions = threePartitionsOf(table);
    try (PipelineDriver pipeline = new PipelineDriver(partitions, PARTITIONS_AS_ONE_TABLE)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed);
      Random random = new Random(seed);
      for (int round = 1; round <= 8; round++) {
        List<List<Change>> queues =
            List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        List<Change> changes = new ArrayList<>(gen.next(50 + random.nextInt(250)));
        if (round % 4 != 0) {
          changes.add(gen.truncate());
          changes.addAll(gen.next(random.nextInt(200)));
        }
        for (Change c : changes) {
          int p = c.isTruncate() ? random.nextInt(3) : Math.floorMod(c.key().hashCode(), 3);
          queues.get(p).add(c);
        }
        pipeline.model(table).applyAll(changes);
        deliverInRandomRuns(pipeline, partitions, queues, random, commitLsn);
        assertRealtimeThenMain(pipeline, table, round);
      }
      // Every path was taken: files removed whole, rows deleted from files that straddle a
      // truncate, and batches of other partitions trimmed of the changes from before it.
      List<Map<String, String>> truncates = pipeline.snapshots(table, Branches.REALTIME).stream()
          .map(Snapshot::summary)
          .filter(s -> s.containsKey(SummaryKeys.TRUNCATE_FILES_REMOVED))
          .toList();
      assertThat(truncates).hasSizeGreaterThanOrEqualTo(3);
      assertThat(truncates.stream()
              .mapToLong(s -> Long.parseLong(s.get(SummaryKeys.TRUNCATE_FILES_REMOVED)))
              .sum())
          .isPositive();
      assertThat(truncates.stream()
              .mapToLong(s -> Long.parseLong(s.get(SummaryKeys.TRUNCATE_ROWS_DELETED)))
              .sum())
          .isPositive();
      assertThat(pipeline
              .ingestMeters()
              .counter("lakestream.realtime.rows.before.truncate")
              .count())
          .isPositive();
    }
  }

  /**
   * TRUNCATEs that ingest reads before any change of their table: the table's rows from before
   * them are on the topic's other partitions, read afterwards (a backlog read partition by
   * partition). The truncates wait for the table, and the rows of before them that the other
   * partitions then bring are removed; of the truncates of one partition only the last waits (one
   * truncate snapshot on realtime), and it removes what all of them would. A later round of changes
   * and a truncate, in random runs, goes on as usual. After every round realtime and main equal
   * the model, which applied everything in source order.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {36, 37})
  void truncatesReadBeforeTheirTableExistsRemoveTheRowsOtherPartitionsBringFromBeforeThem(long seed)
      throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    List<String> partitions = threePartitionsOf(table);
    try (PipelineDriver pipeline = new PipelineDriver(partitions, PARTITIONS_AS_ONE_TABLE)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed);
      Random random = new Random(seed);
      for (int round = 1; round <= 2; round++) {
        List<List<Change>> queues =
            List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        List<Change> changes = new ArrayList<>(gen.next(150 + random.nextInt(150)));
        changes.add(gen.truncate());
        changes.addAll(gen.next(50 + random.nextInt(100)));
        if (round == 1) {
          changes.add(gen.truncate());
          changes.addAll(gen.next(50 + random.nextInt(100)));
        }
        for (Change c : changes) {
          // The truncates on p0, every key's changes on p1 or p2: p0 holds no row of the table.
          queues
              .get(c.isTruncate() ? 0 : 1 + Math.floorMod(c.key().hashCode(), 2))
              .add(c);
        }
        pipeline.model(table).applyAll(changes);
        if (round == 1) {
          pipeline.sendOnly(partitions.get(0), new ArrayList<>(queues.get(0)), true);
          queues.get(0).clear();
          pipeline.ingestCommit();
          pipeline.ingestCommit();
          assertThat(pipeline.tableExists(table))
              .as("no change has created the table yet")
              .isFalse();
        }
        deliverInRandomRuns(pipeline, partitions, queues, random, true);
        assertRealtimeThenMain(pipeline, table, round);
      }
      List<Map<String, String>> truncates = pipeline.snapshots(table, Branches.REALTIME).stream()
          .map(Snapshot::summary)
          .filter(s -> s.containsKey(SummaryKeys.TRUNCATE_FILES_REMOVED))
          .toList();
      assertThat(truncates).as("one truncate of each round on realtime").hasSize(2);
    }
  }

  /**
   * Sends the queued changes of each partition, in order, in runs of random length from randomly
   * chosen partitions, committing to realtime and syncing at random moments.
   */
  private static void deliverInRandomRuns(
      PipelineDriver pipeline,
      List<String> partitions,
      List<List<Change>> queues,
      Random random,
      boolean commitLsn) {
    while (queues.stream().anyMatch(q -> !q.isEmpty())) {
      int p = random.nextInt(queues.size());
      List<Change> q = queues.get(p);
      int n = Math.min(q.size(), 1 + random.nextInt(40));
      pipeline.sendOnly(partitions.get(p), new ArrayList<>(q.subList(0, n)), commitLsn);
      q.subList(0, n).clear();
      if (random.nextInt(4) == 0) {
        pipeline.ingestCommit();
      }
      if (random.nextInt(6) == 0) {
        pipeline.sync();
      }
    }
  }

  /** Commits what ingest holds, checks realtime against the model, then syncs and checks main. */
  private static void assertRealtimeThenMain(PipelineDriver pipeline, TestTable table, int round)
      throws Exception {
    pipeline.ingestCommit();
    pipeline.ingestCommit();
    assertThat(TableComparison.differences(
            pipeline.model(table).rows(), pipeline.rows(table, Branches.REALTIME)))
        .as("realtime after round %d", round)
        .isNull();
    pipeline.sync();
    assertCycle(pipeline, table, round);
  }

  /**
   * A snapshot of {@code rows} rows, then {@code cycles} cycles of up to {@code changes} random
   * changes, realtime compacted before every {@code compactEvery}th cycle's sync; main checked
   * against the model after each.
   */
  private static void cyclesWithCompactions(
      PipelineDriver pipeline,
      TestTable table,
      long seed,
      int rows,
      int changes,
      int cycles,
      int compactEvery)
      throws Exception {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed);
    Random random = new Random(seed);
    pipeline.send(gen.snapshot(rows));
    pipeline.ingestCommit();
    pipeline.sync();
    for (int cycle = 1; cycle <= cycles; cycle++) {
      pipeline.send(gen.next(1 + random.nextInt(changes)));
      pipeline.ingestCommit();
      if (cycle % compactEvery == 0) {
        RealtimeCompaction.prepare(pipeline.table(table)).commit();
      }
      pipeline.sync();
      assertCycle(pipeline, table, cycle);
    }
  }

  private static void assertCycle(PipelineDriver pipeline, TestTable table, int cycle) {
    assertThat(pipeline.mainDiffersFromModel(table))
        .as("main vs model after cycle %d", cycle)
        .isNull();
    var report = pipeline.verify(table);
    assertThat(report.passed())
        .as("invariants after cycle %d: %s", cycle, report)
        .isTrue();
  }
}
