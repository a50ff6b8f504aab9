package dev.lakestream.testkit;

import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

/**
 * A table whose commits go through a test's hook (to let another writer commit first, to count
 * attempts); everything else is done by the table's own operations.
 */
public final class CommitsThrough {

  /** What a commit of the table does; {@code ops} are the table's own. */
  @FunctionalInterface
  public interface Hook {
    void commit(TableOperations ops, TableMetadata base, TableMetadata metadata);
  }

  private CommitsThrough() {}

  /** {@code table}, its commits made by {@code hook}. */
  public static Table table(Table table, Hook hook) {
    TableOperations ops = ((HasTableOperations) table).operations();
    TableOperations through = new TableOperations() {
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
        hook.commit(ops, base, metadata);
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
    };
    return new BaseTable(through, table.name());
  }
}
