package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * A table with a stored generated column, on real PostgreSQL, Debezium and Kafka. Logical
 * replication does not send a generated column's value, so the connector's updates would set it to
 * null on the table; check-source says to leave it out with {@code column.exclude.list}, and with
 * that the table equals {@code SELECT *} of every other column through inserts, updates and
 * deletes, and has no column of that name.
 */
class PostgresGeneratedColumnEndToEndTest {

  private static final TableIdentifier ITEMS = TableIdentifier.of("inventory", "items");

  @Test
  void aGeneratedColumnLeftOutAsCheckSourceSaysLeavesTheOtherColumnsEqualToTheSource()
      throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of("column.exclude.list", "inventory\\.items\\.total"),
        "CREATE TABLE inventory.items (id bigint PRIMARY KEY, price numeric(12,2), qty int,"
            + " total numeric(14,2) GENERATED ALWAYS AS (price * qty) STORED, note text)",
        "INSERT INTO inventory.items (id, price, qty, note) SELECT g, g * 1.5, g % 7, 'n' || g"
            + " FROM generate_series(1, 100) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      p.postgres.execute(
          "UPDATE inventory.items SET qty = qty + 1 WHERE id % 3 = 0",
          "UPDATE inventory.items SET price = price * 2, note = note || '+' WHERE id % 5 = 0",
          "DELETE FROM inventory.items WHERE id % 11 = 0",
          "INSERT INTO inventory.items (id, price, qty, note) VALUES (1000, 2.5, 4, 'new')");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      assertThat(p.reader.loadTable(ITEMS).schema().findField("total"))
          .as("the generated column")
          .isNull();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("items"));
    }
  }

  /** Null when realtime and main equal SELECT * of every column but the generated one. */
  private static String differs(PostgresPipeline p) throws Exception {
    return p.differs("SELECT id, price, qty, note FROM inventory.items", ITEMS, List.of("id"));
  }
}
