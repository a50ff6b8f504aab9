package dev.lakestream.common.schema;

import com.fasterxml.jackson.databind.JsonNode;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ConnectSchema;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Converts a row of Debezium JSON into an Iceberg generic {@link GenericRecord} of a table's type.
 *
 * <p>The target Iceberg type decides the Java value; the Connect schema, when the converter embeds
 * one, says how the JSON encodes it (epoch days, milliseconds, micro- or nanoseconds, base64
 * unscaled decimals). Without schemas, temporal values are read from ISO-8601 text. Columns of the
 * table that the row lacks are null. A value that does not fit its column throws {@link
 * BadChangeException} naming the column. Stateless and thread-safe.
 */
public final class RowConverter {

  private RowConverter() {}

  public static GenericRecord toRecord(JsonNode row, ConnectSchema rowSchema, Types.StructType type) {
    return struct(row, rowSchema, type, "");
  }

  private static GenericRecord struct(JsonNode row, ConnectSchema schema, Types.StructType type, String path) {
    GenericRecord record = GenericRecord.create(type);
    List<Types.NestedField> fields = type.fields();
    for (int i = 0; i < fields.size(); i++) {
      Types.NestedField field = fields.get(i);
      JsonNode value = row.get(field.name());
      ConnectSchema.Field connectField = schema == null ? null : schema.field(field.name());
      String column = path.isEmpty() ? field.name() : path + "." + field.name();
      Object converted =
          value(value, connectField == null ? null : connectField.schema(), field.type(), column);
      if (converted == null && field.isRequired()) {
        throw new BadChangeException("required column \"" + column + "\" is null or missing");
      }
      record.set(i, converted);
    }
    return record;
  }

  static Object value(JsonNode v, ConnectSchema s, Type type, String column) {
    if (v == null || v.isNull()) {
      return null;
    }
    String logical = s == null ? null : s.name();
    try {
      switch (type.typeId()) {
        case BOOLEAN:
          if (v.isBoolean()) {
            return v.booleanValue();
          }
          if (v.isTextual() && ("true".equals(v.asText()) || "false".equals(v.asText()))) {
            return Boolean.parseBoolean(v.asText());
          }
          throw mismatch(column, type, v);
        case INTEGER:
          if (v.isIntegralNumber() && v.canConvertToInt()) {
            return v.intValue();
          }
          throw mismatch(column, type, v);
        case LONG:
          if (v.isIntegralNumber() && v.canConvertToLong()) {
            return v.longValue();
          }
          throw mismatch(column, type, v);
        case FLOAT:
          if (v.isNumber()) {
            return v.floatValue();
          }
          return (float) specialFloatingPoint(v, column, type);
        case DOUBLE:
          if (v.isNumber()) {
            return v.doubleValue();
          }
          return specialFloatingPoint(v, column, type);
        case DECIMAL:
          return decimal(v, s, (Types.DecimalType) type, column);
        case STRING:
          if (v.isTextual()) {
            return v.textValue();
          }
          return v.toString();
        case UUID:
          return UUID.fromString(v.asText());
        case BINARY:
          return ByteBuffer.wrap(v.binaryValue());
        case FIXED:
          return v.binaryValue();
        case DATE:
          if (v.isIntegralNumber()) {
            return LocalDate.ofEpochDay(v.longValue());
          }
          return LocalDate.parse(v.asText());
        case TIME:
          return time(v, logical, column, type);
        case TIMESTAMP:
          return timestamp(v, logical, ((Types.TimestampType) type).shouldAdjustToUTC(), column, type);
        case TIMESTAMP_NANO:
          return timestamp(v, logical, ((Types.TimestampNanoType) type).shouldAdjustToUTC(), column, type);
        case STRUCT:
          if (!v.isObject()) {
            throw mismatch(column, type, v);
          }
          return struct(v, s, type.asStructType(), column);
        case LIST:
          {
            if (!v.isArray()) {
              throw mismatch(column, type, v);
            }
            Types.ListType list = type.asListType();
            List<Object> out = new ArrayList<>(v.size());
            for (JsonNode element : v) {
              out.add(value(element, s == null ? null : s.items(), list.elementType(), column + ".element"));
            }
            return out;
          }
        case MAP:
          return map(v, s, type.asMapType(), column);
        default:
          throw new BadChangeException(
              "column \"" + column + "\" has Iceberg type " + type + ", which ingest cannot write");
      }
    } catch (IOException | IllegalArgumentException | DateTimeParseException | ArithmeticException e) {
      if (e instanceof BadChangeException) {
        throw (BadChangeException) e;
      }
      throw new BadChangeException(
          "column \"" + column + "\": value " + abbreviate(v) + " is not a valid " + type + " (" + e.getMessage() + ")",
          e);
    }
  }

