package dev.lakestream.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;

/** Reads a branch of a table back with Iceberg's generic reader, as test rows. */
public final class TableRows {

  private TableRows() {}

  /** Every row of {@code branch}, each as a column-name to value map (nested structs as maps). */
  public static List<Map<String, Object>> read(Table table, String branch) {
    table.refresh();
    Snapshot snapshot = table.snapshot(branch);
    if (snapshot == null) {
      throw new IllegalStateException("table " + table.name() + " has no branch " + branch);
    }
    return readAt(table, snapshot.snapshotId());
  }

  /** Every row of snapshot {@code snapshotId} of {@code table}, as {@link #read} gives them. */
  public static List<Map<String, Object>> readAt(Table table, long snapshotId) {
    List<Map<String, Object>> out = new ArrayList<>();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
      for (Record r : records) {
        out.add(toMap(r));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** The snapshots of {@code branch}, oldest first. */
  public static List<Snapshot> snapshots(Table table, String branch) {
    table.refresh();
    List<Snapshot> out = new ArrayList<>();
    Snapshot head = table.snapshot(branch);
    if (head != null) {
      SnapshotUtil.ancestorsOf(head.snapshotId(), table::snapshot).forEach(s -> out.add(0, s));
    }
    return out;
  }

  /**
   * The rows by primary key; fails on a duplicate key (a row the pipeline wrote twice), reporting
   * both copies.
   */
  public static Map<List<Object>, Map<String, Object>> byKey(
      List<Map<String, Object>> rows, List<String> key) {
    Map<List<Object>, Map<String, Object>> out = new HashMap<>();
    for (Map<String, Object> row : rows) {
      List<Object> k = new ArrayList<>();
      key.forEach(column -> k.add(row.get(column)));
      Map<String, Object> previous = out.put(List.copyOf(k), row);
      if (previous != null) {
        throw new AssertionError("duplicate key " + k + ": " + previous + " and " + row);
      }
    }
    return out;
  }

  private static Map<String, Object> toMap(Record record) {
    Map<String, Object> row = new LinkedHashMap<>();
    List<Types.NestedField> fields = record.struct().fields();
    for (int i = 0; i < fields.size(); i++) {
      if (MetadataColumns.isMetadataColumn(fields.get(i).fieldId())) {
        // The reader appends what it needed to apply deletes (_pos); not a column of the table. By
        // id: a source column may have a metadata column's name.
        continue;
      }
      Object v = record.get(i);
      row.put(fields.get(i).name(), v instanceof Record nested ? toMap(nested) : v);
    }
    return row;
  }
}
