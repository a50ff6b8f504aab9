package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.Eventually;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * Tables a publication made beforehand (PostgreSQL 15) publishes in part, on real PostgreSQL,
 * Debezium and Kafka: one with a row filter, whose rows outside it the snapshot reads but no change
 * follows, and one with a column list, whose other columns no change carries. {@code
 * check-source} reports both with their fixes; with them, each table equals what is published of
 * its source: the rows the filter selects (rows moved in and out of it included) and the listed
 * columns.
 */
class PostgresPublicationFiltersEndToEndTest {

  private static final TableIdentifier FILTERED = TableIdentifier.of("inventory", "filtered");
  private static final TableIdentifier NARROW = TableIdentifier.of("inventory", "narrow");

  @Test
  void partlyPublishedTablesEqualWhatIsPublishedWithTheSettingsCheckSourceGives() throws Exception {
    Map<String, String> own = Map.of("publication.autocreate.mode", "disabled");
    Map<String, String> fixed = new HashMap<>(own);
    fixed.put("snapshot.select.statement.overrides", "inventory.filtered");
    fixed.put(
        "snapshot.select.statement.overrides.inventory.filtered",
        "SELECT * FROM inventory.filtered WHERE (region = 'eu'::text)");
    fixed.put("column.exclude.list", "inventory\\.narrow\\.secret");
    try (PostgresPipeline p = PostgresPipeline.start(
        fixed,
        "CREATE TABLE inventory.filtered (id int PRIMARY KEY, region text, v text)",
        // PostgreSQL needs a row filter's columns in the replica identity to publish updates.
        "ALTER TABLE inventory.filtered REPLICA IDENTITY FULL",
        "CREATE TABLE inventory.narrow (id int PRIMARY KEY, a text, secret text)",
        "CREATE PUBLICATION lakestream FOR TABLE inventory.filtered WHERE (region = 'eu'),"
            + " inventory.narrow (id, a), " + PostgresPipeline.SIGNAL_TABLE,
        "INSERT INTO inventory.filtered SELECT g, CASE WHEN g % 2 = 0 THEN 'eu' ELSE 'us' END,"
            + " 'v' || g FROM generate_series(1, 40) g",
        "INSERT INTO inventory.narrow SELECT g, 'a' || g, 's' || g FROM generate_series(1, 40) g")) {
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, own).output())
          .contains("BLOCKER  inventory.filtered: published with a row filter, (region ="
              + " 'eu'::text): the snapshot reads every row")
          .contains("\"snapshot.select.statement.overrides.inventory.filtered\": \"SELECT * FROM"
              + " inventory.filtered WHERE (region = 'eu'::text)\"")
          .contains("BLOCKER  inventory.narrow: publication lakestream publishes it with a column"
              + " list that leaves out [secret]")
          .contains("\"column.exclude.list\": \"inventory\\\\.narrow\\\\.secret\"");
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, fixed).output())
          .contains("INFO     inventory.filtered: published with a row filter")
          .doesNotContain("BLOCKER  inventory.filtered", "BLOCKER  inventory.narrow");

      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      p.postgres.execute(
          "UPDATE inventory.filtered SET v = v || '+'",
          "UPDATE inventory.filtered SET region = 'eu' WHERE id IN (1, 3)", // into the filter
          "UPDATE inventory.filtered SET region = 'us' WHERE id IN (2, 4)", // out of it
          "DELETE FROM inventory.filtered WHERE id IN (6, 7)",
          "INSERT INTO inventory.filtered VALUES (100, 'eu', 'new'), (101, 'us', 'new')",
          "UPDATE inventory.narrow SET a = a || '+', secret = 'changed' WHERE id % 3 = 0",
          "INSERT INTO inventory.narrow VALUES (100, 'a100', 's100')");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      assertThat(p.reader.loadTable(NARROW).schema().findField("secret")).isNull();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("filtered", "narrow"));
    }
  }

  private static String differs(PostgresPipeline p) throws Exception {
    String diff =
        p.differs("SELECT * FROM inventory.filtered WHERE region = 'eu'", FILTERED, List.of("id"));
    return diff != null
        ? diff
        : p.differs("SELECT id, a FROM inventory.narrow", NARROW, List.of("id"));
  }
}
