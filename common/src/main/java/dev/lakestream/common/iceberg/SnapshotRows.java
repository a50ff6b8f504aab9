package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Reads every row of a snapshot with Iceberg's generic reader, deletes applied, in the table's own
 * columns: the reader appends the columns it needed to apply deletes ({@code _pos} for deletion
 * vectors), which are not part of the row.
 */
public final class SnapshotRows {

  private SnapshotRows() {}

  public static void forEach(Table table, long snapshotId, Consumer<Record> action) {
    Schema schema = table.schema();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
      for (Record r : records) {
        action.accept(r.size() == schema.columns().size() ? r : FileRows.inColumns(schema, r));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading snapshot " + snapshotId + " of " + table.name(), e);
    }
  }
}
