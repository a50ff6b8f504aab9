package dev.lakestream.ingest.commit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;
import org.junit.jupiter.api.Test;

/** A round's commit on realtime, against what other writers committed since its base. */
class RoundDeltaTest {

  private static final Schema SCHEMA = KeyFiles.ID_NAME;

  @Test
  void aTruncateWhoseFilesACompactionReplacedMeanwhileConflictsInsteadOfLeavingTheirRows()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", SCHEMA).create();
      DataFile before = KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10));
      table.newAppend().appendFile(before).commit();
      table
          .manageSnapshots()
          .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
          .commit();
      Snapshot base = table.snapshot(Branches.REALTIME);
      FilesWritten truncate = new FilesWritten(
          "t.items",
          "items",
          0,
          5,
          5,
          1,
          0,
          0,
          0L,
          List.of(),
          List.of(),
          0L,
          null,
          null,
          null,
          null,
          SourcePositions.toHex(SourcePositions.encode(new long[] {100})));
      RoundDelta round = RoundDelta.of(
          table, base, "t.items", List.of(truncate), SourceOffsets.empty().with("items", 0, 5));

      // A compaction replaces the file the truncate removes, before the truncate commits.
      DataFile compacted = KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10));
      table
          .newRewrite()
          .toBranch(Branches.REALTIME)
          .validateFromSnapshot(base.snapshotId())
          .dataSequenceNumber(base.sequenceNumber())
          .rewriteFiles(Set.of(before), Set.of(compacted))
          .commit();

      assertThatThrownBy(() -> round.delta.commit())
          .as("a truncate that would remove a file no longer there, leaving its rows compacted")
          .isInstanceOf(ValidationException.class);
      table.refresh();
      assertThat(BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME)))
          .containsOnlyKeys(compacted.location());
    }
  }
}
