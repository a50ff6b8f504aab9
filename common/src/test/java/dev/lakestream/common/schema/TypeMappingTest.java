package dev.lakestream.common.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ConnectSchema;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Each Connect / Debezium type: the Iceberg type it maps to and the value a JSON value becomes. */
class TypeMappingTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  static Stream<Arguments> mappings() {
    return Stream.of(
        Arguments.of("int8", "{\"type\":\"int8\"}", "7", Types.IntegerType.get(), 7),
        Arguments.of("int16", "{\"type\":\"int16\"}", "-300", Types.IntegerType.get(), -300),
        Arguments.of("int32", "{\"type\":\"int32\"}", "2147483647", Types.IntegerType.get(), Integer.MAX_VALUE),
        Arguments.of("int64", "{\"type\":\"int64\"}", "9007199254740993", Types.LongType.get(), 9007199254740993L),
        Arguments.of("float32", "{\"type\":\"float32\"}", "1.5", Types.FloatType.get(), 1.5f),
        Arguments.of("float64", "{\"type\":\"float64\"}", "2.25", Types.DoubleType.get(), 2.25d),
        Arguments.of("float64 NaN", "{\"type\":\"float64\"}", "\"NaN\"", Types.DoubleType.get(), Double.NaN),
        Arguments.of("boolean", "{\"type\":\"boolean\"}", "true", Types.BooleanType.get(), true),
        Arguments.of("string", "{\"type\":\"string\"}", "\"héllo\"", Types.StringType.get(), "héllo"),
        Arguments.of("bytes", "{\"type\":\"bytes\"}", "\"AQID\"", Types.BinaryType.get(), ByteBuffer.wrap(new byte[] {1, 2, 3})),
        Arguments.of(
            "Decimal",
            "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"10\"}}",
            "\"MG8=\"",
            Types.DecimalType.of(10, 2),
            new BigDecimal("123.99")),
        Arguments.of(
            "negative Decimal",
            "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"10\"}}",
            "\"/w==\"",
            Types.DecimalType.of(10, 2),
            new BigDecimal("-0.01")),
        Arguments.of(
            "Decimal without precision",
            "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"0\"}}",
            "\"AQ==\"",
            Types.DecimalType.of(38, 0),
            new BigDecimal("1")),
        Arguments.of("Date", "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}", "19000", Types.DateType.get(), LocalDate.ofEpochDay(19000)),
        Arguments.of("Connect Date", "{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\"}", "1", Types.DateType.get(), LocalDate.of(1970, 1, 2)),
        Arguments.of("Time", "{\"type\":\"int32\",\"name\":\"io.debezium.time.Time\"}", "3723004", Types.TimeType.get(), LocalTime.of(1, 2, 3, 4_000_000)),
        Arguments.of("MicroTime", "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTime\"}", "3723000005", Types.TimeType.get(), LocalTime.of(1, 2, 3, 5_000)),
        Arguments.of("NanoTime", "{\"type\":\"int64\",\"name\":\"io.debezium.time.NanoTime\"}", "3723000005999", Types.TimeType.get(), LocalTime.of(1, 2, 3, 5_000)),
        Arguments.of(
            "Timestamp",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.Timestamp\"}",
            "1700000000123",
            Types.TimestampType.withoutZone(),
            LocalDateTime.of(2023, 11, 14, 22, 13, 20, 123_000_000)),
        Arguments.of(
            "MicroTimestamp",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\"}",
            "1700000000123456",
            Types.TimestampType.withoutZone(),
            LocalDateTime.of(2023, 11, 14, 22, 13, 20, 123_456_000)),
        Arguments.of(
            "MicroTimestamp before 1970",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\"}",
            "-1",
            Types.TimestampType.withoutZone(),
            LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_999_000)),
        Arguments.of(
            "NanoTimestamp",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.NanoTimestamp\"}",
            "1700000000123456789",
            Types.TimestampNanoType.withoutZone(),
            LocalDateTime.of(2023, 11, 14, 22, 13, 20, 123_456_789)),
        Arguments.of(
            "ZonedTimestamp",
            "{\"type\":\"string\",\"name\":\"io.debezium.time.ZonedTimestamp\"}",
            "\"2024-03-01T10:15:30.123456+02:00\"",
            Types.TimestampType.withZone(),
            OffsetDateTime.of(2024, 3, 1, 8, 15, 30, 123_456_000, ZoneOffset.UTC)),
        Arguments.of(
            "Uuid",
            "{\"type\":\"string\",\"name\":\"io.debezium.data.Uuid\"}",
            "\"6f1c8a9e-2c1b-4a8e-9a7e-2f0d6c1b9e11\"",
            Types.UUIDType.get(),
            UUID.fromString("6f1c8a9e-2c1b-4a8e-9a7e-2f0d6c1b9e11")),
        Arguments.of(
            "Json",
            "{\"type\":\"string\",\"name\":\"io.debezium.data.Json\"}",
            "\"{\\\"a\\\": [1, 2]}\"",
            Types.StringType.get(),
            "{\"a\": [1, 2]}"),
        Arguments.of(
            "array",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}",
            "[\"a\",\"b\"]",
            Types.ListType.ofOptional(1, Types.StringType.get()),
            List.of("a", "b")),
        Arguments.of(
            "map",
            "{\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"int32\"}}",
            "{\"x\":1}",
            Types.MapType.ofOptional(1, 2, Types.StringType.get(), Types.IntegerType.get()),
            Map.of("x", 1)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mappings")
  void mapsTypeAndConvertsValue(String name, String schemaJson, String valueJson, Type expectedType, Object expectedValue)
      throws Exception {
    ConnectSchema schema = ConnectSchema.parse(JSON.readTree(schemaJson));
    Type type = TypeMapping.toIceberg(schema, "c");
    assertThat(type.toString()).isEqualTo(expectedType.toString());
    Object value = RowConverter.value(JSON.readTree(valueJson), schema, type, "c");
    assertThat(value).isEqualTo(expectedValue);
  }

  @Test
  void mapsNestedStructsToIcebergStructs() throws Exception {
    ConnectSchema row =
        ConnectSchema.parse(
            JSON.readTree(
                "{\"type\":\"struct\",\"fields\":["
                    + "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},"
                    + "{\"type\":\"struct\",\"optional\":true,\"field\":\"address\",\"fields\":["
                    + "{\"type\":\"string\",\"optional\":true,\"field\":\"city\"},"
                    + "{\"type\":\"int32\",\"optional\":true,\"name\":\"io.debezium.time.Date\",\"field\":\"since\"}]}]}"));
    Types.StructType type = TypeMapping.rowType(row, List.of("id"));
    assertThat(type.field("id").isRequired()).isTrue();
    Types.StructType address = type.field("address").type().asStructType();
    assertThat(address.field("city").type()).isEqualTo(Types.StringType.get());
    assertThat(address.field("since").type()).isEqualTo(Types.DateType.get());

    JsonNode value = JSON.readTree("{\"id\":5,\"address\":{\"city\":\"Oslo\",\"since\":1}}");
    GenericRecord record = RowConverter.toRecord(value, row, type);
    assertThat(record.getField("id")).isEqualTo(5L);
    GenericRecord nested = (GenericRecord) record.getField("address");
    assertThat(nested.getField("city")).isEqualTo("Oslo");
    assertThat(nested.getField("since")).isEqualTo(LocalDate.of(1970, 1, 2));
  }

  @Test
  void rejectsVariableScaleDecimalNamingTheColumnAndTheFix() throws Exception {
    ConnectSchema schema =
        ConnectSchema.parse(
            JSON.readTree(
                "{\"type\":\"struct\",\"name\":\"io.debezium.data.VariableScaleDecimal\",\"fields\":["
                    + "{\"type\":\"int32\",\"field\":\"scale\"},{\"type\":\"bytes\",\"field\":\"value\"}]}"));
    assertThatThrownBy(() -> TypeMapping.toIceberg(schema, "amount"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("\"amount\"")
        .hasMessageContaining("decimal.handling.mode");
  }

  @Test
  void rejectsDecimalBeyondIcebergPrecision() throws Exception {
    ConnectSchema schema =
        ConnectSchema.parse(
            JSON.readTree(
                "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\","
                    + "\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"50\"}}"));
    assertThatThrownBy(() -> TypeMapping.toIceberg(schema, "big"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("decimal(50,2)");
  }

  @Test
  void rejectsStructWithoutFields() throws Exception {
    ConnectSchema schema = ConnectSchema.parse(JSON.readTree("{\"type\":\"struct\",\"fields\":[]}"));
    assertThatThrownBy(() -> TypeMapping.toIceberg(schema, "empty"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("without fields");
  }

  @Test
  void rejectsValueThatDoesNotFitItsColumn() throws Exception {
    ConnectSchema schema = ConnectSchema.parse(JSON.readTree("{\"type\":\"int32\"}"));
    assertThatThrownBy(() -> RowConverter.value(JSON.readTree("\"abc\""), schema, Types.IntegerType.get(), "qty"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("column \"qty\"");
  }

  @Test
  void infersTypesFromJsonWithoutSchema() throws Exception {
    JsonNode row = JSON.readTree("{\"id\":1,\"name\":\"a\",\"score\":1.5,\"ok\":true,\"gone\":null,\"tags\":[\"x\"],\"addr\":{\"zip\":123}}");
    Types.StructType type = TypeMapping.inferRowType(row, List.of("id"));
    assertThat(type.field("id").type()).isEqualTo(Types.LongType.get());
    assertThat(type.field("id").isRequired()).isTrue();
    assertThat(type.field("name").type()).isEqualTo(Types.StringType.get());
    assertThat(type.field("score").type()).isEqualTo(Types.DoubleType.get());
    assertThat(type.field("ok").type()).isEqualTo(Types.BooleanType.get());
    assertThat(type.field("gone")).isNull();
    assertThat(type.field("tags").type().isListType()).isTrue();
    assertThat(type.field("addr").type().asStructType().field("zip").type()).isEqualTo(Types.LongType.get());
    GenericRecord record = RowConverter.toRecord(row, null, type);
    assertThat(record.getField("score")).isEqualTo(1.5d);
    assertThat(new String(((String) record.getField("name")).getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)).isEqualTo("a");
  }
}
