package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Key bounds are compared in the order their writer computed them: Parquet's, unsigned bytes for UUIDs. */
class KeyBoundsTest {

  private static final Schema SCHEMA =
      new Schema(Types.NestedField.required(1, "id", Types.UUIDType.get()));

  @Test
  void aUuidBetweenParquetsUnsignedBoundsIsInTheFileThoughJavaOrdersItOutside() {
    UUID low = UUID.fromString("10000000-0000-0000-0000-000000000000");
    UUID high =
        UUID.fromString("f0000000-0000-0000-0000-000000000000"); // negative as Java's signed long
    UUID inside = UUID.fromString("20000000-0000-0000-0000-000000000000");
    assertThat(inside.compareTo(high))
        .as("Java's order puts it below the upper bound...")
        .isGreaterThan(0);
    DataFile file = file(low, high);
    GenericRecord key = GenericRecord.create(SCHEMA.asStruct());
    key.setField("id", inside);
    assertThat(KeyBounds.mayContain(
            file, SCHEMA.asStruct(), new InternalRecordWrapper(SCHEMA.asStruct()).wrap(key)))
        .as("...but Parquet's bounds hold it")
        .isTrue();
    key.setField("id", UUID.fromString("f1000000-0000-0000-0000-000000000000"));
    assertThat(KeyBounds.mayContain(
            file, SCHEMA.asStruct(), new InternalRecordWrapper(SCHEMA.asStruct()).wrap(key)))
        .isFalse();
  }

  @Test
  void deletesBetweenUnsignedUuidBoundsOverlapTheFile() {
    DataFile data = file(
        UUID.fromString("10000000-0000-0000-0000-000000000000"),
        UUID.fromString("f0000000-0000-0000-0000-000000000000"));
    DataFile deletes = file(
        UUID.fromString("80000000-0000-0000-0000-000000000000"),
        UUID.fromString("80000000-0000-0000-0000-000000000001"));
    assertThat(KeyBounds.comparator(Types.UUIDType.get())
            .compare(
                UUID.fromString("80000000-0000-0000-0000-000000000000"),
                UUID.fromString("7fffffff-0000-0000-0000-000000000000")))
        .isPositive();
    assertThat(KeyBounds.mayContain(
            data, SCHEMA.asStruct(), wrap(UUID.fromString("80000000-0000-0000-0000-000000000000"))))
        .isTrue();
    assertThat(deletes.lowerBounds()).isNotEmpty();
  }

  private static InternalRecordWrapper wrap(UUID id) {
    GenericRecord key = GenericRecord.create(SCHEMA.asStruct());
    key.setField("id", id);
    return new InternalRecordWrapper(SCHEMA.asStruct()).wrap(key);
  }

  private static DataFile file(UUID lower, UUID upper) {
    Map<Integer, ByteBuffer> lowers =
        Map.of(1, Conversions.toByteBuffer(Types.UUIDType.get(), lower));
    Map<Integer, ByteBuffer> uppers =
        Map.of(1, Conversions.toByteBuffer(Types.UUIDType.get(), upper));
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath("/tmp/x-" + lower + ".parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(100)
        .withMetrics(new Metrics(10L, null, null, null, null, lowers, uppers))
        .build();
  }
}
