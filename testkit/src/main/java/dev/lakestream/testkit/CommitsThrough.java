package dev.lakestream.testkit;

import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;

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
    TableOperations through =
        new DelegatingTableOperations(((HasTableOperations) table).operations()) {
          @Override
          public void commit(TableMetadata base, TableMetadata metadata) {
            hook.commit(ops, base, metadata);
          }
        };
    return new BaseTable(through, table.name());
  }
}
