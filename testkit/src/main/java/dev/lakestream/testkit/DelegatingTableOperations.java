package dev.lakestream.testkit;

import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * A table's operations that do what {@code ops} do; a test overrides what it changes (a commit
 * through its hook, metadata set back). {@code temp} and {@code requireStrictCleanup} stay the
 * interface's.
 */
public class DelegatingTableOperations implements TableOperations {

  protected final TableOperations ops;

  public DelegatingTableOperations(TableOperations ops) {
    this.ops = ops;
  }

  @Override
  public TableMetadata current() {
    return ops.current();
  }

  @Override
  public TableMetadata refresh() {
    return ops.refresh();
  }

  @Override
  public void commit(TableMetadata base, TableMetadata metadata) {
    ops.commit(base, metadata);
  }

  @Override
  public FileIO io() {
    return ops.io();
  }

  @Override
  public EncryptionManager encryption() {
    return ops.encryption();
  }

  @Override
  public String metadataFileLocation(String fileName) {
    return ops.metadataFileLocation(fileName);
  }

  @Override
  public LocationProvider locationProvider() {
    return ops.locationProvider();
  }

  @Override
  public long newSnapshotId() {
    return ops.newSnapshotId();
  }
}
