package dev.lakestream.common.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ConnectSchema;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Base64;
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
  private static final String VSD =
      "{\"type\":\"struct\",\"name\":\"io.debezium.data.VariableScaleDecimal\",\"fields\":["
          + "{\"type\":\"int32\",\"field\":\"scale\"},{\"type\":\"bytes\",\"field\":\"value\"}]}";

  static Stream<Arguments> mappings() {
    return Stream.of(
        Arguments.of("int8", "{\"type\":\"int8\"}", "7", Types.IntegerType.get(), 7),
        Arguments.of("int16", "{\"type\":\"int16\"}", "-300", Types.IntegerType.get(), -300),
        Arguments.of(
            "int32",
            "{\"type\":\"int32\"}",
            "2147483647",
            Types.IntegerType.get(),
            Integer.MAX_VALUE),
        Arguments.of(
            "int64",
            "{\"type\":\"int64\"}",
            "9007199254740993",
            Types.LongType.get(),
            9007199254740993L),
        // The names Connect's JsonConverter writes for FLOAT32 and FLOAT64 (PostgreSQL real, double
        // precision).
        Arguments.of("float", "{\"type\":\"float\"}", "1.5", Types.FloatType.get(), 1.5f),
        Arguments.of(
            "float NaN", "{\"type\":\"float\"}", "\"NaN\"", Types.FloatType.get(), Float.NaN),
        Arguments.of("float -0.0", "{\"type\":\"float\"}", "-0.0", Types.FloatType.get(), -0.0f),
        Arguments.of("double", "{\"type\":\"double\"}", "2.25", Types.DoubleType.get(), 2.25d),
        Arguments.of(
            "double NaN", "{\"type\":\"double\"}", "\"NaN\"", Types.DoubleType.get(), Double.NaN),
        Arguments.of(
            "double -Infinity",
            "{\"type\":\"double\"}",
            "\"-Infinity\"",
            Types.DoubleType.get(),
            Double.NEGATIVE_INFINITY),
        Arguments.of("boolean", "{\"type\":\"boolean\"}", "true", Types.BooleanType.get(), true),
        Arguments.of(
            "string", "{\"type\":\"string\"}", "\"héllo\"", Types.StringType.get(), "héllo"),
        Arguments.of(
            "bytes",
            "{\"type\":\"bytes\"}",
            "\"AQID\"",
            Types.BinaryType.get(),
            ByteBuffer.wrap(new byte[] {1, 2, 3})),
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
        Arguments.of(
            "Date",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "19000",
            Types.DateType.get(),
            LocalDate.ofEpochDay(19000)),
        Arguments.of(
            "Date 4713 BC",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-2440550",
            Types.DateType.get(),
            LocalDate.of(-4712, 1, 1)),
        Arguments.of(
            "Date 5874897 AD",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "2145042905",
            Types.DateType.get(),
            LocalDate.of(5874897, 12, 31)),
        // PostgreSQL's 'infinity' dates as Debezium 3.6 emits them: kept as the dates of Debezium's
        // own timestamp sentinels for infinity.
        Arguments.of(
            "Date infinity",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-2147472692",
            Types.DateType.get(),
            LocalDate.of(294247, 1, 10)),
        Arguments.of(
            "Date -infinity",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-2147472691",
            Types.DateType.get(),
            LocalDate.of(-290308, 12, 21)),
        Arguments.of(
            "Date infinity read through JDBC (a snapshot, an array), UTC worker",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-622191234",
            Types.DateType.get(),
            LocalDate.of(294247, 1, 10)),
        Arguments.of(
            "Date infinity read through JDBC, a worker east of UTC",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-622191233",
            Types.DateType.get(),
            LocalDate.of(294247, 1, 10)),
        Arguments.of(
            "Date -infinity read through JDBC, UTC worker",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-625821272",
            Types.DateType.get(),
            LocalDate.of(-290308, 12, 21)),
        Arguments.of(
            "Date -infinity read through JDBC, a worker east of UTC",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-625821271",
            Types.DateType.get(),
            LocalDate.of(-290308, 12, 21)),
        Arguments.of(
            "Connect Date",
            "{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\"}",
            "1",
            Types.DateType.get(),
            LocalDate.of(1970, 1, 2)),
        Arguments.of(
            "Time",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Time\"}",
            "3723004",
            Types.TimeType.get(),
            LocalTime.of(1, 2, 3, 4_000_000)),
        Arguments.of(
            "MicroTime",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTime\"}",
            "3723000005",
            Types.TimeType.get(),
            LocalTime.of(1, 2, 3, 5_000)),
        Arguments.of(
            "NanoTime",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.NanoTime\"}",
            "3723000005000",
            Types.TimeType.get(),
            LocalTime.of(1, 2, 3, 5_000)),
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
            "MicroTimestamp infinity (Debezium's sentinel, kept)",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\"}",
            "9223372036825200000",
            Types.TimestampType.withoutZone(),
            LocalDateTime.of(294247, 1, 10, 4, 0, 25, 200_000_000)),
        Arguments.of(
            "MicroTimestamp -infinity (Debezium's sentinel, kept)",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\"}",
            "-9223372036832400000",
            Types.TimestampType.withoutZone(),
            LocalDateTime.of(-290308, 12, 21, 19, 59, 27, 600_000_000)),
        Arguments.of(
            "Timestamp (ms) infinity",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.Timestamp\"}",
            "9223372036825200",
            Types.TimestampType.withoutZone(),
            LocalDateTime.of(294247, 1, 10, 4, 0, 25, 200_000_000)),
        Arguments.of(
            "ZonedTimestamp infinity as the timestamp sentinel",
            "{\"type\":\"string\",\"name\":\"io.debezium.time.ZonedTimestamp\"}",
            "\"infinity\"",
            Types.TimestampType.withZone(),
            OffsetDateTime.of(294247, 1, 10, 4, 0, 25, 200_000_000, ZoneOffset.UTC)),
        Arguments.of(
            "ZonedTimestamp -infinity as the timestamp sentinel",
            "{\"type\":\"string\",\"name\":\"io.debezium.time.ZonedTimestamp\"}",
            "\"-infinity\"",
            Types.TimestampType.withZone(),
            OffsetDateTime.of(-290308, 12, 21, 19, 59, 27, 600_000_000, ZoneOffset.UTC)),
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
            "VariableScaleDecimal (unconstrained NUMERIC) as decimal(38,18)",
            VSD,
            "{\"scale\":3,\"value\":\"AeJA\"}",
            Types.DecimalType.of(38, 18),
            new BigDecimal("123.456").setScale(18)),
        Arguments.of(
            "VariableScaleDecimal negative",
            VSD,
            "{\"scale\":18,\"value\":\"/w==\"}",
            Types.DecimalType.of(38, 18),
            new BigDecimal("-0.000000000000000001")),
        Arguments.of(
            "Decimal of a wider source precision keeps its scale",
            "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"50\"}}",
            "\"MG8=\"",
            Types.DecimalType.of(38, 2),
            new BigDecimal("123.99")),
        Arguments.of(
            "money (Decimal without precision)",
            "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}}",
            "\"gAAAAAAAAAA=\"",
            Types.DecimalType.of(38, 2),
            new BigDecimal("-92233720368547758.08")),
        Arguments.of(
            "Bits of bit(4) keep their leading zeros",
            "{\"type\":\"bytes\",\"name\":\"io.debezium.data.Bits\",\"parameters\":{\"length\":\"4\"}}",
            "\"Aw==\"",
            Types.StringType.get(),
            "0011"),
        Arguments.of(
            "Bits of varbit, little-endian bytes",
            "{\"type\":\"bytes\",\"name\":\"io.debezium.data.Bits\",\"parameters\":{\"length\":\"2147483647\"}}",
            "\"uwU=\"",
            Types.StringType.get(),
            "10110111011"),
        Arguments.of(
            "empty varbit",
            "{\"type\":\"bytes\",\"name\":\"io.debezium.data.Bits\",\"parameters\":{\"length\":\"2147483647\"}}",
            "\"\"",
            Types.StringType.get(),
            ""),
        Arguments.of(
            "ZonedTime (timetz) as text",
            "{\"type\":\"string\",\"name\":\"io.debezium.time.ZonedTime\"}",
            "\"10:00:00Z\"",
            Types.StringType.get(),
            "10:00:00Z"),
        Arguments.of(
            "Interval (interval.handling.mode=string) as ISO-8601 text",
            "{\"type\":\"string\",\"name\":\"io.debezium.time.Interval\"}",
            "\"P1Y2M3DT4H5M6.789S\"",
            Types.StringType.get(),
            "P1Y2M3DT4H5M6.789S"),
        Arguments.of(
            "MicroDuration (interval.handling.mode=numeric) as microseconds",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroDuration\"}",
            "-36543293211000",
            Types.LongType.get(),
            -36543293211000L),
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
            "array of texts that look like a Java array's name but are not one",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}",
            "[\"[Ljava.lang.String;\",\"[I@\",\"[Ljava.lang.String;@xyz\",\"x[I@1f\",\"[Q@1f\"]",
            Types.ListType.ofOptional(1, Types.StringType.get()),
            List.of("[Ljava.lang.String;", "[I@", "[Ljava.lang.String;@xyz", "x[I@1f", "[Q@1f")),
        Arguments.of(
            "array of what String.valueOf(byte[]) gives (no JDBC array is one of primitives)",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true}}",
            "[\"[B@6d06d69c\",\"[I@4554617c\"]",
            Types.ListType.ofOptional(1, Types.StringType.get()),
            List.of("[B@6d06d69c", "[I@4554617c")),
        Arguments.of(
            "array holding a Java array's name beside another value (a one-dimensional array)",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true}}",
            "[\"[Ljava.lang.String;@74c810e2\",\"text\"]",
            Types.ListType.ofOptional(1, Types.StringType.get()),
            List.of("[Ljava.lang.String;@74c810e2", "text")),
        Arguments.of(
            "map",
            "{\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"int32\"}}",
            "{\"x\":1}",
            Types.MapType.ofOptional(1, 2, Types.StringType.get(), Types.IntegerType.get()),
            Map.of("x", 1)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mappings")
  void mapsTypeAndConvertsValue(
      String name, String schemaJson, String valueJson, Type expectedType, Object expectedValue)
      throws Exception {
    ConnectSchema schema = ConnectSchema.parse(JSON.readTree(schemaJson));
    Type type = TypeMapping.toIceberg(schema, "c");
    assertThat(type.toString()).isEqualTo(expectedType.toString());
    Object value = RowConverter.value(JSON.readTree(valueJson), schema, type, "c");
    assertThat(value).isEqualTo(expectedValue);
  }

  @Test
  void mapsNestedStructsToIcebergStructs() throws Exception {
    ConnectSchema row = ConnectSchema.parse(
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
  void rejectsDecimalScaleBeyondIcebergsNamingTheFix() throws Exception {
    ConnectSchema schema = ConnectSchema.parse(
        JSON.readTree("{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\","
            + "\"parameters\":{\"scale\":\"40\",\"connect.decimal.precision\":\"50\"}}"));
    assertThatThrownBy(() -> TypeMapping.toIceberg(schema, "big"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("decimal(50,40)")
        .hasMessageContaining("decimal.handling.mode");
  }

  static Stream<Arguments> valuesIcebergCannotHold() {
    return Stream.of(
        Arguments.of(
            "time 24:00:00 (MicroTime)",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTime\"}",
            "86400000000",
            "24:00:00"),
        Arguments.of(
            "time 24:00:00 (Time)",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Time\"}",
            "86400000",
            "24:00:00"),
        Arguments.of(
            "a nanosecond time",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.NanoTime\"}",
            "3723000005001",
            "below a microsecond"),
        Arguments.of(
            "a timestamp after year 294247 (Debezium's overflow)",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\"}",
            "-9223372036853775810",
            "overflowed"),
        Arguments.of(
            "a millisecond timestamp after year 294247",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.Timestamp\"}",
            "9224318015999999",
            "is not a valid"),
        Arguments.of(
            "a timestamptz after year 294247",
            "{\"type\":\"string\",\"name\":\"io.debezium.time.ZonedTimestamp\"}",
            "\"+294276-12-31T23:59:59.999999Z\"",
            "is not a valid"),
        Arguments.of(
            "a date overflowed by the connector",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-2147483000",
            "outside every source's date range"),
        Arguments.of(
            "a date next to the JDBC infinity values",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-622191235",
            "outside every source's date range"),
        Arguments.of(
            "a date next to the JDBC -infinity values",
            "{\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}",
            "-625821270",
            "outside every source's date range"),
        Arguments.of(
            "a whole-second timestamp after year 294247 (Debezium's count stops at the largest long)",
            "{\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\"}",
            "9223372036854775807",
            "overflowed"),
        Arguments.of(
            "a NUMERIC with more than 18 decimals",
            VSD,
            "{\"scale\":30,\"value\":\"AQ==\"}",
            "0.000000000000000000000000000001 has more than 18 digits after the point"),
        Arguments.of(
            "a NUMERIC with more than 20 integer digits",
            VSD,
            "{\"scale\":0,\"value\":\""
                + Base64.getEncoder()
                    .encodeToString(new BigInteger("123456789012345678901").toByteArray())
                + "\"}",
            "123456789012345678901 does not fit decimal(38, 18)"),
        Arguments.of(
            "a text[] of two dimensions, as Debezium sends it",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true}}",
            "[\"[Ljava.lang.String;@74c810e2\",\"[Ljava.lang.String;@39445ae0\"]",
            "element \"[Ljava.lang.String;@74c810e2\" is the name of a Java array"),
        Arguments.of(
            "an array of three dimensions, as Debezium sends it",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true}}",
            "[\"[[Ljava.lang.String;@1b6d3586\"]",
            "has more than one dimension"),
        Arguments.of(
            "a uuid[] of two dimensions, as Debezium sends it",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true,"
                + "\"name\":\"io.debezium.data.Uuid\"}}",
            "[\"[Ljava.util.UUID;@3dd4b701\"]",
            "is the name of a Java array"),
        Arguments.of(
            "a numeric(50,2) value of 40 digits",
            "{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\",\"connect.decimal.precision\":\"50\"}}",
            "\"" + Base64.getEncoder().encodeToString(new BigInteger("1".repeat(40)).toByteArray())
                + "\"",
            "does not fit decimal(38, 2)"));
  }

  /** Each value is refused with the column and the value named: never silently changed, never a crash. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("valuesIcebergCannotHold")
  void refusesValueIcebergCannotHoldNamingColumnAndValue(
      String name, String schemaJson, String valueJson, String reason) throws Exception {
    ConnectSchema schema = ConnectSchema.parse(JSON.readTree(schemaJson));
    Type type = TypeMapping.toIceberg(schema, "c");
    assertThatThrownBy(() -> RowConverter.value(JSON.readTree(valueJson), schema, type, "c"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("column \"c\"")
        .hasMessageContaining(reason);
  }

  @Test
  void rejectsStructWithoutFields() throws Exception {
    ConnectSchema schema =
        ConnectSchema.parse(JSON.readTree("{\"type\":\"struct\",\"fields\":[]}"));
    assertThatThrownBy(() -> TypeMapping.toIceberg(schema, "empty"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("without fields");
  }

  @Test
  void rejectsValueThatDoesNotFitItsColumn() throws Exception {
    ConnectSchema schema = ConnectSchema.parse(JSON.readTree("{\"type\":\"int32\"}"));
    assertThatThrownBy(() ->
            RowConverter.value(JSON.readTree("\"abc\""), schema, Types.IntegerType.get(), "qty"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("column \"qty\"");
  }

  @Test
  void infersTypesFromJsonWithoutSchema() throws Exception {
    JsonNode row = JSON.readTree(
        "{\"id\":1,\"name\":\"a\",\"score\":1.5,\"ok\":true,\"gone\":null,\"tags\":[\"x\"],\"addr\":{\"zip\":123}}");
    Types.StructType type = TypeMapping.inferRowType(row, List.of("id"));
    assertThat(type.field("id").type()).isEqualTo(Types.LongType.get());
    assertThat(type.field("id").isRequired()).isTrue();
    assertThat(type.field("name").type()).isEqualTo(Types.StringType.get());
    assertThat(type.field("score").type()).isEqualTo(Types.DoubleType.get());
    assertThat(type.field("ok").type()).isEqualTo(Types.BooleanType.get());
    assertThat(type.field("gone")).isNull();
    assertThat(type.field("tags").type().isListType()).isTrue();
    assertThat(type.field("addr").type().asStructType().field("zip").type())
        .isEqualTo(Types.LongType.get());
    GenericRecord record = RowConverter.toRecord(row, null, type);
    assertThat(record.getField("score")).isEqualTo(1.5d);
    assertThat(new String(
            ((String) record.getField("name")).getBytes(StandardCharsets.UTF_8),
            StandardCharsets.UTF_8))
        .isEqualTo("a");
  }
}
