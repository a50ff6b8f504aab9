package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.DeleteLoader;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

/**
 * Reads the rows of one data file of a scan, with the deletes the scan found for it applied
 * (equality deletes and deletion vectors), in the table's own columns. What maintenance and
 * versioned reads need when they work file by file rather than on a whole snapshot.
 */
public final class FileRows {

  private FileRows() {}

  /** {@code record} in the columns of {@code schema}: the columns a reader added to apply deletes left out. */
  static Record inColumns(Schema schema, Record record) {
    GenericRecord row = GenericRecord.create(schema);
    for (Types.NestedField f : schema.columns()) {
      row.setField(f.name(), record.getField(f.name()));
    }
    return row;
  }

  /** Calls {@code action} with each live row of {@code task}'s file, in file order. */
  public static void forEach(Table table, FileScanTask task, Consumer<Record> action) {
    forEach(table, task, table.schema(), action);
  }

  /**
   * Calls {@code action} with each live row of {@code task}'s file in the columns of {@code
   * projection} (which may hold columns a file keeps outside the table's schema, such as {@link
   * SourcePositions#FIELD}), in file order.
   */
  public static void forEach(
      Table table, FileScanTask task, Schema projection, Consumer<Record> action) {
    forEach(table, task, projection, null, action);
  }

  /**
   * As {@link #forEach(Table, FileScanTask, Schema, Consumer)}, with the delete files read through
   * {@code shared} (shared by the tasks of one snapshot, so each is read once); null reads them
   * for this task alone, as Iceberg does.
   */
  public static void forEach(
      Table table,
      FileScanTask task,
      Schema projection,
      SharedDeletes shared,
      Consumer<Record> action) {
    if (task.file().format() != FileFormat.PARQUET) {
      throw new IllegalArgumentException(
          "table " + table.name() + ": data file " + task.file().location() + " is "
              + task.file().format() + "; only Parquet data files are read");
    }
    GenericDeleteFilter deletes =
        new GenericDeleteFilter(table.io(), task, table.schema(), projection) {
          @Override
          protected DeleteLoader newDeleteLoader() {
            return shared == null ? super.newDeleteLoader() : shared;
          }
        };
    Schema read = deletes.requiredSchema();
    boolean extraColumns = read.columns().size() != projection.columns().size();
    try (CloseableIterable<Record> rows =
        deletes.filter(Parquet.read(ContentFiles.input(table.io(), task.file()))
            .project(read)
            .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(read, fileSchema))
            .build())) {
      for (Record r : rows) {
        action.accept(extraColumns ? inColumns(projection, r) : r);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "reading " + task.file().location() + " of " + table.name(), e);
    }
  }
}
