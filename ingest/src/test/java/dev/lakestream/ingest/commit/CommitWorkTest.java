package dev.lakestream.ingest.commit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.ingest.buffer.SourceNames;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

/**
 * Whether a TRUNCATE read before its table existed may be applied to the table made since: only to
 * one ingest made (an empty first snapshot where realtime starts), not to one another hand made.
 */
class CommitWorkTest {

  private static final Schema SCHEMA = KeyFiles.ID_NAME;
  private static final SourceTable SOURCE = new SourceTable("t", "items");

  @Test
  void aTableIngestMadeTakesTheWaitingTruncate() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = asIngestMakesIt(warehouse);
      table
          .newAppend()
          .appendFile(KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10)))
          .toBranch(Branches.REALTIME)
          .commit();
      assertThat(CommitWork.madeByAnotherHand(table, SOURCE)).isNull();
      assertThat(CommitWork.madeByAnotherHand(table, null)).isNull();
    }
  }

  /**
   * Source tables {@code "Items"} and {@code items} both map to table {@code t.items}: a truncate of
   * {@code "Items"} that waited is not applied to the table {@code items} made.
   */
  @Test
  void aTableMadeFromAnotherSourceTableOfTheNameRefusesTheWaitingTruncate() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = asIngestMakesIt(warehouse);
      table.updateProperties().set(SourceNames.PREFIX + "t.items", "t.items").commit();
      assertThat(CommitWork.madeByAnotherHand(table, SOURCE)).isNull();
      assertThat(CommitWork.madeByAnotherHand(table, new SourceTable("t", "Items")))
          .contains("source table t.items");
    }
  }

  @Test
  void aTableMadeWithRowsByAnotherHandRefusesTheWaitingTruncate() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", SCHEMA).create();
      table
          .newAppend()
          .appendFile(KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10)))
          .commit();
      assertThat(CommitWork.madeByAnotherHand(table, SOURCE))
          .as("not taken over yet")
          .contains("no realtime branch");
      // Taken over: realtime branched from the backfill.
      table
          .manageSnapshots()
          .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
          .commit();
      assertThat(CommitWork.madeByAnotherHand(table, SOURCE)).contains("with 10 rows");
    }
  }

  /** A table as ingest makes it: an empty first snapshot, where its realtime branch starts. */
  private static Table asIngestMakesIt(TemporaryWarehouse warehouse) {
    Table table = warehouse.v3Table("t", "items", SCHEMA).create();
    table.newFastAppend().commit();
    table
        .manageSnapshots()
        .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
        .commit();
    return table;
  }
}
