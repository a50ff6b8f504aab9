package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * A table other tables inherit from ({@code INHERITS}), on real PostgreSQL, Debezium and Kafka.
 * PostgreSQL publishes a child's changes as the child's, while {@code SELECT * FROM parent} reads the
 * children's rows too: without help the snapshot would put them in the parent's table, where nothing
 * changes them after. {@code check-source} reports it with the settings that read the parent's own
 * rows ({@code SELECT * FROM ONLY}, and a filter on {@code tableoid} for incremental snapshots);
 * with them, each table equals its own rows ({@code SELECT * FROM ONLY parent}, {@code SELECT * FROM
 * child}) through changes and an incremental snapshot.
 */
class PostgresInheritedTableEndToEndTest {

  private static final TableIdentifier BASE = TableIdentifier.of("inventory", "base");
  private static final TableIdentifier CHILD = TableIdentifier.of("inventory", "child");
  private static final Map<String, String> OWN_ROWS = Map.of(
      "snapshot.select.statement.overrides", "inventory.base",
      "snapshot.select.statement.overrides.inventory.base", "SELECT * FROM ONLY inventory.base");

  @Test
  void aParentTableHoldsItsOwnRowsWithTheSettingsCheckSourceGives() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        OWN_ROWS,
        "CREATE TABLE inventory.base (id int PRIMARY KEY, v text)",
        "CREATE TABLE inventory.child (extra int) INHERITS (inventory.base)",
        "ALTER TABLE inventory.child ADD PRIMARY KEY (id)",
        "INSERT INTO inventory.base SELECT g, 'b' || g FROM generate_series(1, 30) g",
        "INSERT INTO inventory.child SELECT g, 'c' || g, g FROM generate_series(101, 130) g")) {
      String without = CheckSourceCommandTest.checkSource(p.postgres, Map.of()).output();
      assertThat(without)
          .contains("BLOCKER  inventory.base: inherited by inventory.child: a snapshot of it"
              + " (SELECT * FROM inventory.base) reads their rows too")
          .contains("\"snapshot.select.statement.overrides.inventory.base\": \"SELECT * FROM ONLY"
              + " inventory.base\"")
          .contains("\"filter\": \"tableoid = 'inventory.base'::regclass\"");
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, OWN_ROWS).output())
          .contains("INFO     inventory.base: inherited by inventory.child; the snapshot reads only"
              + " its own rows")
          .doesNotContain("BLOCKER  inventory.base");

      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      p.postgres.execute(
          "UPDATE inventory.base SET v = v || '+' WHERE id % 3 = 0", // children's rows too
          "DELETE FROM inventory.base WHERE id % 7 = 0",
          "INSERT INTO inventory.child VALUES (200, 'c200', 200)",
          "INSERT INTO inventory.base VALUES (50, 'b50')");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));

      // Snapshot the parent again, as the README does it: drop its table, then an incremental
      // snapshot with check-source's filter.
      p.reader.dropTable(BASE, false);
      p.incrementalSnapshot("inventory.base", "tableoid = 'inventory.base'::regclass");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("base", "child"));
    }
  }

  /** Null when each table equals its own rows in PostgreSQL; else what differs. */
  private static String differs(PostgresPipeline p) throws Exception {
    String diff = p.differs("SELECT * FROM ONLY inventory.base", BASE, List.of("id"));
    return diff != null ? diff : p.differs("SELECT * FROM inventory.child", CHILD, List.of("id"));
  }
}
