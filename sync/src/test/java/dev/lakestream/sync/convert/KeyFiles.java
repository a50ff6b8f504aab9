package dev.lakestream.sync.convert;

import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;

/** Data and equality-delete files of a table keyed by its column {@code id} (field 1). */
final class KeyFiles {

  private KeyFiles() {}

  /** A data file with one row per id, in order (position = index), its {@code name} set. */
  static DataFile data(Table table, Schema schema, int writer, List<Object> ids) throws Exception {
    OutputFileFactory files = OutputFileFactory.builderFor(table, writer, 1)
        .format(FileFormat.PARQUET)
        .build();
    DataWriter<Record> out =
        writers(table, schema).newDataWriter(files.newOutputFile(), table.spec(), null);
    try (out) {
      for (Object id : ids) {
        Record row = GenericRecord.create(schema);
        row.setField("id", id);
        row.setField("name", "n" + id);
        out.write(row);
      }
    }
    return out.toDataFile();
  }

  /** An equality-delete file of the ids. */
  static DeleteFile deletes(Table table, Schema schema, int writer, List<Object> ids)
      throws Exception {
    Schema key = TypeUtil.select(schema, Set.of(1));
    OutputFileFactory files = OutputFileFactory.builderFor(table, writer, 2)
        .format(FileFormat.PARQUET)
        .build();
    EqualityDeleteWriter<Record> out =
        writers(table, schema).newEqualityDeleteWriter(files.newOutputFile(), table.spec(), null);
    try (out) {
      for (Object id : ids) {
        Record k = GenericRecord.create(key);
        k.setField("id", id);
        out.write(k);
      }
    }
    return out.toDeleteFile();
  }

  private static GenericFileWriterFactory writers(Table table, Schema schema) {
    return new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET)
        .deleteFileFormat(FileFormat.PARQUET)
        .dataSchema(schema)
        .equalityFieldIds(new int[] {1})
        .equalityDeleteRowSchema(TypeUtil.select(schema, Set.of(1)))
        .build();
  }
}
