package dev.lakestream.common.schema;

import com.fasterxml.jackson.databind.JsonNode;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ConnectSchema;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Maps Kafka Connect / Debezium schemas to Iceberg types, and infers Iceberg types from JSON values
 * when the converter embeds no schemas.
 *
 * <p>Logical types decide first ({@code io.debezium.time.*}, Connect's {@code Decimal}, {@code
 * Date}, {@code Time}, {@code Timestamp}, Debezium's {@code Uuid}, {@code Json}, {@code
 * VariableScaleDecimal} and {@code Bits}); otherwise the Connect type does. Types Iceberg lacks
 * become text in the source's own notation: {@code timetz} ({@code ZonedTime}), {@code interval}
 * ({@code Interval}, the shipped connector's {@code interval.handling.mode=string}), bit strings
 * ({@code Bits}, as 0s and 1s). An unconstrained NUMERIC becomes {@code decimal(38,18)}. Every column except the key is optional, so a column dropped at the source
 * reads as null. Types Iceberg cannot express throw {@link BadChangeException} with the column and
 * the reason. The returned types carry fresh field ids, to be reassigned when applied to a table.
 */
public final class TypeMapping {

  public static final String DECIMAL = "org.apache.kafka.connect.data.Decimal";
  public static final String CONNECT_DATE = "org.apache.kafka.connect.data.Date";
  public static final String CONNECT_TIME = "org.apache.kafka.connect.data.Time";
  public static final String CONNECT_TIMESTAMP = "org.apache.kafka.connect.data.Timestamp";
  public static final String DATE = "io.debezium.time.Date";
  public static final String TIME = "io.debezium.time.Time";
  public static final String MICRO_TIME = "io.debezium.time.MicroTime";
  public static final String NANO_TIME = "io.debezium.time.NanoTime";
  public static final String TIMESTAMP = "io.debezium.time.Timestamp";
  public static final String MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp";
  public static final String NANO_TIMESTAMP = "io.debezium.time.NanoTimestamp";
  public static final String ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp";
  public static final String UUID = "io.debezium.data.Uuid";
  public static final String JSON = "io.debezium.data.Json";
  public static final String VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal";
  public static final String BITS = "io.debezium.data.Bits";
  public static final String ZONED_TIME = "io.debezium.time.ZonedTime";
  public static final String INTERVAL = "io.debezium.time.Interval";
  public static final String MICRO_DURATION = "io.debezium.time.MicroDuration";

  static final int MAX_DECIMAL_PRECISION = 38;
  /**
   * The scale of the Iceberg decimal an unconstrained NUMERIC maps to: decimal(38,18), the type
   * Spark gives an unconstrained decimal, so 20 digits before the point and 18 after.
   */
  public static final int VARIABLE_SCALE = 18;

  private TypeMapping() {}

  /** The Iceberg struct for a Debezium row schema; {@code keyColumns} become required fields. */
  public static Types.StructType rowType(ConnectSchema row, List<String> keyColumns) {
    AtomicInteger ids = new AtomicInteger(0);
    List<Types.NestedField> fields = new ArrayList<>();
    for (ConnectSchema.Field f : row.fields()) {
      Type type = toIceberg(f.schema(), f.name(), ids);
      fields.add(field(ids.incrementAndGet(), f.name(), type, keyColumns.contains(f.name())));
    }
    return Types.StructType.of(fields);
  }

  /** The Iceberg type of one Connect schema. {@code column} names it in error messages. */
  public static Type toIceberg(ConnectSchema schema, String column) {
    return toIceberg(schema, column, new AtomicInteger(0));
  }

  private static Type toIceberg(ConnectSchema s, String column, AtomicInteger ids) {
    if (s.name() != null) {
      Type logical = logical(s, column);
      if (logical != null) {
        return logical;
      }
    }
    switch (s.type()) {
      case "int8":
      case "int16":
      case "int32":
        return Types.IntegerType.get();
      case "int64":
        return Types.LongType.get();
      // Connect's JsonConverter names FLOAT32 "float" and FLOAT64 "double".
      case "float":
        return Types.FloatType.get();
      case "double":
        return Types.DoubleType.get();
      case "boolean":
        return Types.BooleanType.get();
      case "string":
        return Types.StringType.get();
      case "bytes":
        return Types.BinaryType.get();
      case "array": {
        Type element = toIceberg(s.items(), column + ".element", ids);
        return Types.ListType.ofOptional(ids.incrementAndGet(), element);
      }
      case "map": {
        Type key = toIceberg(s.keys(), column + ".key", ids);
        Type value = toIceberg(s.values(), column + ".value", ids);
        return Types.MapType.ofOptional(ids.incrementAndGet(), ids.incrementAndGet(), key, value);
      }
      case "struct": {
        if (s.fields().isEmpty()) {
          throw new BadChangeException(
              "column \"" + column + "\" is a struct without fields, which Parquet cannot store");
        }
        List<Types.NestedField> fields = new ArrayList<>();
        for (ConnectSchema.Field f : s.fields()) {
          Type type = toIceberg(f.schema(), column + "." + f.name(), ids);
          fields.add(field(ids.incrementAndGet(), f.name(), type, false));
        }
        return Types.StructType.of(fields);
      }
      default:
        throw new BadChangeException("column \"" + column + "\" has Connect type \"" + s.type()
            + "\", which has no Iceberg type");
    }
  }

  private static Type logical(ConnectSchema s, String column) {
    switch (s.name()) {
      case DECIMAL: {
        Map<String, String> p = s.parameters();
        int scale = Integer.parseInt(p.getOrDefault("scale", "0"));
        int precision = Integer.parseInt(
            p.getOrDefault("connect.decimal.precision", String.valueOf(MAX_DECIMAL_PRECISION)));
        if (scale > MAX_DECIMAL_PRECISION || scale < 0 || scale > precision) {
          throw new BadChangeException("column \""
              + column
              + "\" is decimal("
              + precision
              + ","
              + scale
              + "); Iceberg decimals allow 0 <= scale <= precision <= 38; set the connector's"
              + " decimal.handling.mode to string to keep such values as text");
        }
        // A wider source precision (numeric(50,2)) keeps its scale at Iceberg's widest precision:
        // values of up to 38 digits fit, a larger one is refused with its value when it arrives.
        return Types.DecimalType.of(Math.min(precision, MAX_DECIMAL_PRECISION), scale);
      }
      case VARIABLE_SCALE_DECIMAL:
        return Types.DecimalType.of(MAX_DECIMAL_PRECISION, VARIABLE_SCALE);
      case BITS:
      case ZONED_TIME:
      case INTERVAL:
        return Types.StringType.get();
      case MICRO_DURATION:
        return Types.LongType.get();
      case DATE:
      case CONNECT_DATE:
        return Types.DateType.get();
      case TIME:
      case CONNECT_TIME:
      case MICRO_TIME:
      case NANO_TIME:
        return Types.TimeType.get();
      case TIMESTAMP:
      case CONNECT_TIMESTAMP:
      case MICRO_TIMESTAMP:
        return Types.TimestampType.withoutZone();
      case NANO_TIMESTAMP:
        return Types.TimestampNanoType.withoutZone();
      case ZONED_TIMESTAMP:
        return Types.TimestampType.withZone();
      case UUID:
        return Types.UUIDType.get();
      case JSON:
        return Types.StringType.get();
      default:
        return null;
    }
  }

  /**
   * The Iceberg struct inferred from a JSON row without a schema: integral numbers become long,
   * other numbers double, objects structs, arrays lists. A null value says nothing of its type, so
   * the column is left out until a value arrives.
   */
  public static Types.StructType inferRowType(JsonNode row, List<String> keyColumns) {
    AtomicInteger ids = new AtomicInteger(0);
    List<Types.NestedField> fields = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = row.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      Type type = infer(e.getValue(), ids);
      if (type != null) {
        fields.add(field(ids.incrementAndGet(), e.getKey(), type, keyColumns.contains(e.getKey())));
      } else if (keyColumns.contains(e.getKey())) {
        throw new BadChangeException("primary-key column \"" + e.getKey() + "\" is null");
      }
    }
    return Types.StructType.of(fields);
  }

  private static Type infer(JsonNode v, AtomicInteger ids) {
    if (v == null || v.isNull()) {
      return null;
    }
    if (v.isBoolean()) {
      return Types.BooleanType.get();
    }
    if (v.isIntegralNumber()) {
      return Types.LongType.get();
    }
    if (v.isNumber()) {
      return Types.DoubleType.get();
    }
    if (v.isTextual()) {
      return Types.StringType.get();
    }
    if (v.isArray()) {
      for (JsonNode element : v) {
        Type type = infer(element, ids);
        if (type != null) {
          return Types.ListType.ofOptional(ids.incrementAndGet(), type);
        }
      }
      return null;
    }
    if (v.isObject()) {
      List<Types.NestedField> fields = new ArrayList<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        Type type = infer(e.getValue(), ids);
        if (type != null) {
          fields.add(field(ids.incrementAndGet(), e.getKey(), type, false));
        }
      }
      return fields.isEmpty() ? null : Types.StructType.of(fields);
    }
    return Types.StringType.get();
  }

  private static Types.NestedField field(int id, String name, Type type, boolean required) {
    return required
        ? Types.NestedField.required(id, name, type)
        : Types.NestedField.optional(id, name, type);
  }
}
