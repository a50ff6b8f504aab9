package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * What PostgreSQL publishes of the operations on a partitioned table's partitions (its partitions
 * left out, the partitioned table published through its root), on real PostgreSQL, Debezium and
 * Kafka: none. A partition attached with rows brings them into {@code SELECT *} without a change
 * event, and a partition truncated, detached or dropped takes its rows out without one (with
 * {@code publish_via_partition_root}, PostgreSQL does not send a partition's TRUNCATE at all), so
 * {@code main} lacks the attached rows and keeps the others. The README's remedies, as a user runs
 * them: an incremental snapshot of the attached range; deleting a partition's rows through the
 * partitioned table before it is detached. What main is expected to hold is written beside the
 * source, in {@code inventory.events_expected} (left out of the connector like the partitions),
 * and both branches are compared with it until they equal it.
 */
class PostgresPartitionOperationsEndToEndTest {

  private static final TableIdentifier EVENTS = TableIdentifier.of("inventory", "events");
  private static final List<String> KEY = List.of("id", "day");

  @Test
  void partitionsAttachedDetachedTruncatedOrDroppedChangeRowsWithoutChangeEvents()
      throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of("table.exclude.list", "inventory\\.events_.*"),
        "CREATE TABLE inventory.events (id bigint, day date, v text, PRIMARY KEY (id, day))"
            + " PARTITION BY RANGE (day)",
        "CREATE TABLE inventory.events_2025 PARTITION OF inventory.events"
            + " FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
        "CREATE TABLE inventory.events_2026 PARTITION OF inventory.events"
            + " FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
        "CREATE TABLE inventory.events_2027 PARTITION OF inventory.events"
            + " FOR VALUES FROM ('2027-01-01') TO ('2028-01-01')",
        "CREATE TABLE inventory.events_2028 PARTITION OF inventory.events"
            + " FOR VALUES FROM ('2028-01-01') TO ('2029-01-01')",
        "INSERT INTO inventory.events SELECT g, date '2025-01-01' + (g * 7 % 1460), 'v' || g"
            + " FROM generate_series(1, 400) g",
        // A table of last year's rows, attached later (as a bulk load is often done).
        "CREATE TABLE inventory.events_2024 (LIKE inventory.events INCLUDING ALL)",
        "INSERT INTO inventory.events_2024 SELECT 5000 + g, date '2024-01-01' + g, 'old'"
            + " FROM generate_series(1, 30) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));

      p.postgres.execute(
          "ALTER TABLE inventory.events ATTACH PARTITION inventory.events_2024"
              + " FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
          mark(1));
      // Main equal to the source without the attached rows: the marker written after the attach
      // is on it, the attached rows are not.
      Eventually.noDifference(
          Duration.ofSeconds(120),
          () -> p.differs("SELECT * FROM inventory.events WHERE day >= '2025-01-01'", EVENTS, KEY));
      assertThat(count(p, "inventory.events", "day < '2025-01-01'"))
          .as("rows attached")
          .isEqualTo(30);
      // The remedy: an incremental snapshot of the attached range.
      p.incrementalSnapshot("inventory.events", "day < '2025-01-01'");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p));

      // What main holds from here on: the rows before, and what was published since.
      p.postgres.execute(
          "CREATE TABLE inventory.events_expected AS SELECT * FROM inventory.events",
          "TRUNCATE inventory.events_2026",
          "ALTER TABLE inventory.events DETACH PARTITION inventory.events_2027",
          "DROP TABLE inventory.events_2028",
          mark(2),
          expected(2));
      Eventually.noDifference(Duration.ofSeconds(120), () -> differsFromExpected(p));
      assertThat(
              count(p, "inventory.events_expected", "true") - count(p, "inventory.events", "true"))
          .as("rows of the partitions truncated, detached and dropped, kept on main")
          .isEqualTo(296);

      // The remedy for what is still to come: delete the rows through the partitioned table first.
      p.postgres.execute(
          "CREATE TABLE inventory.events_2029 PARTITION OF inventory.events"
              + " FOR VALUES FROM ('2029-01-01') TO ('2030-01-01')",
          "INSERT INTO inventory.events SELECT 7000 + g, date '2029-01-01' + g, 'new'"
              + " FROM generate_series(1, 20) g");
      Eventually.until(
          Duration.ofSeconds(120),
          "the 20 rows of the new partition on main",
          () -> TableRows.read(p.reader.loadTable(EVENTS), Branches.MAIN).stream()
                  .filter(r -> "new".equals(r.get("v")))
                  .count()
              == 20);
      p.postgres.execute(
          "DELETE FROM inventory.events WHERE day >= '2029-01-01'",
          "ALTER TABLE inventory.events DETACH PARTITION inventory.events_2029",
          mark(3),
          expected(3));
      Eventually.noDifference(Duration.ofSeconds(120), () -> differsFromExpected(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("events"));
    }
  }

  /** The {@code n}th marker row, into a partition that stays. */
  private static String mark(int n) {
    return "INSERT INTO inventory.events VALUES (" + (9000 + n) + ", date '2025-06-01', 'mark')";
  }

  /** The {@code n}th marker row, into the rows main is expected to hold. */
  private static String expected(int n) {
    return mark(n).replace("inventory.events", "inventory.events_expected");
  }

  private static int count(PostgresPipeline p, String table, String condition) throws Exception {
    try (var c = p.postgres.connect();
        var rs = c.createStatement()
            .executeQuery("SELECT count(*) FROM " + table + " WHERE " + condition)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Null when realtime and main equal {@code SELECT *}; else what differs. */
  private static String differs(PostgresPipeline p) throws Exception {
    return p.differs("SELECT * FROM inventory.events", EVENTS, KEY);
  }

  /** Null when realtime and main hold the rows of {@code inventory.events_expected}. */
  private static String differsFromExpected(PostgresPipeline p) throws Exception {
    return p.differs("SELECT * FROM inventory.events_expected", EVENTS, KEY);
  }
}
