package dev.lakestream.reader;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class SpilledBucketsTest {

  private static final Types.StructType POINT = Types.StructType.of(
      Types.NestedField.optional(20, "x", Types.DoubleType.get()),
      Types.NestedField.optional(21, "y", Types.DoubleType.get()));

  /** Every type the pipeline's tables hold, nulls included, and columns named like the spill's own. */
  private static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "weight", Types.StringType.get()),
      Types.NestedField.optional(3, "row", Types.IntegerType.get()),
      Types.NestedField.optional(4, "price", Types.DecimalType.of(38, 18)),
      Types.NestedField.optional(5, "ratio", Types.FloatType.get()),
      Types.NestedField.optional(6, "ok", Types.BooleanType.get()),
      Types.NestedField.optional(7, "born", Types.DateType.get()),
      Types.NestedField.optional(8, "at", Types.TimeType.get()),
      Types.NestedField.optional(9, "ts", Types.TimestampType.withoutZone()),
      Types.NestedField.optional(10, "tstz", Types.TimestampType.withZone()),
      Types.NestedField.optional(11, "uid", Types.UUIDType.get()),
      Types.NestedField.optional(12, "blob", Types.BinaryType.get()),
      Types.NestedField.optional(13, "tags", Types.ListType.ofOptional(14, Types.StringType.get())),
      Types.NestedField.optional(15, "where", POINT));

  @Test
  void rowsComeBackInTheirBucketsWithTheirValuesWeightsAndIdentities() throws Exception {
    List<Record> rows = new ArrayList<>();
    for (long i = 0; i < 50; i++) {
      rows.add(row(i));
    }
    GenericRecord empty = GenericRecord.create(SCHEMA);
    empty.set(0, 50L);
    rows.add(empty);

    List<List<SpilledBuckets.Entry>> back = new ArrayList<>();
    Path dir;
    try (SpilledBuckets spilled = new SpilledBuckets(SCHEMA, 3)) {
      for (int i = 0; i < rows.size(); i++) {
        spilled.add(
            i % 3, i % 2 == 0 ? 1 : -1, RowJson.of(SCHEMA.asStruct(), rows.get(i)), rows.get(i));
      }
      spilled.forEachBucket((b, entries) -> {
        assertThat(b).isEqualTo(back.size());
        List<SpilledBuckets.Entry> bucket = new ArrayList<>();
        entries.forEach(bucket::add);
        back.add(bucket);
      });
      assertThat(spilled.bytesWritten()).isPositive();
      dir = spilled.directory();
      assertThat(dir).isDirectory();
    }

    assertThat(back).hasSize(3);
    for (int b = 0; b < 3; b++) {
      List<SpilledBuckets.Entry> bucket = back.get(b);
      int i = b;
      for (SpilledBuckets.Entry e : bucket) {
        Record original = rows.get(i);
        assertThat(e.row()).as("row %s", i).isEqualTo(original);
        assertThat(e.weight()).isEqualTo(i % 2 == 0 ? 1 : -1);
        assertThat(e.identity())
            .isEqualTo(RowJson.of(SCHEMA.asStruct(), original))
            .isEqualTo(RowJson.of(SCHEMA.asStruct(), e.row()));
        i += 3;
      }
      assertThat(i - 3).as("the bucket's last row").isGreaterThanOrEqualTo(rows.size() - 3);
    }
    assertThat(dir).as("the spill directory, after close").doesNotExist();
  }

  private static Record row(long i) {
    GenericRecord r = GenericRecord.create(SCHEMA);
    r.set(0, i);
    r.set(1, "w" + i);
    r.set(2, (int) i);
    r.set(3, new BigDecimal("12345678901234567890.123456789012345678").add(BigDecimal.valueOf(i)));
    r.set(4, i == 7 ? Float.NaN : i * 0.5f);
    r.set(5, i % 2 == 0);
    r.set(6, LocalDate.of(1582, 10, 15).plusDays(i));
    r.set(7, LocalTime.of(23, 59, 59, 999_999_000).minusMinutes(i));
    r.set(8, LocalDateTime.of(2024, 3, 31, 2, 30).plusSeconds(i));
    r.set(
        9,
        OffsetDateTime.of(2024, 10, 27, 0, 30, 0, 250_000_000, ZoneOffset.UTC).plusHours(i));
    r.set(10, new UUID(i, -i));
    r.set(11, ByteBuffer.wrap(new byte[] {(byte) i, 0, (byte) 255}));
    r.set(12, i % 5 == 0 ? null : List.of("a" + i, "b"));
    GenericRecord point = GenericRecord.create(POINT);
    point.set(0, (double) i);
    point.set(1, -0.0);
    r.set(13, point);
    return r;
  }
}
