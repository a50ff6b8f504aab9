package dev.lakestream.ingest.buffer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.UniqueColumns;
import dev.lakestream.common.iceberg.WithoutHadoopDefaults;
import java.io.File;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BatchWriterTest {

  private static final Schema SCHEMA = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "qty", Types.IntegerType.get())),
      Set.of(1));

  @TempDir
  File dir;

  @Test
  void theKeyAndPositionColumnsAreWrittenWithoutADictionaryAndTheOthersKeepTheirs()
      throws IOException {
    Table table = table(SCHEMA);
    Schema withPosition = SourcePositions.withPosition(SCHEMA);
    List<Record> rows = new ArrayList<>();
    List<Record> keys = new ArrayList<>();
    for (long i = 0; i < 2_000; i++) {
      // Values that repeat in every column (a batch's keys and positions never do): Parquet keeps
      // a dictionary wherever it is allowed one, so where there is none, it was turned off.
      Record row = GenericRecord.create(withPosition);
      row.setField("id", i % 5);
      row.setField("qty", (int) (i % 3));
      row.setField(SourcePositions.NAME, SourcePositions.encode(new long[] {5, 7}));
      rows.add(row);
      Record key = GenericRecord.create(SCHEMA.select("id"));
      key.setField("id", i % 5);
      keys.add(key);
    }

    BatchWriter.Written written = BatchWriter.write(table, SCHEMA, rows, keys, 0, 1);

    assertThat(written.dataFiles()).hasSize(1);
    assertThat(written.deleteFiles()).hasSize(1);
    DataFile file = written.dataFiles().get(0);
    Map<String, ColumnChunkMetaData> columns = columns(file.location());
    assertThat(columns.get(SourcePositions.NAME).hasDictionaryPage())
        .as("a dictionary page for the position column")
        .isFalse();
    assertThat(columns.get("id").hasDictionaryPage())
        .as("a dictionary page for the key column")
        .isFalse();
    assertThat(columns.get("qty").hasDictionaryPage())
        .as("a dictionary page for a column of the table")
        .isTrue();
    // The bounds sync and TRUNCATE read are kept.
    assertThat(SourcePositions.lower(file))
        .isEqualTo(ByteBuffer.wrap(SourcePositions.encode(new long[] {5, 7}).array()));
    Map<String, ColumnChunkMetaData> deleted =
        columns(written.deleteFiles().get(0).location());
    assertThat(deleted).containsOnlyKeys("id");
    assertThat(deleted.get("id").hasDictionaryPage())
        .as("a dictionary page for the key column of the equality-delete file")
        .isFalse();
  }

  @Test
  void aColumnGetsNoDictionaryOnlyWhereParquetWouldHaveDroppedItsOwn() throws IOException {
    Schema schema = new Schema(
        List.of(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "serial", Types.LongType.get()),
            Types.NestedField.optional(3, "wide", Types.LongType.get()),
            Types.NestedField.optional(4, "narrow", Types.LongType.get()),
            Types.NestedField.optional(5, "name", Types.StringType.get()),
            Types.NestedField.optional(6, "status", Types.StringType.get()),
            Types.NestedField.optional(7, "amount", Types.DecimalType.of(12, 2)),
            Types.NestedField.optional(8, "blob", Types.BinaryType.get()),
            Types.NestedField.optional(9, "code", Types.FixedType.ofLength(4)),
            Types.NestedField.optional(10, "once", Types.LongType.get()),
            Types.NestedField.optional(11, "active", Types.BooleanType.get()),
            Types.NestedField.optional(12, "product", Types.LongType.get())),
        Set.of(1));
    Table table = table(schema);
    Schema withPosition = SourcePositions.withPosition(schema);
    Random random = new Random(17);
    byte[][] codes = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
    List<Record> rows = new ArrayList<>();
    // A first page's worth of rows (Parquet's default page row limit): Parquet decides each
    // column's dictionary at that page's end.
    for (long i = 0; i < 20_000; i++) {
      Record row = GenericRecord.create(withPosition);
      row.setField("id", i);
      row.setField("serial", i * 7_919);
      row.setField("wide", random.nextLong() >>> 20);
      // 20,000 values out of 20,000 repeat often: a dictionary pays, and 1,000 rows show repeats.
      row.setField("narrow", (long) random.nextInt(20_000));
      row.setField("name", "customer " + Long.toString(random.nextLong() >>> 1, 36));
      row.setField("status", List.of("new", "paid", "shipped").get(random.nextInt(3)));
      row.setField("amount", BigDecimal.valueOf(random.nextInt(100_000_000), 2));
      byte[] blob = new byte[16];
      random.nextBytes(blob);
      row.setField("blob", ByteBuffer.wrap(blob));
      // Fixed-length bytes: Parquet's format version 1, which Iceberg writes, has no dictionary
      // for them, repeated or not.
      row.setField("code", codes[random.nextInt(codes.length)].clone());
      row.setField("once", i == 0 ? 42L : null);
      row.setField("active", random.nextBoolean());
      // Rows in the source's order: unique over the first 1,000 rows, each value 4 times over the
      // page (a product id in rows ordered by warehouse, then product). A dictionary pays.
      row.setField("product", i % 5_000);
      row.setField(SourcePositions.NAME, SourcePositions.encode(new long[] {5, i}));
      rows.add(row);
    }

    DataFile chosen =
        BatchWriter.write(table, schema, rows, List.of(), 0, 1).dataFiles().get(0);
    // The same rows written with Parquet left to decide every column but the keys and positions.
    DataWriter<Record> writer = WithoutHadoopDefaults.writers(
            new GenericFileWriterFactory.Builder(table)
                .dataFileFormat(FileFormat.PARQUET)
                .dataSchema(withPosition)
                .writerProperties(UniqueColumns.dataFile(schema))
                .build())
        .newDataWriter(
            OutputFileFactory.builderFor(table, 0, 2)
                .format(FileFormat.PARQUET)
                .build()
                .newOutputFile(),
            table.spec(),
            null);
    try (writer) {
      rows.forEach(writer::write);
    }
    DataFile parquets = writer.toDataFile();

    Map<String, Boolean> chosenPages = dictionaryPages(chosen.location());
    Map<String, Boolean> parquetsPages = dictionaryPages(parquets.location());
    assertThat(chosenPages)
        .as("which columns have a dictionary page, against Parquet's own choice")
        .isEqualTo(parquetsPages);
    // Not a vacuous match: both kinds are there.
    assertThat(chosenPages)
        .containsEntry("narrow", true)
        .containsEntry("product", true)
        .containsEntry("status", true)
        .containsEntry("code", false)
        .containsEntry("serial", false)
        .containsEntry("wide", false)
        .containsEntry("name", false)
        .containsEntry("amount", false)
        .containsEntry("blob", false);
    assertThat(chosen.recordCount()).isEqualTo(20_000);
    // What the choice saves is Parquet's work on the way, not bytes: the files are the same size.
    assertThat(chosen.fileSizeInBytes()).isEqualTo(parquets.fileSizeInBytes());
    // The columns the choice turned off, and only those: the properties it gave the writer.
    assertThat(new TreeMap<>(UniqueColumns.dataFile(schema, rows, table.properties())))
        .isEqualTo(new TreeMap<>(Map.of(
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "id",
            "false",
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + SourcePositions.NAME,
            "false",
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "serial",
            "false",
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "wide",
            "false",
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "name",
            "false",
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "amount",
            "false",
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "blob",
            "false")));
    // A column the table's own properties set keeps the table's choice.
    assertThat(UniqueColumns.dataFile(
            schema,
            rows,
            Map.of(TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "wide", "true")))
        .doesNotContainKey(TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "wide")
        .containsEntry(
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "name", "false");
  }

  private Table table(Schema schema) {
    return new HadoopTables(new Configuration())
        .create(
            schema,
            PartitionSpec.unpartitioned(),
            Map.of(TableProperties.FORMAT_VERSION, "3"),
            new File(dir, "t").toString());
  }

  private static Map<String, Boolean> dictionaryPages(String location) throws IOException {
    Map<String, Boolean> pages = new TreeMap<>();
    columns(location).forEach((name, c) -> pages.put(name, c.hasDictionaryPage()));
    return pages;
  }

  private static Map<String, ColumnChunkMetaData> columns(String location) throws IOException {
    Map<String, ColumnChunkMetaData> columns = new HashMap<>();
    try (ParquetFileReader reader =
        ParquetFileReader.open(HadoopInputFile.fromPath(new Path(location), new Configuration()))) {
      reader.getFooter().getBlocks().forEach(block -> block
          .getColumns()
          .forEach(c -> columns.put(c.getPath().toDotString(), c)));
    }
    return columns;
  }
}
