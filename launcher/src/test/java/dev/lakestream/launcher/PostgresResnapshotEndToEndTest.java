package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
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
  private static final Duration SYNCED = Duration.ofSeconds(180);

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

  /**
   * The same repair for a table whose rows hold out-of-line (TOAST) values, which an update of
   * another column leaves out. Such an update streamed after the drop has no row on the table made
   * again to take them from: it is dead-lettered with that reason, and the partition's other
   * changes go on (ingest used to wait, forever, for the dropped table's offsets on the new one). The
   * incremental snapshot then brings every row whole, and later updates take their unchanged values
   * from it.
   */
  @Test
  void aTableOfOutOfLineValuesDroppedAndSnapshotAgainEqualsTheSource() throws Exception {
    TableIdentifier docs = TableIdentifier.of("inventory", "docs");
    String rows = "INSERT INTO inventory.docs SELECT i, (SELECT string_agg(md5(g::text || i::text),"
        + " '') FROM generate_series(1, 200) g), 0 FROM generate_series(%d, %d) i";
    String query = "SELECT * FROM inventory.docs";
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TABLE inventory.docs (id int PRIMARY KEY, body text, v int)",
            // 6,400 characters, kept out of line and uncompressed: PostgreSQL leaves them out of an
            // update that does not change them.
            "ALTER TABLE inventory.docs ALTER COLUMN body SET STORAGE EXTERNAL",
            String.format(rows, 1, 20));
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      Eventually.noDifference(SYNCED, () -> p.differs(query, docs, List.of("id")));
      p.postgres.execute("UPDATE inventory.docs SET v = 1 WHERE id <= 10");
      Eventually.noDifference(SYNCED, () -> p.differs(query, docs, List.of("id")));

      p.reader.dropTable(docs, false);
      p.postgres.execute(
          "UPDATE inventory.docs SET v = 2 WHERE id <= 4", String.format(rows, 21, 23));
      List<ConsumerRecord<byte[], byte[]>> letters = new ArrayList<>();
      Eventually.until(SYNCED, "the four updates after the drop dead-lettered", () -> {
        letters.clear();
        letters.addAll(feed.readAvailable("lakestream.dlq"));
        return letters.size() >= 4;
      });
      assertThat(letters).hasSize(4);
      for (ConsumerRecord<byte[], byte[]> letter : letters) {
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains("column(s) [body]")
            .contains("the table has no row of")
            .contains("an incremental snapshot of the table");
      }
      Eventually.until(
          SYNCED,
          "rows 21 to 23 on main of the table made again",
          () -> p.reader.tableExists(docs)
              && TableRows.byKey(
                      TableRows.read(p.reader.loadTable(docs), Branches.MAIN), List.of("id"))
                  .keySet()
                  .equals(Set.of(List.of(21), List.of(22), List.of(23))));

      p.incrementalSnapshot("inventory.docs");
      Eventually.noDifference(SYNCED, () -> p.differs(query, docs, List.of("id")));
      p.postgres.execute("UPDATE inventory.docs SET v = 3 WHERE id <= 6 OR id = 22");
      Eventually.noDifference(SYNCED, () -> p.differs(query, docs, List.of("id")));
      assertThat(feed.readAvailable("lakestream.dlq"))
          .as("the dead letters after the snapshot and the later updates")
          .hasSize(4);
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("docs"));
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
