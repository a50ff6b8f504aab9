package dev.lakestream.reader;

import dev.lakestream.common.iceberg.ContentFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.LongPredicate;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;

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
    // Without a filter, Parquet returns every row of the file in order: the n-th row read is at
    // position n. Counting them, rather than projecting Iceberg's _pos column, also reads a table
    // that has a column of that name.
    try (CloseableIterable<Record> rows = Parquet.read(ContentFiles.input(table.io(), file))
        .project(schema)
        .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(schema, fileSchema))
        .build()) {
      long position = 0;
      for (Record row : rows) {
        if (keep.test(position++)) {
          action.accept(row);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + file.location() + " of " + table.name(), e);
    }
  }
}
