package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.ColumnType;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TestTable;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The key index resolver against the scan resolver: two pipelines fed the same changes (random
 * workloads with key updates, deletes and re-inserts, realtime compactions mirrored on main,
 * expired realtime snapshots that force the live-set diff), one converting with each resolver.
 * After every cycle both mains equal the model, the invariants hold, and both deleted exactly the
 * same rows (data file by sequence number and row count, position).
 */
class KeyIndexResolverTest {

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {61, 62})
  void bothResolversDeleteTheSameRowsAfterEveryCycle(long seed) throws Exception {
    bothResolvers(TestTable.compositeKey("inventory", "orders"), seed);
  }

  /**
   * The same with a key of date and timestamp columns: a data file's keys (java.time values) and
   * its deletes' (Iceberg's internal form) must meet, in the index as in the scan.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {63})
  void aKeyOfDateAndTimestampColumnsIsResolvedAlikeByBothResolvers(long seed) throws Exception {
    bothResolvers(
        new TestTable(
            "dbserver1",
            "inventory",
            "readings",
            List.of(
                new TestTable.Column("site", ColumnType.INT64),
                new TestTable.Column("day", ColumnType.DATE),
                new TestTable.Column("taken", ColumnType.ZONED_TIMESTAMP),
                new TestTable.Column("local_at", ColumnType.MICRO_TIMESTAMP),
                new TestTable.Column("v", ColumnType.STRING)),
            List.of("site", "day", "taken", "local_at")),
        seed);
  }

  private static void bothResolvers(TestTable table, long seed) throws Exception {
    Map<String, String> index = new HashMap<>();
    index.put(MaintenanceConfig.ENABLED, "false");
    index.put(SyncConfig.RESOLVER + "." + table.schema() + "." + table.name(), "index");
    index.put(SyncConfig.INDEX_PARTITIONS, "3");
    try (PipelineDriver scanning =
            new PipelineDriver(List.of(table.topic()), Map.of(MaintenanceConfig.ENABLED, "false"));
        PipelineDriver indexed = new PipelineDriver(List.of(table.topic()), index)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed);
      Random random = new Random(seed);
      List<Change> load = gen.snapshot(800);
      both(scanning, indexed, p -> {
        p.send(load);
        p.ingestCommit();
        p.sync();
      });
      assertSame(scanning, indexed, table, 0);
      for (int cycle = 1; cycle <= 40; cycle++) {
        int commits = 1 + random.nextInt(3);
        for (int i = 0; i < commits; i++) {
          List<Change> batch = gen.next(1 + random.nextInt(250));
          both(scanning, indexed, p -> {
            p.send(batch);
            p.ingestCommit();
          });
        }
        int event = random.nextInt(10);
        if (event == 0) {
          // A compaction on realtime (deletes may land after it), mirrored by the next cycle.
          both(scanning, indexed, p -> RealtimeCompaction.prepareAll(p.table(table), 128L << 20)
              .commit());
          List<Change> after = gen.next(100);
          both(scanning, indexed, p -> {
            p.send(after);
            p.ingestCommit();
          });
        } else if (event == 1) {
          // The realtime snapshots after the watermark expire before sync hears of them.
          both(scanning, indexed, p -> {
            p.dropRealtimeEvents();
            expireUnreferenced(p.table(table));
          });
        }
        both(scanning, indexed, p -> {
          p.sync();
          p.syncBackstop();
        });
        assertSame(scanning, indexed, table, cycle);
      }
      assertThat(counter(indexed, "index")).as("files resolved by the index").isPositive();
      assertThat(counter(indexed, "scan")).as("files the index did not know").isZero();
      assertThat(indexed.syncCounter("lakestream.sync.convert.rows.scanned"))
          .as("rows scanned with the index")
          .isZero();
      assertThat(scanning.syncCounter("lakestream.sync.convert.rows.scanned")).isPositive();
    }
  }

  /**
   * An {@code int} primary key widened to {@code bigint} at the source (Debezium's key schema says
   * int32, then int64; the table's column is widened): the index keeps finding the rows indexed
   * before, and both resolvers delete the same rows.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {63})
  void aKeyWidenedFromIntToBigintIsResolvedAlikeByBothResolvers(long seed) throws Exception {
    TestTable narrow = new TestTable(
        "dbserver1",
        "inventory",
        "items",
        List.of(
            new TestTable.Column("id", ColumnType.INT32),
            new TestTable.Column("name", ColumnType.STRING),
            new TestTable.Column("qty", ColumnType.INT32)),
        List.of("id"));
    TestTable widened = new TestTable(
        "dbserver1",
        "inventory",
        "items",
        List.of(
            new TestTable.Column("id", ColumnType.INT64),
            new TestTable.Column("name", ColumnType.STRING),
            new TestTable.Column("qty", ColumnType.INT32)),
        List.of("id"));
    Map<String, String> index = new HashMap<>();
    index.put(MaintenanceConfig.ENABLED, "false");
    index.put(SyncConfig.RESOLVER, "index");
    index.put(SyncConfig.INDEX_PARTITIONS, "3");
    try (PipelineDriver scanning = new PipelineDriver(
            List.of(narrow.topic()), Map.of(MaintenanceConfig.ENABLED, "false"));
        PipelineDriver indexed = new PipelineDriver(List.of(narrow.topic()), index)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(narrow, seed);
      Random random = new Random(seed);
      List<Change> load = gen.snapshot(600);
      both(scanning, indexed, p -> {
        p.send(load);
        p.ingestCommit();
        p.sync();
      });
      for (int cycle = 1; cycle <= 16; cycle++) {
        if (cycle == 6) {
          gen.alter(widened);
        }
        List<Change> batch = gen.next(1 + random.nextInt(200));
        both(scanning, indexed, p -> {
          p.send(batch);
          p.ingestCommit();
          p.sync();
        });
        assertThat(deletedRows(indexed.table(narrow)))
            .as("rows deleted on main after cycle %d", cycle)
            .isEqualTo(deletedRows(scanning.table(narrow)));
        assertThat(TableComparison.differences(
                longKeys(indexed.model(narrow).rows()),
                longKeys(indexed.rows(narrow, Branches.MAIN))))
            .as("index: main vs model after cycle %d", cycle)
            .isNull();
      }
      assertThat(indexed.table(narrow).schema().findField("id").type())
          .isEqualTo(Types.LongType.get());
      assertThat(counter(indexed, "scan")).as("files the index did not know").isZero();
    }
  }

  /** Rows with the key as the widened column holds it (before the widening, model and table hold ints). */
  private static Map<List<Object>, Map<String, Object>> longKeys(
      Map<List<Object>, Map<String, Object>> rows) {
    Map<List<Object>, Map<String, Object>> out = new HashMap<>();
    rows.forEach((k, row) -> {
      Map<String, Object> copy = new HashMap<>(row);
      copy.put("id", ((Number) row.get("id")).longValue());
      out.put(List.of(((Number) k.get(0)).longValue()), copy);
    });
    return out;
  }

  private interface Step {
    void run(PipelineDriver p) throws Exception;
  }

  private static void both(PipelineDriver a, PipelineDriver b, Step step) throws Exception {
    step.run(a);
    step.run(b);
  }

  private static double counter(PipelineDriver p, String resolver) {
    var c = p.syncMeters
        .find("lakestream.sync.resolver.files")
        .tag("resolver", resolver)
        .counter();
    return c == null ? 0 : c.count();
  }

  private static void assertSame(
      PipelineDriver scanning, PipelineDriver indexed, TestTable table, int cycle) {
    assertThat(scanning.mainDiffersFromModel(table))
        .as("scan: main vs model after cycle %d", cycle)
        .isNull();
    assertThat(indexed.mainDiffersFromModel(table))
        .as("index: main vs model after cycle %d", cycle)
        .isNull();
    assertThat(indexed.verify(table).passed())
        .as("index: invariants after cycle %d: %s", cycle, indexed.verify(table))
        .isTrue();
    assertThat(deletedRows(indexed.table(table)))
        .as("rows deleted on main after cycle %d", cycle)
        .isEqualTo(deletedRows(scanning.table(table)));
  }

  /** Every row main's deletion vectors delete, as (data sequence number, file row count, position). */
  private static Set<List<Long>> deletedRows(Table table) {
    Snapshot main = table.snapshot(Branches.MAIN);
    Map<String, DataFile> files = BranchFiles.liveDataFiles(table, main);
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));
    Set<List<Long>> out = new HashSet<>();
    for (Map.Entry<String, DeleteFile> dv :
        BranchFiles.deletionVectors(table, main).entrySet()) {
      DataFile file = files.get(dv.getKey());
      loader
          .loadPositionDeletes(List.of(dv.getValue()), dv.getKey())
          .forEach(pos -> out.add(List.of(file.dataSequenceNumber(), file.recordCount(), pos)));
    }
    return out;
  }

  private static void expireUnreferenced(Table t) {
    Set<Long> heads = new HashSet<>();
    t.refs().values().forEach(r -> heads.add(r.snapshotId()));
    ExpireSnapshots expiry =
        t.expireSnapshots().expireOlderThan(Long.MIN_VALUE).cleanExpiredFiles(true);
    boolean any = false;
    for (Snapshot s : t.snapshots()) {
      if (!heads.contains(s.snapshotId())) {
        expiry.expireSnapshotId(s.snapshotId());
        any = true;
      }
    }
    if (any) {
      expiry.commit();
    }
  }
}
