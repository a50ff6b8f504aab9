package dev.lakestream.ingest.commit;

import dev.lakestream.common.iceberg.Branches;
import java.util.Objects;
import org.apache.iceberg.BaseRowDelta;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.exceptions.ValidationException;

/**
 * A round's row delta on realtime that commits only while the offsets it was built from are still
 * the branch's newest: the snapshot recording them must still be the newest that records offsets.
 * Iceberg's own validation sees only files added since the base; another committer's snapshot that
 * adds none (a truncate that removes whole files, a round of refused batches) would pass it, and
 * this round's summary, written whole from the older offsets, would then take back that commit's
 * offsets and its truncate position. Two committers of one table meet when a task moves while its
 * old owner is still committing (a commit that outlasts the wait on close, an instance cut off from
 * Kafka but not from the catalog). Snapshots that record no offsets (maintenance) may come between.
 *
 * <p>Relies on {@code BaseRowDelta}'s protected constructor and {@code validate}, as sync's {@code
 * MirrorRowDelta} does.
 */
final class RealtimeRowDelta extends BaseRowDelta {

  /** The snapshot that recorded the offsets the round was built from; null when none did. */
  private final Long recordedBy;

  /** {@code recordedBy}: the snapshot that recorded the offsets the round was built from, or null. */
  RealtimeRowDelta(Table table, Long recordedBy) {
    super(table.name(), ((HasTableOperations) table).operations());
    if (table instanceof BaseTable baseTable) {
      // As Table.newRowDelta does: the commit's report reaches the catalog's metrics reporter.
      reportWith(baseTable.reporter());
    }
    this.recordedBy = recordedBy;
  }

  @Override
  protected void validate(TableMetadata current, Snapshot parent) {
    // The branch's head, as the round's base was read (Iceberg gives main's head as the parent of
    // a branch that does not exist yet).
    SnapshotRef ref = current.ref(Branches.REALTIME);
    Snapshot head = ref == null ? null : current.snapshot(ref.snapshotId());
    Long now = SourceOffsets.recordingSnapshot(head, current::snapshot)
        .map(Snapshot::snapshotId)
        .orElse(null);
    if (!Objects.equals(now, recordedBy)) {
      throw new ValidationException(
          "another commit recorded offsets on the branch since the round's base: the round was"
              + " built from the offsets of snapshot %s, the newest are snapshot %s's",
          recordedBy, now);
    }
    super.validate(current, parent);
  }
}
