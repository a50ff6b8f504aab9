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
 * partitioned table before it is detached.
 */
class PostgresPartitionOperationsEndToEndTest {

  private static final TableIdentifier EVENTS = TableIdentifier.of("inventory", "events");

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

      p.postgres.execute("ALTER TABLE inventory.events ATTACH PARTITION inventory.events_2024"
          + " FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')");
      mark(p, 1);
      assertThat(difference(p))
          .as("main after the attach")
          .contains("30 missing")
          .contains("0 unexpected");
      // The remedy: an incremental snapshot of the attached range.
      p.incrementalSnapshot("inventory.events", "day < '2025-01-01'");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p));

      int in2026 = count(p, "day >= '2026-01-01' AND day < '2027-01-01'");
      int in2027 = count(p, "day >= '2027-01-01' AND day < '2028-01-01'");
      int in2028 = count(p, "day >= '2028-01-01'");
      p.postgres.execute(
          "TRUNCATE inventory.events_2026",
          "ALTER TABLE inventory.events DETACH PARTITION inventory.events_2027",
          "DROP TABLE inventory.events_2028");
      mark(p, 2);
      assertThat(difference(p))
          .as("main after a partition truncated, one detached and one dropped")
          .contains("0 missing")
          .contains((in2026 + in2027 + in2028) + " unexpected");

      // The remedy for what is still to come: delete the rows through the partitioned table first.
      p.postgres.execute(
          "CREATE TABLE inventory.events_2029 PARTITION OF inventory.events"
              + " FOR VALUES FROM ('2029-01-01') TO ('2030-01-01')",
          "INSERT INTO inventory.events SELECT 7000 + g, date '2029-01-01' + g, 'new'"
              + " FROM generate_series(1, 20) g");
      mark(p, 3);
      p.postgres.execute(
          "DELETE FROM inventory.events WHERE day >= '2029-01-01'",
          "ALTER TABLE inventory.events DETACH PARTITION inventory.events_2029");
      mark(p, 4);
      assertThat(difference(p))
          .as("the rows deleted before the detach are gone from main; the earlier ones stay")
          .contains("0 missing")
          .contains((in2026 + in2027 + in2028) + " unexpected");
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("events"));
    }
  }

  /**
   * Inserts the {@code n}th marker row (into a partition that stays) and waits until main holds
   * {@code n}: the changes before it are on main.
   */
  private static void mark(PostgresPipeline p, int n) throws Exception {
    p.postgres.execute(
        "INSERT INTO inventory.events VALUES (" + (9000 + n) + ", date '2025-06-01', 'mark')");
    Eventually.until(
        Duration.ofSeconds(120),
        "marker row " + n + " on main",
        () -> TableRows.read(p.reader.loadTable(EVENTS), Branches.MAIN).stream()
                .filter(r -> "mark".equals(r.get("v")))
                .count()
            == n);
  }

  private static int count(PostgresPipeline p, String condition) throws Exception {
    try (var c = p.postgres.connect();
        var rs = c.createStatement()
            .executeQuery("SELECT count(*) FROM inventory.events WHERE " + condition)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Null when realtime and main equal {@code SELECT *}; else what differs. */
  private static String differs(PostgresPipeline p) throws Exception {
    return p.differs("SELECT * FROM inventory.events", EVENTS, List.of("id", "day"));
  }

  private static String difference(PostgresPipeline p) throws Exception {
    String diff = differs(p);
    return diff == null ? "no difference" : diff;
  }
}
