package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableRows;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The column types Debezium's PostgreSQL connector (3.6.1, pgoutput) reads in snapshots but not in
 * streamed changes, or not at all, on real PostgreSQL, Debezium and Kafka; {@code check-source}
 * reports each, and the table shows what it says: a {@code name} column holds null in every row
 * changed after the snapshot, arrays of {@code name}, {@code interval}, {@code money}, {@code xml},
 * {@code varbit} and {@code point} are left out, an array of {@code bit} is always null. The
 * columns beside them, {@code varchar(63)} (the fix for {@code name}) and {@code int[]}, equal the
 * source.
 */
class PostgresTypeGapsEndToEndTest {

  private static final TableIdentifier GAPS = TableIdentifier.of("inventory", "gaps");
  private static final List<String> LEFT_OUT =
      List.of("a_name", "a_interval", "a_money", "a_xml", "a_varbit", "a_point");

  @Test
  void whatDebeziumLeavesOutOrSendsAsNullIsWhatCheckSourceReports() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        "CREATE TABLE inventory.gaps (id int PRIMARY KEY, nm name, vc varchar(63), a_name name[],"
            + " a_interval interval[], a_money money[], a_xml xml[], a_varbit varbit[],"
            + " a_point point[], a_bit bit(3)[], a_int int[])",
        "INSERT INTO inventory.gaps VALUES (1, 'first', 'first', '{a}', '{1 day}', '{1.50}',"
            + " ARRAY['<a/>'::xml], '{101}', '{\"(1,2)\"}', '{101}', '{1,2}')")) {
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.output())
          .contains("BLOCKER  inventory.gaps.nm: name: Debezium reads it in snapshots but sends"
              + " null for it in every change it streams")
          .contains("WARNING  inventory.gaps.a_bit: bit(3)[]: Debezium sends null for every array"
              + " of bit");
      for (String column : LEFT_OUT) {
        assertThat(check.output())
            .contains("WARNING  inventory.gaps." + column + ": ")
            .contains("out of its events");
      }
      assertThat(check.output()).doesNotContain("inventory.gaps.vc:", "inventory.gaps.a_int:");

      Eventually.until(
          Duration.ofSeconds(120),
          "the snapshot's row on main",
          () -> mainRows(p).size() == 1);
      assertThat(mainRows(p).get(0)).containsEntry("nm", "first").containsEntry("vc", "first");

      p.postgres.execute(
          "INSERT INTO inventory.gaps SELECT 2, 'second', 'second', a_name, a_interval, a_money,"
              + " a_xml, a_varbit, a_point, a_bit, a_int FROM inventory.gaps WHERE id = 1",
          "UPDATE inventory.gaps SET nm = 'updated', vc = 'updated' WHERE id = 1");
      Eventually.until(
          Duration.ofSeconds(120),
          "both streamed changes on main",
          () -> mainRows(p).stream().filter(r -> !"first".equals(r.get("vc"))).count() == 2);
      Table table = p.reader.loadTable(GAPS);
      for (String column : LEFT_OUT) {
        assertThat(table.schema().findField(column)).as(column).isNull();
      }
      assertThat(table.schema().findField("a_bit"))
          .as("a_bit, a column of nulls")
          .isNotNull();
      for (Map<String, Object> row : mainRows(p)) {
        assertThat(row.get("vc")).isIn("second", "updated");
        assertThat(row.get("nm")).as("name, streamed").isNull();
        assertThat(row.get("a_bit")).as("bit(3)[]").isNull();
        assertThat(row.get("a_int")).isEqualTo(List.of(1, 2));
      }
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("gaps"));
    }
  }

  /**
   * Primary keys of types Iceberg takes as no identifier field (floating point, arrays): each change
   * of such a table is dead-lettered with the reason, {@code check-source} blocks it, and the
   * tables beside it flow on.
   */
  @Test
  void keysIcebergCannotTakeAreDeadLetteredAndReportedByCheckSource() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TABLE inventory.measures (x float8 PRIMARY KEY, v text)",
            "CREATE TABLE inventory.tagged (tags int[] PRIMARY KEY, v text)",
            "CREATE TABLE inventory.fine (id int PRIMARY KEY, v text)",
            "INSERT INTO inventory.measures SELECT g / 4.0, 'm' || g FROM generate_series(1, 10) g",
            "INSERT INTO inventory.tagged SELECT ARRAY[g, g + 1], 't' || g FROM generate_series(1, 10) g",
            "INSERT INTO inventory.fine SELECT g, 'f' || g FROM generate_series(1, 10) g");
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.output())
          .contains("BLOCKER  inventory.measures: key column(s) [x double precision]: Iceberg takes"
              + " no floating-point or array column as a key")
          .contains("BLOCKER  inventory.tagged: key column(s) [tags integer[]]")
          .doesNotContain("BLOCKER  inventory.fine");
      TableIdentifier fine = TableIdentifier.of("inventory", "fine");
      Eventually.noDifference(
          Duration.ofSeconds(120),
          () -> p.differs("SELECT * FROM inventory.fine", fine, List.of("id")));
      p.postgres.execute(
          "UPDATE inventory.measures SET v = v || '+'",
          "DELETE FROM inventory.tagged WHERE v = 't1'",
          "UPDATE inventory.fine SET v = v || '+' WHERE id % 2 = 0");
      Eventually.noDifference(
          Duration.ofSeconds(120),
          () -> p.differs("SELECT * FROM inventory.fine", fine, List.of("id")));
      // 10 snapshot reads and 10 updates of measures, 10 reads and a delete of tagged.
      feed.read("lakestream.dlq", 31); // waits for them
      List<ConsumerRecord<byte[], byte[]>> letters = feed.readAvailable("lakestream.dlq");
      assertThat(letters).hasSize(31);
      for (ConsumerRecord<byte[], byte[]> letter : letters) {
        String table =
            KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC).substring("dbserver1.".length());
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .as(table)
            .contains("table " + table + " cannot take key column")
            .contains("message.key.columns");
      }
      assertThat(p.reader.tableExists(TableIdentifier.of("inventory", "measures")))
          .isFalse();
      assertThat(p.reader.tableExists(TableIdentifier.of("inventory", "tagged")))
          .isFalse();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("fine"));
    }
  }

  private static List<Map<String, Object>> mainRows(PostgresPipeline p) {
    return p.reader.tableExists(GAPS)
        ? TableRows.read(p.reader.loadTable(GAPS), Branches.MAIN)
        : List.of();
  }
}
