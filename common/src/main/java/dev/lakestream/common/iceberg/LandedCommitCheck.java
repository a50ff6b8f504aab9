package dev.lakestream.common.iceberg;

import io.micrometer.core.instrument.Metrics;
import java.util.HashSet;
import java.util.Set;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A table's operations that, when the catalog reports a commit refused, read the table again and
 * take the commit as committed if the snapshots it adds are on the table.
 *
 * <p>A snapshot id is drawn at random for one operation and is on a table only when that
 * operation's commit applied, so finding it there is proof the commit landed. A commit that adds no
 * snapshot (properties, a branch moved, snapshots expired) is reported as the catalog reports it:
 * Iceberg's retry applies such a change again without harm (an expiry that landed so leaves the
 * files of the snapshots it removed to orphan-file removal). When the table cannot be read after
 * the refusal, the commit's state is unknown ({@link CommitStateUnknownException}), which keeps
 * Iceberg from retrying it and from deleting what it wrote.
 */
final class LandedCommitCheck implements TableOperations {

  private static final Logger LOG = LoggerFactory.getLogger(LandedCommitCheck.class);

  /** Commits the catalog reported refused and found applied, counted in every app's metrics. */
  static final String RECONCILED_METRIC = "lakestream.iceberg.commits.reconciled";

  private final TableOperations delegate;
  private final String table;

  LandedCommitCheck(TableOperations delegate, String table) {
    this.delegate = delegate;
    this.table = table;
  }

  @Override
  public void commit(TableMetadata base, TableMetadata metadata) {
    try {
      delegate.commit(base, metadata);
    } catch (CommitFailedException refused) {
      Set<Long> added = addedSnapshots(base, metadata);
      if (base == null || added.isEmpty()) {
        // A table's creation is refused as reported (its own check, the table's row, is exact).
        throw refused;
      }
      TableMetadata now;
      try {
        now = delegate.refresh();
      } catch (RuntimeException unread) {
        refused.addSuppressed(unread);
        throw new CommitStateUnknownException(refused);
      }
      long present = added.stream().filter(id -> now.snapshot(id) != null).count();
      if (present == 0) {
        throw refused;
      }
      if (present < added.size()) {
        // One commit adds its snapshots together; some without the others is no state a commit
        // leaves, so say so rather than guess.
        throw new CommitStateUnknownException(new IllegalStateException(
            "table " + table + ": " + present + " of the " + added.size()
                + " snapshots of a commit reported refused are on the table",
            refused));
      }
      // What the catalog does after a commit it reports applied: the metadata files the new
      // metadata no longer lists (write.metadata.delete-after-commit.enabled) are deleted.
      CatalogUtil.deleteRemovedMetadataFiles(delegate.io(), base, metadata);
      Metrics.counter(RECONCILED_METRIC).increment();
      LOG.warn(
          "Table {}: the catalog reported a commit refused ({}), but its snapshots {} are on the"
              + " table (a statement run again after a lost connection finds its own change):"
              + " taken as committed",
          table,
          refused.getMessage(),
          added);
    }
  }

  private static Set<Long> addedSnapshots(TableMetadata base, TableMetadata metadata) {
    Set<Long> added = new HashSet<>();
    for (Snapshot snapshot : metadata.snapshots()) {
      if (base.snapshot(snapshot.snapshotId()) == null) {
        added.add(snapshot.snapshotId());
      }
    }
    return added;
  }

  @Override
  public TableMetadata current() {
    return delegate.current();
  }

  @Override
  public TableMetadata refresh() {
    return delegate.refresh();
  }

  @Override
  public FileIO io() {
    return delegate.io();
  }

  @Override
  public EncryptionManager encryption() {
    return delegate.encryption();
  }

  @Override
  public String metadataFileLocation(String fileName) {
    return delegate.metadataFileLocation(fileName);
  }

  @Override
  public LocationProvider locationProvider() {
    return delegate.locationProvider();
  }

  @Override
  public TableOperations temp(TableMetadata uncommittedMetadata) {
    return delegate.temp(uncommittedMetadata);
  }

  @Override
  public long newSnapshotId() {
    return delegate.newSnapshotId();
  }

  @Override
  public boolean requireStrictCleanup() {
    return delegate.requireStrictCleanup();
  }
}
