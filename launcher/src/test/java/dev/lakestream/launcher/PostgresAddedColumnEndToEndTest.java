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
 * The README's "Table and column changes in the source" for columns added with a default, on real
 * PostgreSQL, Debezium and Kafka. PostgreSQL gives the rows it holds a constant default without
 * rewriting them, so no change event carries it for them: on the table they hold null in the new
 * columns (as does a column whose default was set after it was added, there on both sides). An
 * incremental snapshot of the table fills them; main then equals {@code SELECT *}.
 */
class PostgresAddedColumnEndToEndTest {

  private static final TableIdentifier ITEMS = TableIdentifier.of("inventory", "items");

  @Test
  void rowsWrittenBeforeAColumnWasAddedGetItsDefaultFromAnIncrementalSnapshot() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        "CREATE TABLE inventory.items (id bigint PRIMARY KEY, name text)",
        "INSERT INTO inventory.items SELECT g, 'n' || g FROM generate_series(1, 100) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));

      p.postgres.execute(
          "ALTER TABLE inventory.items ADD COLUMN status text DEFAULT 'new',"
              + " ADD COLUMN qty int NOT NULL DEFAULT 7,"
              + " ADD COLUMN born date DEFAULT '2020-01-02',"
              + " ADD COLUMN price numeric(10,2) DEFAULT 1.50,"
              + " ADD COLUMN note text",
          "ALTER TABLE inventory.items ALTER COLUMN note SET DEFAULT 'later'",
          "UPDATE inventory.items SET name = name || '+' WHERE id % 10 = 0",
          "UPDATE inventory.items SET status = 'old', qty = 1 WHERE id % 15 = 0",
          "INSERT INTO inventory.items (id, name) VALUES (1000, 'after')",
          "DELETE FROM inventory.items WHERE id % 21 = 0");
      Eventually.until(
          Duration.ofSeconds(120),
          "the row inserted after the columns were added, on main",
          () -> p.reader.tableExists(ITEMS)
              && TableRows.read(p.reader.loadTable(ITEMS), Branches.MAIN).stream()
                  .anyMatch(r -> Long.valueOf(1000).equals(r.get("id"))));
      var untouched = TableRows.byKey(
              TableRows.read(p.reader.loadTable(ITEMS), Branches.MAIN), List.of("id"))
          .get(List.of(11L));
      assertThat(untouched)
          .as("before the snapshot: a row not changed since holds null in the new columns")
          .containsEntry("name", "n11")
          .containsEntry("status", null)
          .containsEntry("qty", null);

      p.incrementalSnapshot("inventory.items");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("items"));
    }
  }

  private static String differs(PostgresPipeline p) throws Exception {
    return p.differs("SELECT * FROM inventory.items", ITEMS, List.of("id"));
  }
}
