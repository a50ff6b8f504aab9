package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.TemporaryWarehouse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Rows read at positions, page by page, are the rows a full read finds there; and far fewer bytes are read. */
class RowsAtPositionsTest {

  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "body", Types.StringType.get()),
      Types.NestedField.optional(3, "bin", Types.BinaryType.get()),
      Types.NestedField.optional(4, "tags", Types.ListType.ofOptional(5, Types.StringType.get())),
      Types.NestedField.optional(
          6,
          "point",
          Types.StructType.of(
              Types.NestedField.optional(7, "x", Types.DoubleType.get()),
              Types.NestedField.optional(8, "y", Types.DoubleType.get()))));

  @Test
  void rowsAtPositionsEqualTheFullReadsRowsAndOnlyTheirPagesAreRead() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      var catalog = warehouse.catalog();
      ((SupportsNamespaces) catalog).createNamespace(Namespace.of("t"));
      Table table = catalog
          .buildTable(TableIdentifier.of("t", "docs"), SCHEMA)
          .withPartitionSpec(PartitionSpec.unpartitioned())
          .withProperty(
              TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, Long.toString(8 * 1024 * 1024))
          .create();
      DataFile file = write(table, 30_000, new Random(1));
      List<Record> all = readAll(table, file);

      Random random = new Random(2);
      TreeSet<Long> positions = new TreeSet<>(List.of(0L, 29_999L));
      while (positions.size() < 25) {
        positions.add((long) random.nextInt(30_000));
      }
      RowsAtPositions.Read read = RowsAtPositions.read(
          table.io(), file, SCHEMA.select("body", "bin", "tags", "point"), positions);
      for (long p : positions) {
        Record expected = all.get((int) p);
        Record got = read.rows().get(p);
        assertThat(got.getField("body")).as("body at %d", p).isEqualTo(expected.getField("body"));
        assertThat(got.getField("bin")).as("bin at %d", p).isEqualTo(expected.getField("bin"));
        assertThat(got.getField("tags")).as("tags at %d", p).isEqualTo(expected.getField("tags"));
        assertThat(got.getField("point"))
            .as("point at %d", p)
            .isEqualTo(expected.getField("point"));
      }
      long bodyBytes = file.columnSizes().get(2) + file.columnSizes().get(3);
      RowsAtPositions.Read three = RowsAtPositions.read(
          table.io(),
          file,
          SCHEMA.select("body", "bin"),
          new TreeSet<>(List.of(10L, 15_000L, 29_000L)));
      assertThat(three.rows().get(15_000L).getField("body"))
          .isEqualTo(all.get(15_000).getField("body"));
      assertThat(three.bytesRead())
          .as("3 rows of a 30,000-row file, of %d bytes of body and bin", bodyBytes)
          .isLessThan(bodyBytes / 5);
    }
  }

  private static DataFile write(Table table, int rows, Random random) throws IOException {
    DataWriter<Record> writer = Parquet.writeData(
            table.io().newOutputFile(table.locationProvider().newDataLocation("d.parquet")))
        .schema(SCHEMA)
        .createWriterFunc(GenericParquetWriter::create)
        .withSpec(table.spec())
        .overwrite()
        .setAll(table.properties())
        .build();
    try (writer) {
      for (int i = 0; i < rows; i++) {
        Record r = GenericRecord.create(SCHEMA);
        r.setField("id", (long) i);
        r.setField("body", i % 17 == 0 ? null : text(random, 500 + random.nextInt(1_500)));
        byte[] bin = new byte[random.nextInt(600)];
        random.nextBytes(bin);
        r.setField("bin", ByteBuffer.wrap(bin));
        List<String> tags = new ArrayList<>();
        for (int t = random.nextInt(4); t > 0; t--) {
          tags.add(t == 2 ? null : "t" + random.nextInt(100));
        }
        r.setField("tags", i % 5 == 0 ? null : tags);
        Record point = GenericRecord.create(SCHEMA.findType("point").asStructType());
        point.setField("x", random.nextDouble());
        point.setField("y", i % 3 == 0 ? null : random.nextDouble());
        r.setField("point", point);
        writer.write(r);
      }
    }
    return writer.toDataFile();
  }

  private static List<Record> readAll(Table table, DataFile file) throws IOException {
    List<Record> out = new ArrayList<>();
    try (CloseableIterable<Record> rows = Parquet.read(table.io().newInputFile(file.location()))
        .project(SCHEMA)
        .createReaderFunc(s -> GenericParquetReaders.buildReader(SCHEMA, s))
        .build()) {
      rows.forEach(r -> out.add(r.copy()));
    }
    return out;
  }

  private static String text(Random random, int length) {
    char[] c = new char[length];
    for (int i = 0; i < length; i++) {
      c[i] = (char) ('a' + random.nextInt(26));
    }
    return new String(c);
  }
}
