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
import org.apache.iceberg.types.Type;
import org.junit.jupiter.api.Test;

/**
 * The README's "Table and column changes in the source", done as a user would, on real PostgreSQL,
 * Debezium and Kafka: a column renamed and one dropped; a table renamed. Change events carry no DDL, so the new name arrives
 * as a new column, empty in the rows not changed since; an incremental snapshot of the table
 * through Debezium's signal table fills it. Main then equals {@code SELECT *} in every column the
 * source has; the old and the dropped column stay on the table, as the README says.
 */
class PostgresColumnChangesEndToEndTest {

  private static final TableIdentifier ITEMS = TableIdentifier.of("inventory", "items");
  private static final TableIdentifier GOODS = TableIdentifier.of("inventory", "goods");
  private static final String[] ITEMS_WITH_ROWS = {
    "CREATE TABLE inventory.items (id bigint PRIMARY KEY, name text, price int, memo text)",
    "INSERT INTO inventory.items SELECT g, 'n' || g, g, 'm' || g FROM generate_series(1, 200) g"
  };

  @Test
  void aRenamedColumnIsFilledByAnIncrementalSnapshotAndADroppedOneStays() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(Map.of(), ITEMS_WITH_ROWS)) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, "items", ITEMS));

      p.postgres.execute(
          "ALTER TABLE inventory.items RENAME COLUMN name TO title",
          "ALTER TABLE inventory.items DROP COLUMN memo",
          "UPDATE inventory.items SET price = price + 1 WHERE id % 10 = 0");
      Eventually.until(
          Duration.ofSeconds(120),
          "the renamed column on the table, from the changes since",
          () -> p.reader.loadTable(ITEMS).schema().findField("title") != null);
      assertThat(differs(p, "items", ITEMS))
          .as("before the snapshot: the rows not changed since have no title")
          .containsPattern("title: expected n[0-9]+ but was null");

      p.incrementalSnapshot("inventory.items");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p, "items", ITEMS));
      Table table = p.reader.loadTable(ITEMS);
      assertThat(table.schema().findField("name")).as("the column's old name").isNotNull();
      assertThat(table.schema().findField("memo")).as("the dropped column").isNotNull();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("items"));
    }
  }

  /**
   * A table renamed: its changes arrive on a topic of the new name, and ingest makes a table of
   * it that holds the rows changed since; an incremental snapshot of the renamed table fills it,
   * and the table of the old name stays as it was.
   */
  @Test
  void aRenamedTableIsFilledByAnIncrementalSnapshot() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(Map.of(), ITEMS_WITH_ROWS)) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, "items", ITEMS));

      p.postgres.execute(
          "ALTER TABLE inventory.items RENAME TO goods",
          "UPDATE inventory.goods SET price = price + 1 WHERE id % 10 = 0");
      Eventually.until(
          Duration.ofSeconds(120),
          "a table of the new name, with the rows changed since",
          () -> p.reader.tableExists(GOODS)
              && TableRows.read(p.reader.loadTable(GOODS), Branches.MAIN).size() == 20);

      p.incrementalSnapshot("inventory.goods");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p, "goods", GOODS));
      assertThat(TableRows.read(p.reader.loadTable(ITEMS), Branches.MAIN))
          .as("the table of the old name, as it was")
          .hasSize(200);
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("goods"));
    }
  }

  /**
   * A type change whose {@code USING} rewrites the values (and one that keeps the type): PostgreSQL
   * rewrites every row without a change event, so the rows not changed since keep their old values
   * (the widened column takes the new type) until an incremental snapshot.
   */
  @Test
  void valuesRewrittenByATypeChangeAreFilledByAnIncrementalSnapshot() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(Map.of(), ITEMS_WITH_ROWS)) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, "items", ITEMS));

      p.postgres.execute(
          "ALTER TABLE inventory.items ALTER COLUMN price TYPE bigint USING price * 100",
          "ALTER TABLE inventory.items ALTER COLUMN memo TYPE text USING upper(memo)",
          "UPDATE inventory.items SET name = name || '+' WHERE id % 10 = 0");
      Eventually.until(
          Duration.ofSeconds(120),
          "the changes since on main",
          () -> TableRows.read(p.reader.loadTable(ITEMS), Branches.MAIN).stream()
                  .filter(r -> String.valueOf(r.get("name")).endsWith("+"))
                  .count()
              == 20);
      assertThat(differs(p, "items", ITEMS))
          .as("before the snapshot: the rows not changed since keep the values before the rewrite")
          .containsPattern("price: expected [0-9]+00 but was [0-9]+")
          .containsPattern("memo: expected M[0-9]+ but was m[0-9]+");
      assertThat(p.reader.loadTable(ITEMS).schema().findField("price").type().typeId())
          .as("the widened column")
          .isEqualTo(Type.TypeID.LONG);

      p.incrementalSnapshot("inventory.items");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p, "items", ITEMS));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("items"));
    }
  }

  /** Null when realtime and main of {@code id} equal SELECT * of {@code source}; else what differs. */
  private static String differs(PostgresPipeline p, String source, TableIdentifier id)
      throws Exception {
    return p.differs("SELECT * FROM inventory." + source, id, List.of("id"));
  }
}
