package dev.lakestream.ingest.commit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.ingest.buffer.SourceNames;
import dev.lakestream.testkit.DelegatingTableOperations;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.junit.jupiter.api.Test;

/**
 * Whether a TRUNCATE read before its table existed may be applied to the table made since: only to
 * one ingest made (an empty first snapshot where realtime starts), not to one another hand made.
 * And which head of realtime a round is built on when another thread set the shared table back.
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

  /**
   * The table is shared with the stream threads: one whose refresh read the table's pointer before
   * the committer's last commit and ended after it sets the table back. The committer's next round
   * is built on realtime as its last commit left it, not on the older head, whose summary lacks
   * that commit's offsets and truncate position (a truncate that removed nothing adds no file, so
   * the round's validation would not notice).
   */
  @Test
  void aRoundIsBuiltOnTheHeadTheCommitterLeftThoughAnotherThreadSetTheSharedTableBack()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table made = asIngestMakesIt(warehouse);
      SetBack ops = new SetBack(((HasTableOperations) made).operations());
      Table shared = new BaseTable(ops, made.name());
      TableMetadata beforeCommit = ops.current();
      shared
          .newRowDelta()
          .toBranch(Branches.REALTIME)
          .set(SummaryKeys.TRUNCATED_AT, "00000000000000ff")
          .commit();
      Snapshot committed = shared.snapshot(Branches.REALTIME);
      Map<String, Long> ours = new HashMap<>();
      ours.put(shared.uuid().toString(), committed.sequenceNumber());

      ops.setBack(beforeCommit);
      assertThat(shared.snapshot(Branches.REALTIME).snapshotId())
          .as("the shared table set back")
          .isNotEqualTo(committed.snapshotId());

      Snapshot base = CommitWork.notOlderThanOurs(ours, "t.items", shared);

      assertThat(base.snapshotId()).isEqualTo(committed.snapshotId());
      assertThat(base.summary()).containsEntry(SummaryKeys.TRUNCATED_AT, "00000000000000ff");
      assertThat(ours).containsEntry(shared.uuid().toString(), committed.sequenceNumber());
    }
  }

  /** Realtime set back on purpose (an operator moved the branch): taken as it is, not waited for. */
  @Test
  void realtimeSetBackOnPurposeIsTakenAsItIs() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = asIngestMakesIt(warehouse);
      long first = table.snapshot(Branches.REALTIME).snapshotId();
      table.newRowDelta().toBranch(Branches.REALTIME).commit();
      Map<String, Long> ours = new HashMap<>();
      ours.put(table.uuid().toString(), table.snapshot(Branches.REALTIME).sequenceNumber());
      table.manageSnapshots().replaceBranch(Branches.REALTIME, first).commit();

      Snapshot base = CommitWork.notOlderThanOurs(ours, "t.items", table);

      assertThat(base.snapshotId()).isEqualTo(first);
      assertThat(ours)
          .as("forgotten: the next commit sets it anew")
          .doesNotContainKey(table.uuid().toString());
    }
  }

  /** A table's operations whose current metadata a test sets back, as a late refresh does. */
  private static final class SetBack extends DelegatingTableOperations {
    private TableMetadata setBack;

    SetBack(TableOperations ops) {
      super(ops);
    }

    void setBack(TableMetadata metadata) {
      setBack = metadata;
    }

    @Override
    public TableMetadata current() {
      return setBack != null ? setBack : ops.current();
    }

    @Override
    public TableMetadata refresh() {
      setBack = null;
      return ops.refresh();
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
