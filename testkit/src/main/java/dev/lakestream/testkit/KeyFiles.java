package dev.lakestream.testkit;

import java.util.ArrayList;
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
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/** Data and equality-delete files of a table keyed by its schema's identifier fields. */
public final class KeyFiles {

  /** A table keyed by an int {@code id}, with a string {@code name}. */
  public static final Schema ID_NAME = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.IntegerType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get())),
      Set.of(1));

  private KeyFiles() {}

  /** The ids {@code from} (inclusive) to {@code to} (exclusive). */
  public static List<Object> ids(int from, int to) {
    List<Object> ids = new ArrayList<>();
    for (int i = from; i < to; i++) {
      ids.add(i);
    }
    return ids;
  }

  /** A data file with one row per id of a table keyed by {@code id}, its {@code name} set. */
  public static DataFile data(Table table, Schema schema, List<Object> ids) throws Exception {
    return dataFile(
        table,
        schema,
        ids.stream()
            .map(id -> {
              Record row = GenericRecord.create(schema);
              row.setField("id", id);
              row.setField("name", "n" + id);
              return row;
            })
            .toList());
  }

  /** An equality-delete file of the ids of a table keyed by {@code id}. */
  public static DeleteFile deletes(Table table, Schema schema, List<Object> ids) throws Exception {
    return deleteFile(
        table,
        schema,
        ids.stream()
            .map(id -> {
              Record key = GenericRecord.create(keySchema(schema));
              key.setField("id", id);
              return key;
            })
            .toList());
  }

  /** A data file of the rows, in order (position = index). */
  public static DataFile dataFile(Table table, Schema schema, Iterable<Record> rows)
      throws Exception {
    DataWriter<Record> out =
        writers(table, schema).newDataWriter(newFile(table), table.spec(), null);
    try (out) {
      rows.forEach(out::write);
    }
    return out.toDataFile();
  }

  /** An equality-delete file of the keys, records of {@link #keySchema}. */
  public static DeleteFile deleteFile(Table table, Schema schema, Iterable<Record> keys)
      throws Exception {
    EqualityDeleteWriter<Record> out =
        writers(table, schema).newEqualityDeleteWriter(newFile(table), table.spec(), null);
    try (out) {
      keys.forEach(out::write);
    }
    return out.toDeleteFile();
  }

  /** The schema's identifier fields. */
  public static Schema keySchema(Schema schema) {
    return TypeUtil.select(schema, schema.identifierFieldIds());
  }

  private static EncryptedOutputFile newFile(Table table) {
    return OutputFileFactory.builderFor(table, 1, 1)
        .format(FileFormat.PARQUET)
        .build()
        .newOutputFile();
  }

  private static GenericFileWriterFactory writers(Table table, Schema schema) {
    return new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET)
        .deleteFileFormat(FileFormat.PARQUET)
        .dataSchema(schema)
        .equalityFieldIds(schema.identifierFieldIds().stream()
            .mapToInt(Integer::intValue)
            .sorted()
            .toArray())
        .equalityDeleteRowSchema(keySchema(schema))
        .build();
  }
}
