package dev.lakestream.sync.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * A key read from a data file (java.time values) and the same key read from an equality-delete
 * file (Iceberg's internal form, as its delete loader gives it) encode to the same bytes, for every
 * date and time type a key column can have.
 */
class KeyCodecTest {

  @Test
  void aDataFileKeyAndItsDeleteKeyEncodeAlikeForEveryDateAndTimeType() {
    LocalDateTime at = LocalDateTime.of(2026, 3, 29, 1, 30, 15, 123_456_789);
    List<Object[]> kinds = List.of(
        new Object[] {Types.DateType.get(), LocalDate.of(2024, 2, 29)},
        new Object[] {Types.TimeType.get(), LocalTime.of(23, 59, 59, 999_999_000)},
        new Object[] {Types.TimestampType.withoutZone(), at.withNano(123_456_000)},
        new Object[] {
          Types.TimestampType.withZone(), at.withNano(123_456_000).atOffset(ZoneOffset.UTC)
        },
        new Object[] {Types.TimestampNanoType.withoutZone(), at},
        new Object[] {Types.TimestampNanoType.withZone(), OffsetDateTime.of(at, ZoneOffset.UTC)});
    for (Object[] kind : kinds) {
      Schema key = new Schema(
          List.of(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.required(2, "k", (Type) kind[0])),
          Set.of(1, 2));
      Record row = GenericRecord.create(key);
      row.setField("id", 7L);
      row.setField("k", kind[1]);
      KeyCodec codec = new KeyCodec(key);

      byte[] fromData = codec.bytes(row);
      byte[] fromDeletes = codec.bytes(new InternalRecordWrapper(key.asStruct()).wrap(row));

      assertThat(fromData).as("a key of %s", kind[0]).isEqualTo(fromDeletes);
    }
  }
}
