package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.TypeUtil;

/** Reads only the key columns of a Parquet data or delete file, row by row in file order. */
public final class KeyColumns {

  private KeyColumns() {}

  /** The table's key columns (its identifier fields) as a schema. */
  public static Schema keySchema(Table table) {
    Set<Integer> ids = table.schema().identifierFieldIds();
    if (ids.isEmpty()) {
      throw new IllegalStateException(
          "table " + table.name() + " has no identifier fields (primary key)");
    }
    return TypeUtil.select(table.schema(), ids);
  }

  /** Calls {@code rows} with each row's key, in position order; returns the number of rows. */
  public static long forEach(
      Table table, ContentFile<?> file, Schema keySchema, Consumer<Record> rows) {
    long position = 0;
    try (CloseableIterable<Record> records = Parquet.read(ContentFiles.input(table.io(), file))
        .project(keySchema)
        .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(keySchema, fileSchema))
        .build()) {
      for (Record key : records) {
        rows.accept(key);
        position++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading the key columns of " + file.location(), e);
    }
    return position;
  }

  /**
   * The bytes a read of the key columns takes: their compressed column-chunk sizes from the file's
   * metrics, or the whole file when the metrics lack them.
   */
  public static long bytes(ContentFile<?> file, Schema keySchema) {
    Map<Integer, Long> sizes = file.columnSizes();
    if (sizes == null) {
      return file.fileSizeInBytes();
    }
    long total = 0;
    for (var field : keySchema.columns()) {
      Long size = sizes.get(field.fieldId());
      if (size == null) {
        return file.fileSizeInBytes();
      }
      total += size;
    }
    return total;
  }
}
