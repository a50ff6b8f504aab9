package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import java.nio.file.Files;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * Tables created in PostgreSQL while the shipped connector runs, on real PostgreSQL, Debezium and
 * Kafka. The shipped connector ({@code publication.autocreate.mode=filtered}) makes its publication
 * of the captured tables when it starts, so a table created later publishes nothing: its rows never
 * reach Kafka, and after a restart of the connector only what is written since does. The event
 * trigger the repository ships ({@code connectors/postgres-publish-new-tables.sql}) adds each such
 * table to the publication in the statement that creates it, so its tables equal {@code SELECT *}
 * from the first row; tables PostgreSQL could not then update (no replica identity), unlogged
 * tables and partitions are left out, and the user's statements all succeed.
 */
class PostgresNewTablesEndToEndTest {

  private static final List<String> ID = List.of("id");

  @Test
  void tablesCreatedWhileTheConnectorRunsReachMainWholeWithTheShippedEventTrigger()
      throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of("table.exclude.list", "inventory\\.parts_.*"),
        "CREATE TABLE inventory.first (id int PRIMARY KEY, v text)",
        "INSERT INTO inventory.first SELECT g, 'v' || g FROM generate_series(1, 3) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, "first"));

      // Without the trigger: a table created now publishes nothing.
      p.postgres.execute(
          "CREATE TABLE inventory.unseen (id int PRIMARY KEY, v text)",
          "INSERT INTO inventory.unseen SELECT g, 'u' || g FROM generate_series(1, 10) g",
          "INSERT INTO inventory.first VALUES (100, 'after unseen')");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, "first"));
      assertThat(p.reader.tableExists(id("unseen")))
          .as("a table for rows PostgreSQL never published")
          .isFalse();
      assertThat(published(p)).doesNotContain("inventory.unseen");

      p.postgres.execute(Files.readString(
          PostgresEndToEndTest.connectorsDir().resolve("postgres-publish-new-tables.sql")));
      p.postgres.execute(
          // One statement at a time, as a migration and then the application write them.
          "CREATE TABLE inventory.later (id int PRIMARY KEY, v text)",
          "INSERT INTO inventory.later SELECT g, 'l' || g FROM generate_series(1, 20) g",
          "UPDATE inventory.later SET v = 'changed' WHERE id % 3 = 0",
          "DELETE FROM inventory.later WHERE id % 5 = 0",
          // Created and filled in one transaction.
          "BEGIN",
          "CREATE TABLE inventory.in_one (id bigint PRIMARY KEY, v text)",
          "INSERT INTO inventory.in_one SELECT g, 'o' || g FROM generate_series(1, 15) g",
          "COMMIT",
          // A partitioned table: its root is published, its partitions are not.
          "CREATE TABLE inventory.parts (id int, day date, v text, PRIMARY KEY (id, day))"
              + " PARTITION BY RANGE (day)",
          "CREATE TABLE inventory.parts_2026 PARTITION OF inventory.parts"
              + " FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
          "INSERT INTO inventory.parts SELECT g, date '2026-01-01' + g, 'p' || g"
              + " FROM generate_series(1, 12) g",
          // Tables left out, whose statements still succeed: one without a replica identity (its
          // UPDATE would fail once published), an unlogged one (PostgreSQL publishes none).
          "CREATE TABLE inventory.keyless (a int, b text)",
          "INSERT INTO inventory.keyless VALUES (1, 'x')",
          "UPDATE inventory.keyless SET b = 'y'",
          "CREATE UNLOGGED TABLE inventory.scratch (id int PRIMARY KEY)",
          "INSERT INTO inventory.scratch VALUES (1)",
          // A DEFERRABLE key cannot be the replica identity; a child inherits no key from its
          // parent; a partitioned table's FULL identity is not its partitions'.
          "CREATE TABLE inventory.deferred (id int PRIMARY KEY DEFERRABLE, v text)",
          "INSERT INTO inventory.deferred VALUES (1, 'x')",
          "UPDATE inventory.deferred SET v = 'y'",
          "CREATE TABLE inventory.child (extra text) INHERITS (inventory.later)",
          "INSERT INTO inventory.child VALUES (100, 'c', 'e')",
          "UPDATE inventory.child SET extra = 'f'",
          "CREATE TABLE inventory.pfull (id int, day date) PARTITION BY RANGE (day)",
          "ALTER TABLE inventory.pfull REPLICA IDENTITY FULL",
          "CREATE TABLE inventory.pfull_2026 PARTITION OF inventory.pfull"
              + " FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
          "INSERT INTO inventory.pfull VALUES (1, '2026-02-02')",
          "UPDATE inventory.pfull SET id = 2",
          // Given a replica identity after: added by the ALTER TABLE (a change of it would have
          // no record key, and be dead-lettered saying so, until message.key.columns names one).
          "CREATE TABLE inventory.identified (a int, b text)",
          "ALTER TABLE inventory.identified REPLICA IDENTITY FULL",
          "UPDATE inventory.identified SET b = 'z'",
          // Copied without a key, given one after: added by the ALTER TABLE.
          "CREATE TABLE inventory.copied AS SELECT g AS id, 'c' || g AS v"
              + " FROM generate_series(1, 8) g",
          "ALTER TABLE inventory.copied ADD PRIMARY KEY (id)",
          "INSERT INTO inventory.copied VALUES (9, 'after the key')");

      for (String table : List.of("later", "in_one", "parts")) {
        Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, table));
      }
      assertThat(count(p, "ONLY inventory.later")).isEqualTo(16);
      assertThat(published(p))
          .contains(
              "inventory.later",
              "inventory.in_one",
              "inventory.parts",
              "inventory.copied",
              "inventory.identified")
          .doesNotContain(
              "inventory.parts_2026",
              "inventory.keyless",
              "inventory.scratch",
              "inventory.unseen",
              "inventory.deferred",
              "inventory.child",
              "inventory.pfull",
              "inventory.pfull_2026");

      // What the trigger cannot give: the rows written before a table was published. The README's
      // remedy: publish it (the ALTER TABLE that gives it a key, or a restart of the connector,
      // which also makes Debezium read a table it has not seen), then an incremental snapshot.
      Eventually.until(
          Duration.ofSeconds(120),
          "the row written to inventory.copied after its key on main",
          () -> p.reader.tableExists(id("copied"))
              && TableRows.read(p.reader.loadTable(id("copied")), Branches.MAIN).size() == 1);
      // A restart publishes every captured table: those check-source blocks go first.
      p.postgres.execute("DROP TABLE inventory.keyless, inventory.scratch, inventory.deferred,"
          + " inventory.child, inventory.pfull, inventory.identified");
      p.connect.restartConnector("inventory-postgres");
      Eventually.until(
          Duration.ofSeconds(120),
          "the restarted connector adding inventory.unseen to its publication",
          () -> published(p).contains("inventory.unseen"));
      // From now on its changes arrive; the ten rows before the restart do not.
      p.postgres.execute("INSERT INTO inventory.unseen VALUES (11, 'after the restart')");
      Eventually.until(
          Duration.ofSeconds(120),
          "the row written to inventory.unseen after the restart on main",
          () -> p.reader.tableExists(id("unseen"))
              && TableRows.read(p.reader.loadTable(id("unseen")), Branches.MAIN).size() == 1);
      p.incrementalSnapshot("inventory.copied");
      p.incrementalSnapshot("inventory.unseen");
      for (String table : List.of("copied", "unseen", "later", "first")) {
        Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p, table));
      }
      PostgresEndToEndTest.assertInvariants(
          p.reader, List.of("first", "unseen", "later", "in_one", "parts", "copied"));
    }
  }

  private static TableIdentifier id(String table) {
    return TableIdentifier.of("inventory", table);
  }

  /** Null when realtime and main equal {@code SELECT *} of the table; else what differs. */
  private static String differs(PostgresPipeline p, String table) throws Exception {
    // The rows of the table itself (inventory.child inherits from inventory.later for a while).
    return p.differs(
        "SELECT * FROM " + (table.equals("later") ? "ONLY " : "") + "inventory." + table,
        id(table),
        table.equals("parts") ? List.of("id", "day") : ID);
  }

  private static int count(PostgresPipeline p, String table) throws Exception {
    try (var c = p.postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** The tables the connector's publication holds, as {@code schema.table}. */
  private static Set<String> published(PostgresPipeline p) throws Exception {
    Set<String> tables = new TreeSet<>();
    try (var c = p.postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT n.nspname || '.' || c.relname FROM pg_publication_rel r"
                + " JOIN pg_publication p ON p.oid = r.prpubid JOIN pg_class c ON c.oid = r.prrelid"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE p.pubname = 'lakestream'")) {
      while (rs.next()) {
        tables.add(rs.getString(1));
      }
    }
    return tables;
  }
}
