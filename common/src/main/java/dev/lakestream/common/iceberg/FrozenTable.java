package dev.lakestream.common.iceberg;

import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableOperations;

/**
 * A table as it is at one moment, for reads that must agree with each other. A table object is
 * shared by the threads of an app, and Iceberg's refresh puts the metadata it read into it whether
 * or not it is newer (a refresh that read the pointer before another thread's commit and ended
 * after it sets the table back). Two reads of one branch, or of two branches, may then see two
 * versions of the table. The frozen table reads one version: it may be old, which a commit's
 * validation against the table's current state catches, but it is never two versions at once.
 */
public final class FrozenTable {

  private FrozenTable() {}

  /** {@code table}'s current metadata, fixed; a table without operations as it is. */
  public static Table of(Table table) {
    if (!(table instanceof HasTableOperations withOperations)) {
      return table;
    }
    TableOperations operations = withOperations.operations();
    return new BaseTable(
        new StaticTableOperations(
            operations.current(), operations.io(), operations.locationProvider()),
        table.name());
  }
}
