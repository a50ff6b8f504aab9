package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.SourceTableModel;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * Names PostgreSQL allows that Debezium's topic names do not carry as they are, on real PostgreSQL,
 * Debezium and Kafka: a {@code topic.prefix} with a dot, a table whose name has a dot, one whose
 * name has a space, and quoted columns of mixed case, with dots, dashes, spaces, a reserved word and
 * a letter outside ASCII. Each table equals {@code SELECT *} through inserts, updates and deletes,
 * under the name the README gives. A source table named like another table's change log is that
 * table's mirror, whatever maintenance runs; two source tables of one topic name are never merged.
 */
class PostgresTableNamesEndToEndTest {

  @Test
  void tablesOfEveryNameReachTheirTablesUnderADottedTopicPrefix() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        // The topics are dbserver1.inventory.inventory.<table>: ingest.topics.regex of the test
        // pipeline (dbserver1\.inventory\..*) matches them.
        Map.of("topic.prefix", "dbserver1.inventory"),
        "CREATE TABLE inventory.\"dot.ted\" (id int PRIMARY KEY, v text)",
        "CREATE TABLE inventory.\"Order Items\" (id int PRIMARY KEY, v text)",
        "CREATE TABLE inventory.\"Mixed\" (\"Id\" int PRIMARY KEY, \"Name\" text, \"a.b\" int,"
            + " \"select\" int, \"x-y\" text, \"with space\" text, \"Ünï\" text)",
        "INSERT INTO inventory.\"dot.ted\" SELECT g, 'v' || g FROM generate_series(1, 40) g",
        "INSERT INTO inventory.\"Order Items\" SELECT g, 'v' || g FROM generate_series(1, 40) g",
        "INSERT INTO inventory.\"Mixed\" SELECT g, 'N' || g, g, g, 'x' || g, 's' || g, 'ü' || g"
            + " FROM generate_series(1, 40) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      p.postgres.execute(
          "UPDATE inventory.\"dot.ted\" SET v = v || '+' WHERE id % 3 = 0",
          "DELETE FROM inventory.\"dot.ted\" WHERE id % 7 = 0",
          "UPDATE inventory.\"Order Items\" SET v = v || '+' WHERE id % 2 = 0",
          "INSERT INTO inventory.\"Order Items\" VALUES (100, 'new')",
          "UPDATE inventory.\"Mixed\" SET \"Name\" = \"Name\" || '+', \"a.b\" = \"a.b\" + 100,"
              + " \"Ünï\" = NULL WHERE \"Id\" % 3 = 0",
          "DELETE FROM inventory.\"Mixed\" WHERE \"Id\" % 5 = 0");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("dot_ted", "Order_Items", "Mixed"));
    }
  }

  @Test
  void aSourceTableNamedLikeAnotherTablesChangeLogIsMaintainedAsTheMirrorItIs() throws Exception {
    // orders and orders_changelog in one schema, no change log kept: orders' maintenance must not
    // take orders_changelog for its change log and compact its main, whose deletion vectors that
    // compaction would not apply (the deleted rows would come back on main).
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        Map.of(
            "sync.maintenance.check.interval.ms", "500",
            "sync.maintenance.compaction.min-small-files", "3"),
        "CREATE TABLE inventory.orders (id int PRIMARY KEY, v text)",
        "CREATE TABLE inventory.orders_changelog (id int PRIMARY KEY, v text)",
        "INSERT INTO inventory.orders SELECT g, 'v' || g FROM generate_series(1, 40) g",
        "INSERT INTO inventory.orders_changelog SELECT g, 'v' || g FROM generate_series(1, 40) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> ordersDiffer(p));
      for (int round = 0; round < 6; round++) {
        // Each round a batch of its own: small files on both tables, deletes on main as vectors.
        p.postgres.execute(
            "DELETE FROM inventory.orders_changelog WHERE id % 6 = " + round,
            "UPDATE inventory.orders SET v = v || '+' WHERE id % 6 = " + round,
            "INSERT INTO inventory.orders_changelog VALUES (" + (100 + round) + ", 'new')");
        Eventually.noDifference(Duration.ofSeconds(120), () -> ordersDiffer(p));
      }
      Eventually.until(
          Duration.ofSeconds(120),
          "sync's maintenance to have compacted realtime of both tables",
          () -> compactions(p) >= 2);
      p.postgres.execute("UPDATE inventory.orders SET v = v || '!' WHERE id = 1");
      Eventually.noDifference(Duration.ofSeconds(120), () -> ordersDiffer(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("orders", "orders_changelog"));
    }
  }

  @Test
  void twoSourceTablesOfOneTopicNameAreNeverMerged() throws Exception {
    // Debezium sends the changes of "Order Items" and of Order_Items to one topic,
    // dbserver1.inventory.Order_Items: the table keeps the source table that reached it first, and
    // the changes of the other go to the dead-letter topic.
    TableIdentifier id = TableIdentifier.of("inventory", "Order_Items");
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TABLE inventory.\"Order_Items\" (id int PRIMARY KEY, v text)",
            "CREATE TABLE inventory.\"Order Items\" (id int PRIMARY KEY, v text, extra int)",
            "INSERT INTO inventory.\"Order_Items\" SELECT g, 'v' || g FROM generate_series(1, 40) g");
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> orderItemsDiffer(p, id));
      p.postgres.execute(
          "INSERT INTO inventory.\"Order Items\" SELECT g, 'other' || g, g"
              + " FROM generate_series(1, 60) g",
          "DELETE FROM inventory.\"Order Items\" WHERE id <= 5",
          "TRUNCATE inventory.\"Order Items\"",
          "UPDATE inventory.\"Order_Items\" SET v = v || '+' WHERE id % 3 = 0");
      Eventually.noDifference(Duration.ofSeconds(120), () -> orderItemsDiffer(p, id));
      // 60 inserts, 5 deletes and a truncate of "Order Items"; its tombstones are no changes.
      feed.read("lakestream.dlq", 66); // waits for them
      List<ConsumerRecord<byte[], byte[]>> letters = feed.readAvailable("lakestream.dlq");
      assertThat(letters).hasSize(66);
      for (ConsumerRecord<byte[], byte[]> letter : letters) {
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC))
            .isEqualTo("dbserver1.inventory.Order_Items");
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains(
                "source table inventory.Order Items (topic dbserver1.inventory.Order_Items)"
                    + " and source table inventory.Order_Items both map to table inventory.Order_Items");
      }
      assertThat(p.reader.loadTable(id).schema().findField("extra"))
          .as("a column only \"Order Items\" has")
          .isNull();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("Order_Items"));
    }
  }

  @Test
  void columnsNamedLikeIcebergsMetadataColumnsAreMirroredAndThePositionNamesRefused()
      throws Exception {
    // Iceberg's metadata names are plain columns (readers tell them apart by field id), but _pos
    // is refused: Iceberg's Java readers cannot apply main's deletion vectors to such a table.
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TABLE inventory.marks (id int PRIMARY KEY, _file text, _row_id bigint,"
                + " _last_updated_sequence_number bigint, _deleted boolean, _spec_id int,"
                + " _partition text, _change_type text, v text)",
            "CREATE TABLE inventory.positions (id int PRIMARY KEY, _pos int, v text)",
            "INSERT INTO inventory.marks SELECT g, 'f' || g, g, g, g % 2 = 0, g, 'p' || g, 'c',"
                + " 'v' || g FROM generate_series(1, 30) g",
            "INSERT INTO inventory.positions SELECT g, g, 'v' || g FROM generate_series(1, 30) g");
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.output())
          .contains("BLOCKER  inventory.positions: column(s) [_pos]: ingest refuses every change")
          .contains("\"column.exclude.list\": \"inventory\\\\.positions\\\\._pos\"")
          .doesNotContain("BLOCKER  inventory.marks");
      assertThat(CheckSourceCommandTest.checkSource(
                  p.postgres, Map.of("column.exclude.list", "inventory\\.positions\\._pos"))
              .output())
          .doesNotContain("BLOCKER  inventory.positions");

      Eventually.noDifference(Duration.ofSeconds(120), () -> marksDiffer(p));
      p.postgres.execute(
          "UPDATE inventory.marks SET _file = _file || '+', _row_id = -_row_id, _deleted = NOT"
              + " _deleted, v = NULL WHERE id % 3 = 0",
          "DELETE FROM inventory.marks WHERE id % 5 = 0",
          "UPDATE inventory.positions SET _pos = _pos + 1 WHERE id <= 10",
          "DELETE FROM inventory.positions WHERE id > 25");
      Eventually.noDifference(Duration.ofSeconds(120), () -> marksDiffer(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("marks"));

      // 30 snapshot reads, 10 updates and 5 deletes of positions; its tombstones are no changes.
      feed.read("lakestream.dlq", 45); // waits for them
      List<ConsumerRecord<byte[], byte[]>> letters = feed.readAvailable("lakestream.dlq");
      assertThat(letters).hasSize(45);
      for (ConsumerRecord<byte[], byte[]> letter : letters) {
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC))
            .isEqualTo("dbserver1.inventory.positions");
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains("table inventory.positions cannot take the record's column \"_pos\", which"
                + " is the name of Iceberg's row position");
      }
      assertThat(p.reader.tableExists(TableIdentifier.of("inventory", "positions")))
          .isFalse();
    }
  }

  private static String marksDiffer(PostgresPipeline p) throws Exception {
    return p.differs(
        "SELECT * FROM inventory.marks", TableIdentifier.of("inventory", "marks"), List.of("id"));
  }

  private static String orderItemsDiffer(PostgresPipeline p, TableIdentifier id) throws Exception {
    return p.differs("SELECT * FROM inventory.\"Order_Items\"", id, List.of("id"));
  }

  private static double compactions(PostgresPipeline p) {
    return p.sync.meters().find("lakestream.maintenance.compactions").counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }

  private static String ordersDiffer(PostgresPipeline p) throws Exception {
    String diff = p.differs(
        "SELECT * FROM inventory.orders", TableIdentifier.of("inventory", "orders"), List.of("id"));
    return diff != null
        ? diff
        : p.differs(
            "SELECT * FROM inventory.orders_changelog",
            TableIdentifier.of("inventory", "orders_changelog"),
            List.of("id"));
  }

  /** Null when realtime and main of every table equal SELECT * of its source; else what differs. */
  private static String differs(PostgresPipeline p) throws Exception {
    String diff = p.differs(
        "SELECT * FROM inventory.\"dot.ted\"",
        TableIdentifier.of("inventory", "dot_ted"),
        List.of("id"));
    if (diff == null) {
      diff = p.differs(
          "SELECT * FROM inventory.\"Order Items\"",
          TableIdentifier.of("inventory", "Order_Items"),
          List.of("id"));
    }
    if (diff == null) {
      diff = p.differs(
          "SELECT * FROM inventory.\"Mixed\"",
          TableIdentifier.of("inventory", "Mixed"),
          List.of("Id"));
    }
    return diff;
  }
}
