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
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * Columns added with a constant default to a table that holds rows, on real PostgreSQL, Debezium
 * and Kafka. PostgreSQL gives the rows it holds the default without rewriting them, so no change
 * event carries it for them; the connector states the default in its schema, and the column is
 * added to the Iceberg table with it as its initial default. Main equals {@code SELECT *}, rows
 * untouched since the columns were added included.
 */
class PostgresAddedColumnEndToEndTest {

  private static final TableIdentifier ITEMS = TableIdentifier.of("inventory", "items");

  @Test
  void rowsWrittenBeforeAColumnWasAddedReadItsDefaultAsTheSourceDoes() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      postgres.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.items (id bigint PRIMARY KEY, name text)",
          "INSERT INTO inventory.items SELECT g, 'n' || g FROM generate_series(1, 100) g");
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse);
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        Catalog reader = warehouse.catalog();
        ingest.start();
        sync.start();
        PostgresEndToEndTest.registerConnector(connect, postgres);
        Eventually.noDifference(Duration.ofSeconds(120), () -> differs(reader, postgres));

        postgres.execute(
            "ALTER TABLE inventory.items ADD COLUMN status text DEFAULT 'new',"
                + " ADD COLUMN qty int NOT NULL DEFAULT 7,"
                + " ADD COLUMN born date DEFAULT '2020-01-02',"
                + " ADD COLUMN price numeric(10,2) DEFAULT 1.50,"
                + " ADD COLUMN seen timestamp DEFAULT '2021-03-04 05:06:07.25',"
                + " ADD COLUMN flag boolean DEFAULT true,"
                + " ADD COLUMN note text",
            "UPDATE inventory.items SET name = name || '+' WHERE id % 10 = 0",
            "UPDATE inventory.items SET status = 'old', qty = 1 WHERE id % 15 = 0",
            "INSERT INTO inventory.items (id, name) VALUES (1000, 'after')",
            "DELETE FROM inventory.items WHERE id % 21 = 0");
        Eventually.noDifference(Duration.ofSeconds(120), () -> differs(reader, postgres));
        Table table = reader.loadTable(ITEMS);
        assertThat(table.schema().findField("status").initialDefault())
            .as("the initial default of status")
            .hasToString("new");
        assertThat(table.schema().findField("note").initialDefault())
            .as("a column added without a default")
            .isNull();
        Verifier.Report report = Verifier.verify(table, ITEMS.toString());
        assertThat(report.passed()).as(report.toString()).isTrue();
      }
    }
  }

  /** Null when realtime and main equal SELECT *; else what differs. */
  private static String differs(Catalog reader, EmbeddedPostgres postgres) throws Exception {
    if (!reader.tableExists(ITEMS)) {
      return "no table " + ITEMS + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT * FROM inventory.items")) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", rs.getLong("id"));
        row.put("name", rs.getString("name"));
        if (columns > 2) {
          row.put("status", rs.getString("status"));
          row.put("qty", rs.getInt("qty"));
          row.put("born", rs.getObject("born", LocalDate.class));
          row.put("price", rs.getBigDecimal("price"));
          row.put("seen", rs.getObject("seen", LocalDateTime.class));
          row.put("flag", rs.getBoolean("flag"));
          row.put("note", rs.getString("note"));
        }
        expected.put(List.of(row.get("id")), row);
      }
    }
    Table table = reader.loadTable(ITEMS);
    for (String branch : List.of(Branches.REALTIME, Branches.MAIN)) {
      String diff = TableComparison.differences(
          expected, TableRows.byKey(TableRows.read(table, branch), List.of("id")));
      if (diff != null) {
        return branch + ": " + diff;
      }
    }
    return null;
  }
}
