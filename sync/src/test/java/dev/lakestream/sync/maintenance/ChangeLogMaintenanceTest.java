package dev.lakestream.sync.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.ChangeLogTables;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;

/**
 * A table's maintenance also compacts its change log ({@code <table>_changelog}) on main, and only
 * a change log: a source table of that name is a mirror, whose main holds deletion vectors that
 * such a compaction would not apply, and it has a run of its own.
 */
class ChangeLogMaintenanceTest {

  private static final TableIdentifier ORDERS = TableIdentifier.of("t", "orders");
  private static final TableIdentifier NAMED_LIKE_ITS_LOG =
      TableIdentifier.of("t", "orders_changelog");
  /** More small files than the default policy's minimum (10). */
  private static final int SMALL_FILES = 12;

  private static Maintenance maintenance(Catalog catalog) {
    return new Maintenance(
        MaintenanceConfig.from(new PipelineConfig(Map.of())),
        catalog,
        new SimpleMeterRegistry(),
        null);
  }

  /** A mirrored table with main and realtime, its main in {@link #SMALL_FILES} small files. */
  private static Table mirror(TemporaryWarehouse warehouse, TableIdentifier id) throws Exception {
    Table table = warehouse
        .v3Table(id.namespace().level(0), id.name(), KeyFiles.ID_NAME)
        .withProperty(TableManager.MANAGED, "true")
        .create();
    for (int i = 0; i < SMALL_FILES; i++) {
      table
          .newAppend()
          .appendFile(KeyFiles.data(table, KeyFiles.ID_NAME, KeyFiles.ids(i * 10, i * 10 + 10)))
          .commit();
    }
    table
        .manageSnapshots()
        .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
        .commit();
    return table;
  }

  /** A change log as ingest makes one ({@code logOf} null: as versions before the mark did). */
  private static Table changeLog(Catalog catalog, TableIdentifier id, String logOf)
      throws Exception {
    Catalog.TableBuilder builder = catalog
        .buildTable(id, ChangeLogTables.SCHEMA)
        .withPartitionSpec(PartitionSpec.unpartitioned())
        .withProperty(TableProperties.FORMAT_VERSION, "3");
    if (logOf != null) {
      builder.withProperty(ChangeLogTables.LOG_OF, logOf);
    }
    Table log = builder.create();
    for (int i = 0; i < SMALL_FILES; i++) {
      List<Record> rows = new ArrayList<>();
      for (int j = 0; j < 5; j++) {
        Record row = GenericRecord.create(ChangeLogTables.SCHEMA);
        row.setField("op", "c");
        row.setField("key", "{\"id\":" + (i * 5 + j) + "}");
        row.setField("snapshot", false);
        row.setField("kafka_topic", "pg.t.orders");
        row.setField("kafka_partition", 0);
        row.setField("kafka_offset", (long) (i * 5 + j));
        rows.add(row);
      }
      log.newAppend()
          .appendFile(KeyFiles.dataFile(log, ChangeLogTables.SCHEMA, rows))
          .commit();
    }
    return log;
  }

  private static int liveFiles(Table table) {
    table.refresh();
    Snapshot main = table.snapshot(SnapshotRef.MAIN_BRANCH);
    return BranchFiles.liveDataFiles(table, main).size();
  }

