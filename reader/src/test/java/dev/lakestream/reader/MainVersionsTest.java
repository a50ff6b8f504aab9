package dev.lakestream.reader;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Reads of tables the pipeline's own tests do not make (its tables never have these shapes). */
class MainVersionsTest {

  private static final Schema WITH_POS = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "_pos", Types.LongType.get()),
      Types.NestedField.optional(3, "name", Types.StringType.get()));

  @Test
  void aTableWithAColumnNamedLikeIcebergsRowPositionIsRead() throws Exception {
    try (InMemoryCatalog catalog = new InMemoryCatalog()) {
      catalog.initialize("memory", Map.of());
      catalog.createNamespace(Namespace.of("db"));
      // Tables an earlier version of the pipeline made could have such a column.
      Table table = catalog.createTable(
          TableIdentifier.of("db", "t"),
          WITH_POS,
          PartitionSpec.unpartitioned(),
          Map.of("format-version", "3"));
      DataFile first = write(table, "first", 0, 3);
      table.newAppend().appendFile(first).commit();
      long v1 = table.currentSnapshot().snapshotId();
      DataFile second = write(table, "second", 1, 3);
      table.newRewrite().deleteFile(first).addFile(second).commit();
      long v2 = table.currentSnapshot().snapshotId();
      MainVersions main = MainVersions.of(table);

      List<Record> at1 = new ArrayList<>();
      assertThat(main.snapshot(v1, at1::add)).isEqualTo(3);
      List<String> delta = new ArrayList<>();
      DeltaStats stats = main.delta(v1, v2, (row, weight) -> delta.add(weight + " " + row));

      assertThat(at1)
          .containsExactlyInAnyOrder(row(0, 100, "r0"), row(1, 101, "r1"), row(2, 102, "r2"));
      assertThat(stats.appendOnly()).isFalse();
      assertThat(stats.rowsCancelled()).as("rows 1 and 2, in both files").isEqualTo(4);
      assertThat(delta)
          .containsExactlyInAnyOrder("-1 " + row(0, 100, "r0"), "1 " + row(3, 103, "r3"));
    }
  }

  /** A data file of rows {@code first} .. {@code first + count - 1}. */
  private static DataFile write(Table table, String name, int first, int count) throws Exception {
    DataWriter<Record> writer = Parquet.writeData(
            table.io().newOutputFile(table.location() + "/data/" + name + ".parquet"))
        .schema(table.schema())
        .withSpec(table.spec())
        .createWriterFunc(GenericParquetWriter::create)
        .overwrite()
        .build();
    try (writer) {
      for (int i = first; i < first + count; i++) {
        writer.write(row(i, 100 + i, "r" + i));
      }
    }
    return writer.toDataFile();
  }

  private static Record row(long id, long pos, String name) {
    GenericRecord r = GenericRecord.create(WITH_POS);
    r.set(0, id);
    r.set(1, pos);
    r.set(2, name);
    return r;
  }
}
