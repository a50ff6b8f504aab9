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
 * What check-source warns of for a DEFERRABLE primary key, on real PostgreSQL, Debezium and
 * Kafka: one statement shifts every key by one, so each row takes the key of the next before the
 * next moves on. Debezium publishes each move as the delete of the old key and the insert of the
 * new, and the delete of a key comes after the insert of the row that took it: the table keeps
 * only the last row. The remedy the warning names, an incremental snapshot of the table, makes
 * main equal {@code SELECT *} again.
 */
class PostgresDeferrableKeyEndToEndTest {

  private static final TableIdentifier SLOTS = TableIdentifier.of("inventory", "slots");

  @Test
  void keysShiftedThroughADeferrableKeyLoseRowsUntilAnIncrementalSnapshot() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      postgres.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.debezium_signal"
              + " (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))",
          "CREATE TABLE inventory.slots (id int, v text,"
              + " CONSTRAINT slots_pk PRIMARY KEY (id) DEFERRABLE INITIALLY IMMEDIATE)",
          "ALTER TABLE inventory.slots REPLICA IDENTITY FULL",
          "INSERT INTO inventory.slots SELECT g, 'v' || g FROM generate_series(1, 10) g");
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

        postgres.execute("UPDATE inventory.slots SET id = id + 1");
        Eventually.until(
            Duration.ofSeconds(120),
            "the shift on main (the row of the last key)",
            () -> TableRows.read(reader.loadTable(SLOTS), Branches.MAIN).stream()
                .anyMatch(r -> Integer.valueOf(11).equals(r.get("id"))));
        assertThat(TableRows.read(reader.loadTable(SLOTS), Branches.MAIN))
            .as("main after the shift: the rows whose key was taken are lost")
            .hasSizeLessThan(10);

        postgres.execute("INSERT INTO inventory.debezium_signal (id, type, data) VALUES"
            + " ('resnapshot-slots', 'execute-snapshot',"
            + " '{\"data-collections\": [\"inventory.slots\"], \"type\": \"incremental\"}')");
        Eventually.noDifference(Duration.ofSeconds(180), () -> differs(reader, postgres));
        Table table = reader.loadTable(SLOTS);
        Verifier.Report report = Verifier.verify(table, SLOTS.toString());
        assertThat(report.passed()).as(report.toString()).isTrue();
      }
    }
  }

  private static String differs(Catalog reader, EmbeddedPostgres postgres) throws Exception {
    return SourceTableComparison.differs(
        reader, postgres::connect, "SELECT * FROM inventory.slots", SLOTS, List.of("id"));
  }
}
