package dev.lakestream.common.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ConnectSchema;
import dev.lakestream.common.debezium.RowImage;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
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

  /** Debezium's values for PostgreSQL's 'infinity' and '-infinity' timestamps (microseconds). */
  static final long TIMESTAMP_INFINITY_MICROS = 9_223_372_036_825_200_000L;

  static final long TIMESTAMP_MINUS_INFINITY_MICROS = -9_223_372_036_832_400_000L;
  /**
   * What Debezium 3.6 emits for PostgreSQL's 'infinity' and '-infinity' dates: the server's
   * INT_MAX and INT_MIN days, shifted to 1970 in 32-bit arithmetic. Stored as the dates of the
   * timestamp sentinels above.
   */
  static final long DEBEZIUM_DATE_INFINITY = -2_147_472_692L;

  static final long DEBEZIUM_DATE_MINUS_INFINITY = -2_147_472_691L;

  /**
   * What Debezium 3.6 emits for PostgreSQL's 'infinity' dates it reads through JDBC (a snapshot's
   * rows, and every element of a {@code date[]}): pgjdbc's infinity instant as a date in the Connect
   * worker's time zone, its epoch day cut to 32 bits. One of two values, by the zone.
   */
  static final long DEBEZIUM_JDBC_DATE_INFINITY = -622_191_234L;

  /** As {@link #DEBEZIUM_JDBC_DATE_INFINITY}, for '-infinity'. */
  static final long DEBEZIUM_JDBC_DATE_MINUS_INFINITY = -625_821_272L;
  /** PostgreSQL's date range, 4714-11-24 BC to 5874897-12-31, in days from 1970. */
  static final long POSTGRES_MIN_EPOCH_DAY = -2_440_588L;

  static final long POSTGRES_MAX_EPOCH_DAY = 2_145_042_905L;
  private static final long MICROS_PER_DAY = 86_400_000_000L;
  private static final long NANOS_PER_DAY = 86_400_000_000_000L;

  /** The dates of the timestamp sentinels, which PostgreSQL's infinite dates are stored as. */
  private static final LocalDate INFINITY_DATE =
      LocalDate.ofEpochDay(Math.floorDiv(TIMESTAMP_INFINITY_MICROS, MICROS_PER_DAY));

  private static final LocalDate MINUS_INFINITY_DATE =
      LocalDate.ofEpochDay(Math.floorDiv(TIMESTAMP_MINUS_INFINITY_MICROS, MICROS_PER_DAY));

  /** Empty records to copy and plans of reading rows, per thread: see {@link Templates}. */
  private static final ThreadLocal<Templates> TEMPLATES = ThreadLocal.withInitial(Templates::new);

  private RowConverter() {}

  /**
   * {@link GenericRecord#create} looks the struct's field positions up in a cache shared by all
   * threads, every time; a copy of an empty record of the same struct shares them for nothing. The
   * structs a thread converts to change only with a schema, so a few recent ones are kept.
   */
  private static final class Templates {
    private final Types.StructType[] types = new Types.StructType[16];
    private final GenericRecord[] records = new GenericRecord[16];
    private int next;
    private final Plan[] plans = new Plan[16];
    private int nextPlan;

    /** How rows of {@code schema} are read into {@code type}, made once for the pair. */
    Plan plan(Types.StructType type, ConnectSchema schema) {
      for (Plan plan : plans) {
        if (plan != null && plan.type == type && plan.schema == schema) {
          return plan;
        }
      }
      Plan plan = new Plan(type, schema);
      plans[nextPlan] = plan;
      nextPlan = (nextPlan + 1) % plans.length;
      return plan;
    }

    GenericRecord create(Types.StructType type) {
      for (int i = 0; i < types.length; i++) {
        if (types[i] == type) {
          return records[i].copy();
        }
      }
      GenericRecord template = GenericRecord.create(type);
      types[next] = type;
      records[next] = template;
      next = (next + 1) % types.length;
      return template.copy();
    }
  }

  public static GenericRecord toRecord(
      JsonNode row, ConnectSchema rowSchema, Types.StructType type) {
    return struct(row, rowSchema, type, "");
  }

  /**
   * The record {@link #toRecord(JsonNode, ConnectSchema, Types.StructType)} makes of the image's
   * tree, made from its columns while it has no tree: each value is the node the tree would hold,
   * converted by the same code, and no tree of the row (a map of its columns) is built, nor looked
   * up by each column's name. A row whose columns convert otherwise (a value that does not, a
   * required column null) is converted from its tree, which gives the error its form; a name that
   * occurs twice ends with its last value, as in the tree.
   */
  public static GenericRecord toRecord(
      RowImage row, ConnectSchema rowSchema, Types.StructType type) {
    if (row.flat()) {
      GenericRecord read = fromColumns(row, rowSchema, type);
      if (read != null) {
        return read;
      }
    }
    return toRecord(row.tree(), rowSchema, type);
  }

  /** The row made from the image's columns, or null when only its tree can say (see above). */
  private static GenericRecord fromColumns(
      RowImage row, ConnectSchema rowSchema, Types.StructType type) {
    Templates templates = TEMPLATES.get();
    Plan plan = templates.plan(type, rowSchema);
    GenericRecord record = templates.create(type);
    try {
      for (int c = 0; c < row.size(); c++) {
        Integer at = plan.positions.get(row.name(c));
        if (at != null) { // a column the table lacks: the tree's conversion skips it too
          int i = at;
          record.set(i, value(row.value(c), plan.schemas[i], plan.types[i], plan.names[i]));
        }
      }
    } catch (RuntimeException e) {
      return null;
    }
    for (int i = 0; i < plan.required.length; i++) {
      if (plan.required[i] && record.get(i) == null) {
        return null;
      }
    }
    return record;
  }

  /**
   * The fields of a struct type by name, and for each its Connect schema (null when the row's
   * schema lacks it or there is none), Iceberg type, name and whether it is required.
   */
  private static final class Plan {
    final Types.StructType type;
    final ConnectSchema schema;
    final Map<String, Integer> positions = new HashMap<>();
    final ConnectSchema[] schemas;
    final Type[] types;
    final String[] names;
    final boolean[] required;

    Plan(Types.StructType type, ConnectSchema schema) {
      this.type = type;
      this.schema = schema;
      List<Types.NestedField> fields = type.fields();
      int n = fields.size();
      schemas = new ConnectSchema[n];
      types = new Type[n];
      names = new String[n];
      required = new boolean[n];
      for (int i = 0; i < n; i++) {
        Types.NestedField field = fields.get(i);
        // A struct type names a field once; should it not, the tree's reading decides.
        positions.putIfAbsent(field.name(), i);
        ConnectSchema.Field connectField = schema == null ? null : schema.field(field.name());
        schemas[i] = connectField == null ? null : connectField.schema();
        types[i] = field.type();
        names[i] = field.name();
        required[i] = field.isRequired();
      }
    }
  }

  private static GenericRecord struct(
      JsonNode row, ConnectSchema schema, Types.StructType type, String path) {
    GenericRecord record = TEMPLATES.get().create(type);
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
          if (TypeMapping.BITS.equals(logical)) {
            return bits(v.binaryValue(), s.parameters());
          }
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
          return date(v, logical, column, type);
        case TIME:
          return time(v, logical, column, type);
        case TIMESTAMP:
          return timestamp(
              v, logical, ((Types.TimestampType) type).shouldAdjustToUTC(), column, type);
        case TIMESTAMP_NANO:
          return timestamp(
              v, logical, ((Types.TimestampNanoType) type).shouldAdjustToUTC(), column, type);
        case STRUCT:
          if (!v.isObject()) {
            throw mismatch(column, type, v);
          }
          return struct(v, s, type.asStructType(), column);
        case LIST: {
          if (!v.isArray()) {
            throw mismatch(column, type, v);
          }
          Types.ListType list = type.asListType();
          if (javaArrays(v)) {
            throw new BadChangeException(
                "column \"" + column + "\": element " + abbreviate(v.get(0))
                    + " is the name of a Java array, not a value: the source's array has more than"
                    + " one dimension ({{a,b},{c,d}} in PostgreSQL), which Debezium cannot send."
                    + " Make the column jsonb, or leave it out with the connector's"
                    + " column.exclude.list");
          }
          List<Object> out = new ArrayList<>(v.size());
          for (JsonNode element : v) {
            Object converted = value(
                element, s == null ? null : s.items(), list.elementType(), column + ".element");
            if (converted == null && list.isElementRequired()) {
              // A table made by another hand (Spark's arrays have required elements): the null
              // would fail the batch's file, every time.
              throw new BadChangeException("column \"" + column + "\": value " + abbreviate(v)
                  + " has a null element, which " + type + " cannot hold");
            }
            out.add(converted);
          }
          return out;
        }
        case MAP:
          return map(v, s, type.asMapType(), column);
        default:
          throw new BadChangeException(
              "column \"" + column + "\" has Iceberg type " + type + ", which ingest cannot write");
      }
    } catch (IOException | IllegalArgumentException | DateTimeException | ArithmeticException e) {
      throw new BadChangeException(
          "column \"" + column + "\": value " + abbreviate(v) + " is not a valid " + type + " ("
              + e.getMessage() + ")",
          e);
    }
  }

  /**
   * Java's {@code toString} of an array of objects, as JDBC gives arrays ({@code
   * [Ljava.lang.String;@1b6d3586}, {@code [[Ljava.util.UUID;@4554617c}); never one of primitives.
   */
  private static final Pattern JAVA_ARRAY = Pattern.compile("\\[+L[\\w.$]+;@[0-9a-f]{1,8}");

  /**
   * Whether {@code text} is what Java prints for an array object, which Debezium 3.6.1's PostgreSQL
   * connector sends for each element of the first dimension of an array of more than one dimension
   * of text-like types, {@code uuid}, {@code inet} and enums (elements of other types arrive as
   * null).
   */
  static boolean javaArrayText(String text) {
    return text.length() > 4
        && text.charAt(0) == '['
        && JAVA_ARRAY.matcher(text).matches();
  }

  /**
   * Whether every element of {@code list} is a Java array's name, as Debezium sends an array of
   * more than one dimension (its first dimension's elements are all arrays: PostgreSQL's arrays are
   * rectangular). One such text beside other values is a value.
   */
  private static boolean javaArrays(JsonNode list) {
    if (list.isEmpty()) {
      return false;
    }
    for (JsonNode element : list) {
      if (!element.isTextual() || !javaArrayText(element.textValue())) {
        return false;
      }
    }
    return true;
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

  private static BigDecimal decimal(
      JsonNode v, ConnectSchema s, Types.DecimalType type, String column) throws IOException {
    BigDecimal value;
    String logical = s == null ? null : s.name();
    if (TypeMapping.DECIMAL.equals(logical)) {
      int scale = Integer.parseInt(s.parameters().getOrDefault("scale", "0"));
      if (v.isNumber()) {
        // decimal.format=NUMERIC in the JsonConverter
        value = v.decimalValue();
      } else {
        value = new BigDecimal(new BigInteger(v.binaryValue()), scale);
      }
    } else if (TypeMapping.VARIABLE_SCALE_DECIMAL.equals(logical) && v.isObject()) {
      // An unconstrained NUMERIC: each value carries its own scale.
      value = new BigDecimal(
          new BigInteger(v.path("value").binaryValue()), v.path("scale").asInt());
    } else if (v.isNumber()) {
      value = v.decimalValue();
    } else {
      value = new BigDecimal(v.asText());
    }
    BigDecimal scaled;
    try {
      scaled = value.setScale(type.scale(), RoundingMode.UNNECESSARY);
    } catch (ArithmeticException e) {
      throw new BadChangeException(
          "column \"" + column + "\": " + value.toPlainString() + " has more than " + type.scale()
              + " digits after the point, which " + type + " cannot hold without rounding");
    }
    if (scaled.precision() > type.precision()) {
      throw new BadChangeException(
          "column \"" + column + "\": " + value.toPlainString() + " does not fit " + type);
    }
    return scaled;
  }

  /**
   * Debezium's {@code Bits}: the bit string's value as little-endian bytes. The text is the bit
   * string as the source prints it; a fixed {@code length} (bit(n)) restores leading zeros, which
   * a varbit's encoding does not keep.
   */
  private static String bits(byte[] littleEndian, Map<String, String> parameters) {
    byte[] bigEndian = new byte[littleEndian.length];
    for (int i = 0; i < littleEndian.length; i++) {
      bigEndian[i] = littleEndian[littleEndian.length - 1 - i];
    }
    String digits = bigEndian.length == 0 ? "" : new BigInteger(1, bigEndian).toString(2);
    long length = Long.parseLong(parameters.getOrDefault("length", "0"));
    if (length > digits.length() && length < Integer.MAX_VALUE) {
      return "0".repeat((int) length - digits.length()) + digits;
    }
    return digits;
  }

  private static LocalDate date(JsonNode v, String logical, String column, Type type) {
    if (!v.isIntegralNumber()) {
      LocalDate parsed = LocalDate.parse(v.asText());
      Math.toIntExact(parsed.toEpochDay());
      return parsed;
    }
    long days = v.longValue();
    if (TypeMapping.DATE.equals(logical)) {
      if (days < POSTGRES_MIN_EPOCH_DAY || days > POSTGRES_MAX_EPOCH_DAY) {
        if (days == DEBEZIUM_DATE_INFINITY
            || days == DEBEZIUM_JDBC_DATE_INFINITY
            || days == DEBEZIUM_JDBC_DATE_INFINITY + 1) {
          return INFINITY_DATE;
        }
        if (days == DEBEZIUM_DATE_MINUS_INFINITY
            || days == DEBEZIUM_JDBC_DATE_MINUS_INFINITY
            || days == DEBEZIUM_JDBC_DATE_MINUS_INFINITY + 1) {
          return MINUS_INFINITY_DATE;
        }
        throw new BadChangeException(
            "column \"" + column + "\": " + days
                + " days from 1970 is outside every source's date range (an overflow in the connector)");
      }
    }
    return LocalDate.ofEpochDay(Math.toIntExact(days));
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
      nanos = Math.multiplyExact(n, 1_000_000L);
    } else if (TypeMapping.NANO_TIME.equals(logical)) {
      if (n % 1_000L != 0) {
        throw new BadChangeException("column \"" + column + "\": " + n
            + " ns has digits below a microsecond, which Iceberg's time cannot hold");
      }
      nanos = n;
    } else {
      nanos = Math.multiplyExact(n, 1_000L);
    }
    if (nanos < 0 || nanos >= NANOS_PER_DAY) {
      throw new BadChangeException("column \"" + column + "\": time " + Duration.ofNanos(nanos)
          + " is outside 00:00:00..23:59:59.999999, the range of Iceberg's time"
          + (nanos == NANOS_PER_DAY ? " (the source's 24:00:00)" : ""));
    }
    return LocalTime.ofNanoOfDay(nanos);
  }

  private static Object timestamp(
      JsonNode v, String logical, boolean withZone, String column, Type type) {
    Instant instant;
    if (v.isTextual()) {
      String text = v.textValue();
      Instant canonical = IsoTimestamps.parse(text, withZone);
      if (canonical != null) {
        instant = canonical;
      } else if ("infinity".equals(text) || "-infinity".equals(text)) {
        // Debezium writes a timestamptz infinity as text; keep the sentinel it uses for timestamp.
        instant = micros(
            text.startsWith("-") ? TIMESTAMP_MINUS_INFINITY_MICROS : TIMESTAMP_INFINITY_MICROS);
      } else if (withZone || text.endsWith("Z") || text.matches(".*[+-]\\d\\d:?\\d\\d$")) {
        instant = OffsetDateTime.parse(text).toInstant();
      } else {
        LocalDateTime local = LocalDateTime.parse(text);
        instant = local.toInstant(ZoneOffset.UTC);
      }
    } else {
      if (!v.isIntegralNumber()) {
        throw mismatch(column, type, v);
      }
      long n = v.longValue();
      if (TypeMapping.TIMESTAMP.equals(logical) || TypeMapping.CONNECT_TIMESTAMP.equals(logical)) {
        instant = Instant.ofEpochMilli(n);
      } else if (TypeMapping.NANO_TIMESTAMP.equals(logical)) {
        instant = Instant.ofEpochSecond(
            Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
      } else {
        // Debezium counts a timestamp after year 294247 up to Long.MAX_VALUE and then adds its
        // fraction: a whole second stays there, any other wraps below every source's first day.
        if (TypeMapping.MICRO_TIMESTAMP.equals(logical)
            && (n == Long.MAX_VALUE
                || (n < POSTGRES_MIN_EPOCH_DAY * MICROS_PER_DAY
                    && n != TIMESTAMP_MINUS_INFINITY_MICROS))) {
          throw new BadChangeException(
              "column \"" + column + "\": " + n
                  + " µs from 1970 is not a timestamp any source holds: the connector's count of"
                  + " microseconds overflowed (a timestamp after year 294247, which Iceberg cannot hold either)");
        }
        instant = micros(n);
      }
    }
    // Iceberg stores microseconds (or nanoseconds) since 1970 in a long: refuse what overflows it.
    if (type.typeId() == Type.TypeID.TIMESTAMP_NANO) {
      Math.addExact(
          Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano());
    } else {
      Math.addExact(
          Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000L);
      if (instant.getNano() % 1_000 != 0) {
        throw new BadChangeException("column \"" + column + "\": " + instant
            + " has digits below a microsecond, which " + type + " cannot hold");
      }
    }
    // Not instant.atOffset(UTC): on Java 17 that makes a new ZoneRules for every value.
    LocalDateTime local =
        LocalDateTime.ofEpochSecond(instant.getEpochSecond(), instant.getNano(), ZoneOffset.UTC);
    return withZone ? OffsetDateTime.of(local, ZoneOffset.UTC) : local;
  }

  private static Instant micros(long micros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  private static Map<Object, Object> map(
      JsonNode v, ConnectSchema s, Types.MapType type, String column) {
    Map<Object, Object> out = new LinkedHashMap<>();
    if (v.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        Object key = value(
            TextNode.valueOf(e.getKey()),
            s == null ? null : s.keys(),
            type.keyType(),
            column + ".key");
        out.put(key, mapValue(e.getValue(), s, type, column, v));
      }
      return out;
    }
    if (v.isArray()) {
      // Connect encodes maps with non-string keys as an array of [key, value] pairs.
      for (JsonNode pair : v) {
        if (!pair.isArray() || pair.size() != 2) {
          throw mismatch(column, type, v);
        }
        Object key =
            value(pair.get(0), s == null ? null : s.keys(), type.keyType(), column + ".key");
        if (key == null) {
          // Iceberg's map keys are required: a null one would fail the batch's file, every time.
          throw new BadChangeException("column \"" + column + "\": value " + abbreviate(v)
              + " has a null key, which " + type + " cannot hold");
        }
        out.put(key, mapValue(pair.get(1), s, type, column, v));
      }
      return out;
    }
    throw mismatch(column, type, v);
  }

  /** A map's value; a null one refused where the map's values are required. */
  private static Object mapValue(
      JsonNode value, ConnectSchema s, Types.MapType type, String column, JsonNode map) {
    Object converted =
        value(value, s == null ? null : s.values(), type.valueType(), column + ".value");
    if (converted == null && type.isValueRequired()) {
      throw new BadChangeException("column \"" + column + "\": value " + abbreviate(map)
          + " has a null value, which " + type + " cannot hold");
    }
    return converted;
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
