package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * The README's "Table and column changes in the source", done as a user would, on real PostgreSQL,
 * Debezium and Kafka: a column renamed and one dropped; a table renamed. Change events carry no DDL, so the new name arrives
 * as a new column, empty in the rows not changed since; an incremental snapshot of the table
 * through Debezium's signal table fills it. Main then equals {@code SELECT *} in every column the
 * source has; the old and the dropped column stay on the table, as the README says.
 */
class PostgresColumnChangesEndToEndTest {

  private static final TableIdentifier ITEMS = TableIdentifier.of("inventory", "items");
  private static final TableIdentifier GOODS = TableIdentifier.of("inventory", "goods");

  @Test
  void aRenamedColumnIsFilledByAnIncrementalSnapshotAndADroppedOneStays() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      postgres.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.debezium_signal"
              + " (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))",
          "CREATE TABLE inventory.items (id bigint PRIMARY KEY, name text, price int, memo text)",
          "INSERT INTO inventory.items SELECT g, 'n' || g, g, 'm' || g"
              + " FROM generate_series(1, 200) g");
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse);
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        Catalog reader = warehouse.catalog();
        ingest.start();
        sync.start();
        PostgresEndToEndTest.registerConnector(
            connect, postgres, Map.of("signal.data.collection", "inventory.debezium_signal"));
        Eventually.noDifference(Duration.ofSeconds(120), () -> differs(reader, postgres));

        postgres.execute(
            "ALTER TABLE inventory.items RENAME COLUMN name TO title",
            "ALTER TABLE inventory.items DROP COLUMN memo",
            "UPDATE inventory.items SET price = price + 1 WHERE id % 10 = 0");
        Eventually.until(
            Duration.ofSeconds(120),
            "the renamed column on the table, from the changes since",
            () -> reader.loadTable(ITEMS).schema().findField("title") != null);
        assertThat(differs(reader, postgres))
            .as("before the snapshot: the rows not changed since have no title")
            .containsPattern("title: expected n[0-9]+ but was null");

        postgres.execute("INSERT INTO inventory.debezium_signal (id, type, data) VALUES"
            + " ('resnapshot-items', 'execute-snapshot',"
            + " '{\"data-collections\": [\"inventory.items\"], \"type\": \"incremental\"}')");
        Eventually.noDifference(Duration.ofSeconds(180), () -> differs(reader, postgres));
        Table table = reader.loadTable(ITEMS);
        assertThat(table.schema().findField("name")).as("the column's old name").isNotNull();
        assertThat(table.schema().findField("memo")).as("the dropped column").isNotNull();
        Verifier.Report report = Verifier.verify(table, ITEMS.toString());
        assertThat(report.passed()).as(report.toString()).isTrue();
      }
    }
  }

  /**
   * A table renamed: its changes arrive on a topic of the new name, and ingest makes a table of
   * it that holds the rows changed since; an incremental snapshot of the renamed table fills it,
   * and the table of the old name stays as it was.
   */
  @Test
  void aRenamedTableIsFilledByAnIncrementalSnapshot() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      postgres.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.debezium_signal"
              + " (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))",
          "CREATE TABLE inventory.items (id bigint PRIMARY KEY, name text, price int, memo text)",
          "INSERT INTO inventory.items SELECT g, 'n' || g, g, 'm' || g"
              + " FROM generate_series(1, 200) g");
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse);
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        Catalog reader = warehouse.catalog();
        ingest.start();
        sync.start();
        PostgresEndToEndTest.registerConnector(
            connect, postgres, Map.of("signal.data.collection", "inventory.debezium_signal"));
        Eventually.noDifference(Duration.ofSeconds(120), () -> differs(reader, postgres));

        postgres.execute(
            "ALTER TABLE inventory.items RENAME TO goods",
            "UPDATE inventory.goods SET price = price + 1 WHERE id % 10 = 0");
        Eventually.until(
            Duration.ofSeconds(120),
            "a table of the new name, with the rows changed since",
            () -> reader.tableExists(GOODS)
                && TableRows.read(reader.loadTable(GOODS), Branches.MAIN).size() == 20);

        postgres.execute("INSERT INTO inventory.debezium_signal (id, type, data) VALUES"
            + " ('resnapshot-goods', 'execute-snapshot',"
            + " '{\"data-collections\": [\"inventory.goods\"], \"type\": \"incremental\"}')");
        Eventually.noDifference(
            Duration.ofSeconds(180), () -> differs(reader, postgres, "goods", GOODS));
        assertThat(TableRows.read(reader.loadTable(ITEMS), Branches.MAIN))
            .as("the table of the old name, as it was")
            .hasSize(200);
        Verifier.Report report = Verifier.verify(reader.loadTable(GOODS), GOODS.toString());
        assertThat(report.passed()).as(report.toString()).isTrue();
      }
    }
  }

  private static String differs(Catalog reader, EmbeddedPostgres postgres) throws Exception {
    return differs(reader, postgres, "items", ITEMS);
  }

  /** Null when realtime and main of {@code id} equal SELECT * of {@code source}; else what differs. */
  private static String differs(
      Catalog reader, EmbeddedPostgres postgres, String source, TableIdentifier id)
      throws Exception {
    return SourceTableComparison.differs(
        reader, postgres::connect, "SELECT * FROM inventory." + source, id, List.of("id"));
  }
}
