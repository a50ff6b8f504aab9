package dev.lakestream.reader;

import dev.lakestream.common.iceberg.ContentFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

/**
 * Reads the rows of one Parquet data file in a given schema (columns the file lacks read as null),
 * keeping those whose position passes a filter: "not deleted at V" for a snapshot, "deleted at V2
 * but not at V1" for the rows a delta removes from a file.
 */
final class DataFileRows {

  private DataFileRows() {}

  interface RowConsumer {
    void accept(Record row);
  }

  static void read(
      Table table, Schema schema, DataFile file, LongPredicate keep, RowConsumer action) {
    if (file.format() != FileFormat.PARQUET) {
      throw new IllegalArgumentException(
          "data file " + file.location() + " is " + file.format() + "; only Parquet is read");
    }
    List<Types.NestedField> columns = new ArrayList<>(schema.columns());
    columns.add(MetadataColumns.ROW_POSITION);
    Schema read = new Schema(columns);
    int positionIndex = columns.size() - 1;
    try (CloseableIterable<Record> rows = Parquet.read(ContentFiles.input(table.io(), file))
        .project(read)
        .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(read, fileSchema))
        .build()) {
      for (Record r : rows) {
        long position = (Long) r.get(positionIndex);
        if (keep.test(position)) {
          GenericRecord row = GenericRecord.create(schema);
          for (int i = 0; i < positionIndex; i++) {
            row.set(i, r.get(i));
          }
          action.accept(row);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + file.location() + " of " + table.name(), e);
    }
  }
}