  @Test
  void aSourceTableNamedLikeAnotherTablesChangeLogIsLeftToItsOwnRun() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      mirror(warehouse, ORDERS);
      Table named = mirror(warehouse, NAMED_LIKE_ITS_LOG);
      long mainBefore = named.currentSnapshot().snapshotId();
      try (Maintenance maintenance = maintenance(warehouse.catalog())) {
        maintenance.run(ORDERS, System.currentTimeMillis());
      }
      named.refresh();
      assertThat(named.currentSnapshot().snapshotId())
          .as("main of the mirrored table %s, after the run of %s", NAMED_LIKE_ITS_LOG, ORDERS)
          .isEqualTo(mainBefore);
      assertThat(liveFiles(named)).isEqualTo(SMALL_FILES);
    }
  }

  @Test
  void aMirrorWithTheColumnsOfAChangeLogIsNotTakenForAnEarlierVersionsLog() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      mirror(warehouse, ORDERS);
      Catalog catalog = warehouse.catalog();
      // A source table whose columns happen to be a change log's, mirrored: a realtime branch.
      Table named = changeLog(catalog, NAMED_LIKE_ITS_LOG, null);
      named
          .manageSnapshots()
          .createBranch(Branches.REALTIME, named.currentSnapshot().snapshotId())
          .commit();
      try (Maintenance maintenance = maintenance(catalog)) {
        maintenance.run(ORDERS, System.currentTimeMillis());
      }
      assertThat(liveFiles(named)).isEqualTo(SMALL_FILES);
    }
  }

  @Test
  void aChangeLogIsCompactedByItsTablesRun() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      mirror(warehouse, ORDERS);
      Catalog catalog = warehouse.catalog();
      Table log = changeLog(catalog, NAMED_LIKE_ITS_LOG, ORDERS.toString());
      try (Maintenance maintenance = maintenance(catalog)) {
        maintenance.run(ORDERS, System.currentTimeMillis());
      }
      assertThat(liveFiles(log)).as("the change log's files after the run").isLessThan(SMALL_FILES);
    }
  }

  /**
   * A compaction of realtime that fails (a data file it cannot read) stops neither the run's other
   * steps (the change log is still compacted, snapshots still expire) nor goes unseen: the run fails
   * with its error, and a table whose runs fail three times in a row is on {@code /health} until
   * one succeeds.
   */
  @Test
  void aCompactionThatFailsLeavesTheRestOfTheRunToGoOnAndIsReportedWhenItKeepsFailing()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table orders = mirror(warehouse, ORDERS);
      Catalog catalog = warehouse.catalog();
      Table log = changeLog(catalog, NAMED_LIKE_ITS_LOG, ORDERS.toString());
      List<DataFile> broken = new ArrayList<>(
          BranchFiles.liveDataFiles(orders, orders.snapshot(Branches.REALTIME)).values());
      broken.forEach(f -> orders.io().deleteFile(f.location()));
      Health health = new Health();
      SimpleMeterRegistry meters = new SimpleMeterRegistry();
      PipelineConfig config = new PipelineConfig(Map.of(MaintenanceConfig.CHECK_INTERVAL_MS, "1"));
      try (Maintenance maintenance =
          new Maintenance(MaintenanceConfig.from(config), catalog, meters, Runnable::run, health)) {
        maintenance.check(ORDERS.toString(), 1_000);
        assertThat(meters.counter("lakestream.maintenance.failures").count()).isEqualTo(1);
        assertThat(liveFiles(log))
            .as("the change log's files after the run whose compaction of realtime failed")
            .isLessThan(SMALL_FILES);
        assertThat(health.status(0)).isEqualTo(Health.Status.UP);

        maintenance.check(ORDERS.toString(), 2_000);
        maintenance.check(ORDERS.toString(), 3_000);
        assertThat(health.status(0)).isEqualTo(Health.Status.DEGRADED);
        assertThat(health.describe(0))
            .contains("maintenance of " + ORDERS)
            .contains("its last 3 maintenance runs failed");
        // Sync no longer coordinates the table here (its task moved): the report goes with it,
        // and failures count from naught when it comes back.
        maintenance.forget(ORDERS.toString());
        assertThat(health.status(0)).isEqualTo(Health.Status.UP);
        maintenance.check(ORDERS.toString(), 3_500);
        assertThat(health.status(0)).isEqualTo(Health.Status.UP);

        var removal = orders.newDelete().toBranch(Branches.REALTIME);
        broken.forEach(removal::deleteFile);
        removal.commit();
        maintenance.check(ORDERS.toString(), 4_000);
        assertThat(meters.counter("lakestream.maintenance.failures").count()).isEqualTo(4);
        assertThat(health.status(0)).isEqualTo(Health.Status.UP);
      }
    }
  }

  @Test
  void aChangeLogOfAnEarlierVersionWithoutTheMarkIsCompactedToo() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      mirror(warehouse, ORDERS);
      Catalog catalog = warehouse.catalog();
      Table log = changeLog(catalog, NAMED_LIKE_ITS_LOG, null);
      try (Maintenance maintenance = maintenance(catalog)) {
        maintenance.run(ORDERS, System.currentTimeMillis());
      }
      assertThat(liveFiles(log)).as("the change log's files after the run").isLessThan(SMALL_FILES);
    }
  }

  @Test
  void theChangeLogOfAnotherTableIsNotCompactedByThisOne() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      mirror(warehouse, ORDERS);
      Catalog catalog = warehouse.catalog();
      Table log = changeLog(
          catalog,
          NAMED_LIKE_ITS_LOG,
          TableIdentifier.of(Namespace.of("u"), "orders").toString());
      try (Maintenance maintenance = maintenance(catalog)) {
        maintenance.run(ORDERS, System.currentTimeMillis());
      }
      assertThat(liveFiles(log)).isEqualTo(SMALL_FILES);
    }
  }
}
