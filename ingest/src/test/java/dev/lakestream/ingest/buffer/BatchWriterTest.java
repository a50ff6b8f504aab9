package dev.lakestream.ingest.buffer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.SourcePositions;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopTables;
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
    Table table = new HadoopTables(new Configuration())
        .create(
            SCHEMA,
            PartitionSpec.unpartitioned(),
            Map.of(TableProperties.FORMAT_VERSION, "3"),
            new File(dir, "t").toString());
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
