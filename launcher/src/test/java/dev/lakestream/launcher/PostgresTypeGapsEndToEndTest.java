package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
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

  private static List<Map<String, Object>> mainRows(PostgresPipeline p) {
    return p.reader.tableExists(GAPS)
        ? TableRows.read(p.reader.loadTable(GAPS), Branches.MAIN)
        : List.of();
  }
}
