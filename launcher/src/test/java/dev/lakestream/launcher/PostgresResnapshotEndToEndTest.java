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
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * The README's "When main differs from the source", done as a user would, on real PostgreSQL,
 * Debezium and Kafka: the table is dropped from the catalog while changes keep coming (ingest
 * creates it again with the next change, so it holds only the rows changed since, and differs from
 * the source), then an incremental snapshot of it is asked for through Debezium's signal table.
 * Main equals {@code SELECT *} again, and Verify passes.
 */
class PostgresResnapshotEndToEndTest {

  private static final TableIdentifier CUSTOMERS = TableIdentifier.of("inventory", "customers");

  @Test
  void aTableDroppedAndSnapshotAgainThroughTheSignalTableEqualsTheSource() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      InventoryDatabase db = new InventoryDatabase(postgres::connect, 77);
      db.create(300);
      try (Connection c = postgres.connect();
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE inventory.debezium_signal"
            + " (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))");
      }
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse);
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        Catalog reader = warehouse.catalog();
        ingest.start();
        sync.start();
        PostgresEndToEndTest.registerConnector(
            connect, postgres, Map.of("signal.data.collection", "inventory.debezium_signal"));
        Eventually.noDifference(Duration.ofSeconds(120), () -> db.mainDiffers(reader));

        // Step 1: drop the table; changes keep coming, and ingest creates it again.
        reader.dropTable(CUSTOMERS, false);
        db.runWorkload(400, 5, new ArrayList<>(), () -> false);
        long sourceRows = count(postgres);
        Eventually.until(
            Duration.ofSeconds(120),
            "inventory.customers created again, with some of the changes since the drop on main",
            () -> reader.tableExists(CUSTOMERS) && mainRows(reader) > 0);
        assertThat(mainRows(reader))
            .as(
                "rows on main of the table created again, before the snapshot (source: %s)",
                sourceRows)
            .isLessThan(sourceRows);

        // Step 2: an incremental snapshot of the table, through the signal table.
        try (Connection c = postgres.connect();
            Statement s = c.createStatement()) {
          s.execute("INSERT INTO inventory.debezium_signal (id, type, data) VALUES"
              + " (gen_random_uuid()::text, 'execute-snapshot',"
              + " '{\"data-collections\": [\"inventory.customers\"], \"type\": \"incremental\"}')");
        }
        db.runWorkload(200, 5, new ArrayList<>(), () -> false);
        Eventually.noDifference(Duration.ofSeconds(180), () -> db.mainDiffers(reader));
        PostgresEndToEndTest.assertInvariants(reader);
      }
    }
  }

  private static long mainRows(Catalog reader) {
    return TableRows.read(reader.loadTable(CUSTOMERS), Branches.MAIN).size();
  }

  private static long count(EmbeddedPostgres postgres) throws Exception {
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM inventory.customers")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
