package dev.lakestream.ingest.buffer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * The record of source tables a table keeps, as two ingest instances see it, each with its own
 * cache of the table: one whose cached metadata is older than the other's record still refuses the
 * second source table, leaves no mark of it, and the first keeps the table after a restart.
 */
class SourceNamesInstancesTest {

  private static final TableIdentifier ID = TableIdentifier.of("inventory", "Order_Items");
  private static final SourceTable FIRST = new SourceTable("inventory", "Order_Items");
  private static final SourceTable SECOND = new SourceTable("inventory", "Order Items");
  private static final String TOPIC = "dbserver1.inventory.Order_Items";

  @Test
  void anInstanceWithOlderMetadataRefusesTheSecondSourceTableAndTheFirstKeepsTheTable()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      warehouse.v3Table("inventory", "Order_Items", KeyFiles.ID_NAME).create();
      TableManager one = new TableManager(warehouse.openCatalog());
      TableManager other = new TableManager(warehouse.openCatalog());
      Table stale = other.table(ID); // cached before the first instance records anything

      new SourceNames(one).check(TOPIC, ID, one.table(ID), FIRST);
      assertThatThrownBy(() -> new SourceNames(other).check(TOPIC, ID, stale, SECOND))
          .isInstanceOf(BadChangeException.class)
          .hasMessageContaining(
              "source table inventory.Order Items (topic " + TOPIC + ") and source table"
                  + " inventory.Order_Items both map to table inventory.Order_Items");

      Table now = warehouse.catalog().loadTable(ID);
      assertThat(now.properties())
          .containsEntry(SourceNames.PREFIX + "inventory.Order_Items", "inventory.Order_Items")
          .doesNotContainKey(SourceNames.PREFIX + "inventory.Order Items");
      // Restarted, the first instance still takes its source table's changes.
      TableManager restarted = new TableManager(warehouse.openCatalog());
      new SourceNames(restarted).check(TOPIC, ID, restarted.table(ID), FIRST);
    }
  }

  @Test
  void aSourceTableOfAnotherNameIsTakenBesideTheFirst() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      warehouse.v3Table("inventory", "Order_Items", KeyFiles.ID_NAME).create();
      TableManager tables = new TableManager(warehouse.openCatalog());
      SourceNames names = new SourceNames(tables);
      names.check(TOPIC, ID, tables.table(ID), FIRST);
      names.check(TOPIC, ID, tables.table(ID), new SourceTable("inventory", "order_items_2"));

      assertThat(warehouse.catalog().loadTable(ID).properties())
          .containsKey(SourceNames.PREFIX + "inventory.Order_Items")
          .containsKey(SourceNames.PREFIX + "inventory.order_items_2");
    }
  }
}
