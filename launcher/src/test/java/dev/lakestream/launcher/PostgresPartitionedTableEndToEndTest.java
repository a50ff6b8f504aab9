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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * A partitioned PostgreSQL table, captured as the README says (the shipped connector's {@code
 * publish.via.partition.root=true}, its partitions left out with {@code table.exclude.list}), on
 * real PostgreSQL, Debezium and Kafka: one Iceberg table of the partitioned table's name, equal to
 * {@code SELECT *} through inserts into every partition, updates, deletes, updates that move rows
 * to another partition, and a partition attached while the connector runs; no table of any
 * partition.
 */
class PostgresPartitionedTableEndToEndTest {

  private static final TableIdentifier EVENTS = TableIdentifier.of("inventory", "events");
  private static final List<String> KEY = List.of("id", "day");

  @Test
  void aPartitionedTableIsMirroredAsOneTableEqualToSelectStar() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      postgres.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.events (id bigint, day date, v text, amount numeric(10,2),"
              + " PRIMARY KEY (id, day)) PARTITION BY RANGE (day)",
          "CREATE TABLE inventory.events_2025 PARTITION OF inventory.events"
              + " FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
          "CREATE TABLE inventory.events_2026 PARTITION OF inventory.events"
              + " FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
          "INSERT INTO inventory.events SELECT g, date '2025-01-01' + (g * 7 % 730), 'v' || g,"
              + " g * 1.25 FROM generate_series(1, 400) g");
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse);
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        Catalog reader = warehouse.catalog();
        ingest.start();
        sync.start();
        PostgresEndToEndTest.registerConnector(
            connect, postgres, Map.of("table.exclude.list", "inventory\\.events_.*"));
        Eventually.noDifference(Duration.ofSeconds(120), () -> differs(reader, postgres));

        Random random = new Random(11);
        try (Connection c = postgres.connect();
            Statement s = c.createStatement()) {
          for (int round = 0; round < 30; round++) {
            int id = 1 + random.nextInt(400);
            switch (round % 5) {
              case 0 ->
                s.execute("UPDATE inventory.events SET v = v || '+', amount = amount + 1"
                    + " WHERE id % 13 = " + (id % 13));
              case 1 -> s.execute("DELETE FROM inventory.events WHERE id = " + id);
              case 2 ->
                s.execute("INSERT INTO inventory.events VALUES (" + (1000 + round)
                    + ", date '2025-03-01' + " + round * 20 + ", 'new', 9.99)");
              // Into the other partition: PostgreSQL deletes the row from one and inserts it into
              // the other.
              case 3 ->
                s.execute("UPDATE inventory.events SET day = day + 365"
                    + " WHERE day < date '2026-01-01' AND id % 17 = " + (id % 17));
              default ->
                s.execute("UPDATE inventory.events SET day = day - 365, v = 'back'"
                    + " WHERE day >= date '2026-01-01' AND id % 19 = " + (id % 19));
            }
          }
          // A partition attached while the connector runs: with the partitioned table published,
          // its rows' changes need no change to the connector or the publication.
          s.execute("CREATE TABLE inventory.events_2027 PARTITION OF inventory.events"
              + " FOR VALUES FROM ('2027-01-01') TO ('2028-01-01')");
          s.execute("INSERT INTO inventory.events SELECT 2000 + g, date '2027-02-01' + g, 'later',"
              + " g FROM generate_series(1, 50) g");
          s.execute("UPDATE inventory.events SET day = day + 730, v = 'moved'"
              + " WHERE day < date '2026-01-01' AND id % 23 = 0");
        }
        Eventually.noDifference(Duration.ofSeconds(180), () -> differs(reader, postgres));

        Table table = reader.loadTable(EVENTS);
        Verifier.Report report = Verifier.verify(table, EVENTS.toString());
        assertThat(report.passed()).as(report.toString()).isTrue();
        assertThat(reader.listTables(Namespace.of("inventory")))
            .as("tables in the catalog: the partitioned table only")
            .containsExactly(EVENTS);
        assertThat(TableRows.read(table, Branches.MAIN).size())
            .as("rows on main")
            .isEqualTo(count(postgres));
      }
    }
  }

  /** Null when realtime and main of inventory.events equal SELECT *; else what differs. */
  private static String differs(Catalog reader, EmbeddedPostgres postgres) throws Exception {
    if (!reader.tableExists(EVENTS)) {
      return "no table " + EVENTS + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT * FROM inventory.events")) {
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", rs.getLong("id"));
        row.put("day", rs.getObject("day", LocalDate.class));
        row.put("v", rs.getString("v"));
        row.put("amount", rs.getBigDecimal("amount"));
        expected.put(List.of(row.get("id"), row.get("day")), row);
      }
    }
    Table table = reader.loadTable(EVENTS);
    for (String branch : List.of(Branches.REALTIME, Branches.MAIN)) {
      String diff = TableComparison.differences(
          expected, TableRows.byKey(TableRows.read(table, branch), KEY));
      if (diff != null) {
        return branch + ": " + diff;
      }
    }
    return null;
  }

  private static long count(EmbeddedPostgres postgres) throws Exception {
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM inventory.events")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
