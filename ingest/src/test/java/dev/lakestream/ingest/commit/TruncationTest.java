package dev.lakestream.ingest.commit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.common.iceberg.FileColumns;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.ingest.buffer.BatchWriter;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** A batch trimmed to a TRUNCATE that came after it. */
class TruncationTest {

  /**
   * A batch written before the table gained a column (another partition's change added it while
   * the batch waited for its commit) holds no value of that column, which is not a null: the
   * trimmed file keeps holding none, as compaction's rewrites do, rather than giving each row a null
   * that ingest would later take for a row's value (FileColumns).
   */
  @Test
  void aTrimmedFileHoldsNoValueOfAColumnTheTableGainedSinceItWasWritten() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", KeyFiles.ID_NAME).create();
      Schema written = SourcePositions.withPosition(table.schema());
      List<Record> rows = new ArrayList<>();
      List<Record> keys = new ArrayList<>();
      for (int id = 1; id <= 10; id++) {
        Record row = GenericRecord.create(written);
        row.setField("id", id);
        row.setField("name", "n" + id);
        row.setField(SourcePositions.NAME, position(id));
        rows.add(row);
        Record key = GenericRecord.create(table.schema().select("id"));
        key.setField("id", id);
        keys.add(key);
      }
      BatchWriter.Written files = BatchWriter.write(table, table.schema(), rows, keys, 0, 1);
      FilesWritten batch = new FilesWritten(
          "t.items",
          "dbserver1.t.items",
          0,
          0,
          9,
          10,
          10,
          10,
          0,
          files.dataFiles().stream().map(f -> DataFileJson.of(f, table.specs())).toList(),
          files.deleteFiles().stream()
              .map(f -> DeleteFileJson.of(f, table.specs()))
              .toList(),
          0,
          null,
          List.of(),
          SourcePositions.toHex(position(1)),
          SourcePositions.toHex(position(10)),
          null);
      table.updateSchema().addColumn("content", Types.StringType.get()).commit();

      Truncation.Trimmed trimmed = Truncation.trim(table, batch, position(6));
      assertThat(trimmed.dataFiles()).hasSize(1);
      DataFile kept = trimmed.dataFiles().get(0);
      assertThat(kept.recordCount()).as("the rows at or after the truncate").isEqualTo(5);
      assertThat(FileColumns.held(table.io(), kept, table.schema()))
          .as("the columns the trimmed file holds")
          .containsExactlyInAnyOrder(
              table.schema().findField("id").fieldId(),
              table.schema().findField("name").fieldId());
    }
  }

  private static ByteBuffer position(long p) {
    return SourcePositions.encode(new long[] {p});
  }
}