  private static double specialFloatingPoint(JsonNode v, String column, Type type) {
    // Connect's JsonConverter writes NaN and infinities as text.
    switch (v.asText()) {
      case "NaN":
        return Double.NaN;
      case "Infinity":
        return Double.POSITIVE_INFINITY;
      case "-Infinity":
        return Double.NEGATIVE_INFINITY;
      default:
        throw mismatch(column, type, v);
    }
  }

  private static BigDecimal decimal(JsonNode v, ConnectSchema s, Types.DecimalType type, String column)
      throws IOException {
    BigDecimal value;
    if (s != null && TypeMapping.DECIMAL.equals(s.name())) {
      int scale = Integer.parseInt(s.parameters().getOrDefault("scale", "0"));
      if (v.isNumber()) {
        // decimal.format=NUMERIC in the JsonConverter
        value = v.decimalValue();
      } else {
        value = new BigDecimal(new BigInteger(v.binaryValue()), scale);
      }
    } else if (v.isNumber()) {
      value = v.decimalValue();
    } else {
      value = new BigDecimal(v.asText());
    }
    BigDecimal scaled = value.setScale(type.scale(), RoundingMode.UNNECESSARY);
    if (scaled.precision() > type.precision()) {
      throw new BadChangeException(
          "column \"" + column + "\": " + value.toPlainString() + " does not fit " + type);
    }
    return scaled;
  }

  private static LocalTime time(JsonNode v, String logical, String column, Type type) {
    if (v.isTextual()) {
      return LocalTime.parse(v.textValue());
    }
    if (!v.isIntegralNumber()) {
      throw mismatch(column, type, v);
    }
    long n = v.longValue();
    long nanos;
    if (TypeMapping.TIME.equals(logical) || TypeMapping.CONNECT_TIME.equals(logical)) {
      nanos = n * 1_000_000L;
    } else if (TypeMapping.NANO_TIME.equals(logical)) {
      nanos = n - n % 1_000L;
    } else {
      nanos = n * 1_000L;
    }
    return LocalTime.ofNanoOfDay(nanos);
  }

  private static Object timestamp(JsonNode v, String logical, boolean withZone, String column, Type type) {
    Instant instant;
    if (v.isTextual()) {
      String text = v.textValue();
      if (withZone || text.endsWith("Z") || text.matches(".*[+-]\\d\\d:?\\d\\d$")) {
        OffsetDateTime parsed = OffsetDateTime.parse(text);
        if (!withZone) {
          return parsed.withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime();
        }
        return parsed.withOffsetSameInstant(ZoneOffset.UTC);
      }
      LocalDateTime local = LocalDateTime.parse(text);
      return withZone ? local.atOffset(ZoneOffset.UTC) : local;
    }
    if (!v.isIntegralNumber()) {
      throw mismatch(column, type, v);
    }
    long n = v.longValue();
    if (TypeMapping.TIMESTAMP.equals(logical) || TypeMapping.CONNECT_TIMESTAMP.equals(logical)) {
      instant = Instant.ofEpochMilli(n);
    } else if (TypeMapping.NANO_TIMESTAMP.equals(logical)) {
      instant = Instant.ofEpochSecond(Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
    } else {
      instant = Instant.ofEpochSecond(Math.floorDiv(n, 1_000_000L), Math.floorMod(n, 1_000_000L) * 1_000L);
    }
    OffsetDateTime utc = instant.atOffset(ZoneOffset.UTC);
    return withZone ? utc : utc.toLocalDateTime();
  }

  private static Map<Object, Object> map(JsonNode v, ConnectSchema s, Types.MapType type, String column) {
    Map<Object, Object> out = new LinkedHashMap<>();
    if (v.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        Object key = value(com.fasterxml.jackson.databind.node.TextNode.valueOf(e.getKey()),
            s == null ? null : s.keys(), type.keyType(), column + ".key");
        out.put(key, value(e.getValue(), s == null ? null : s.values(), type.valueType(), column + ".value"));
      }
      return out;
    }
    if (v.isArray()) {
      // Connect encodes maps with non-string keys as an array of [key, value] pairs.
      for (JsonNode pair : v) {
        out.put(
            value(pair.get(0), s == null ? null : s.keys(), type.keyType(), column + ".key"),
            value(pair.get(1), s == null ? null : s.values(), type.valueType(), column + ".value"));
      }
      return out;
    }
    throw mismatch(column, type, v);
  }

  private static BadChangeException mismatch(String column, Type type, JsonNode v) {
    return new BadChangeException(
        "column \"" + column + "\": value " + abbreviate(v) + " is not a valid " + type);
  }

  private static String abbreviate(JsonNode node) {
    String text = String.valueOf(node);
    return text.length() > 80 ? text.substring(0, 80) + "..." : text;
  }
}
