package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/**
 * A blue/green move of the source, on real PostgreSQL, Debezium and Kafka: the tables are copied
 * into another PostgreSQL cluster, whose write-ahead log is behind the first one's, and a new
 * connector streams it into the same topics. Its changes carry log positions below every one ingest
 * has applied, with later commit times: they are the new source's changes, not replays, and main
 * equals the new source. One table was truncated on the first cluster, at a position above all of
 * the second's: the second's changes of it, committed over a minute later, are not taken for
 * changes from before that truncate.
 */
class PostgresSourceStartedOverEndToEndTest {

  @Test
  void changesOfAnotherDatabaseWhoseLogIsBehindReachMain() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres blue = EmbeddedPostgres.start();
        EmbeddedPostgres green = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      AtomicReference<EmbeddedPostgres> source = new AtomicReference<>(blue);
      InventoryDatabase db = new InventoryDatabase(() -> source.get().connect(), 78);
      db.create(200);
      // Blue's log moves ahead: four segments of 16 MB.
      blue.execute("CREATE TABLE public.filler (x int)");
      for (int i = 0; i < 4; i++) {
        blue.execute("INSERT INTO public.filler VALUES (" + i + ")", "SELECT pg_switch_wal()");
      }
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse);
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        Catalog reader = warehouse.catalog();
        ingest.start();
        sync.start();
        PostgresEndToEndTest.registerConnector(connect, blue);
        db.runWorkload(300, 2, new ArrayList<>(), () -> false);
        Eventually.noDifference(Duration.ofSeconds(120), () -> db.mainDiffers(reader));
        // A TRUNCATE on blue, at a position above every one green will have, then orders again.
        long belowTruncate = walPosition(blue);
        db.truncateOrders();
        long truncatedAtMs = System.currentTimeMillis();
        db.runWorkload(100, 2, new ArrayList<>(), () -> false);
        Eventually.noDifference(Duration.ofSeconds(120), () -> db.mainDiffers(reader));

        // The move: writes stop, the tables are copied into green, blue's connector goes and a
        // connector of green's takes its topics (no snapshot: the rows are on main already).
        new InventoryDatabase(green::connect, 0).createTables();
        for (String table : new String[] {"customers", "orders"}) {
          copy(blue, green, "inventory." + table);
        }
        assertThat(walPosition(green))
            .as("green's log position, below blue's")
            .isLessThan(walPosition(blue));
        connect.deleteConnector("inventory-postgres");
        source.set(green);
        Map<String, String> config = new HashMap<>();
        config.put("database.hostname", "127.0.0.1");
        config.put("database.port", Integer.toString(green.port()));
        config.put("database.password", "");
        config.put("snapshot.mode", "no_data");
        connect.createConnector(
            Files.readString(
                    PostgresEndToEndTest.connectorsDir().resolve("postgres-inventory.json"))
                .replace("\"inventory-postgres\"", "\"inventory-postgres-green\""),
            config);
        // Green's changes commit over a minute after the truncate: by then its positions are no
        // longer compared with the truncate's (a change before a truncate commits before it).
        long wait = truncatedAtMs + 61_000 - System.currentTimeMillis();
        if (wait > 0) {
          Thread.sleep(wait);
        }
        db.runWorkload(300, 2, new ArrayList<>(), () -> false);
        Eventually.noDifference(Duration.ofSeconds(120), () -> db.mainDiffers(reader));
        assertThat(walPosition(green))
            .as("green's log position after its changes, below blue's truncate")
            .isLessThan(belowTruncate);
        PostgresEndToEndTest.assertInvariants(reader);
      }
    }
  }

  private static void copy(EmbeddedPostgres from, EmbeddedPostgres to, String table)
      throws Exception {
    StringWriter rows = new StringWriter();
    try (Connection c = from.connect()) {
      c.unwrap(PGConnection.class).getCopyAPI().copyOut("COPY " + table + " TO STDOUT", rows);
    }
    try (Connection c = to.connect()) {
      c.unwrap(PGConnection.class)
          .getCopyAPI()
          .copyIn("COPY " + table + " FROM STDIN", new StringReader(rows.toString()));
    }
  }

  private static long walPosition(EmbeddedPostgres postgres) throws Exception {
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
