package dev.lakestream.sync.commit;

import org.apache.iceberg.BaseRowDelta;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.exceptions.ValidationException;

/**
 * A row delta that also adds a prepared data manifest, so data files arrive with the data sequence
 * numbers written in it (their realtime ones) instead of the new snapshot's, in the same snapshot
 * as the deletion vectors. ({@code RowDelta.addRows} and {@code cherrypick} assign new sequence
 * numbers; a transaction of an append and a row delta makes two snapshots, the first of which shows
 * deleted rows as live.) The commit fails when the branch's head is not the snapshot the cycle was
 * planned against.
 *
 * <p>Relies on Iceberg internals that are public but not API ({@code BaseRowDelta}'s protected
 * constructor and {@code add(ManifestFile)}); {@code PipelineTopologyTest.dataFilesOnMainKeepTheirRealtimeSequenceNumbers} pins the behaviour.
 */
final class MirrorRowDelta extends BaseRowDelta {

  private final long expectedParentId;
  private final String operation;

  MirrorRowDelta(Table table, long expectedParentId, String operation) {
    super(table.name(), ((HasTableOperations) table).operations());
    if (table instanceof BaseTable baseTable) {
      // As Table.newRowDelta does: the commit's report reaches the catalog's metrics reporter.
      reportWith(baseTable.reporter());
    }
    this.expectedParentId = expectedParentId;
    this.operation = operation;
  }

  void addDataManifest(ManifestFile manifest) {
    add(manifest);
  }

  @Override
  protected String operation() {
    return operation;
  }

  @Override
  protected void validate(TableMetadata base, Snapshot parent) {
    if (parent == null || parent.snapshotId() != expectedParentId) {
      throw new ValidationException(
          "branch moved since the cycle was planned: expected head %s, found %s",
          expectedParentId, parent == null ? null : parent.snapshotId());
    }
    super.validate(base, parent);
  }
}
