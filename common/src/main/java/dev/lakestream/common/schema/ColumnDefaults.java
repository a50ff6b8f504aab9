package dev.lakestream.common.schema;

import dev.lakestream.common.debezium.ConnectSchema;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The defaults of a row's columns, as the source connector states them in its schema ({@code
 * "default"} of a field), as Iceberg literals: a column added to a table later takes its default as
 * its initial default (Iceberg v3), the value a reader sees in rows written before the column
 * existed. That is what the source shows for them: PostgreSQL 11+ and MySQL 8 add a column with a
 * constant default without rewriting the table, so the rows it already held get the default and no
 * change event. A default the connector does not state (an expression it cannot evaluate, such as
 * {@code now()}) or that has no Iceberg literal (a list, a map, a struct) is left out.
 */
public final class ColumnDefaults {

  private ColumnDefaults() {}

  /** The top-level columns of {@code row} that state a default, by name, as literals of {@code type}'s columns. */
  static Map<String, Literal<?>> of(ConnectSchema row, Types.StructType type) {
    Map<String, Literal<?>> out = new LinkedHashMap<>();
    for (ConnectSchema.Field f : row.fields()) {
      if (f.schema().defaultValue() == null) {
        continue;
      }
      Types.NestedField column = type.field(f.name());
      if (column == null || !column.type().isPrimitiveType()) {
        continue;
      }
      Literal<?> literal;
      try {
        literal = literal(
            RowConverter.value(f.schema().defaultValue(), f.schema(), column.type(), f.name()),
            column.type());
      } catch (RuntimeException e) {
        continue; // a default that does not convert is no default
      }
      if (literal != null) {
        out.put(f.name(), literal);
      }
    }
    return Collections.unmodifiableMap(out);
  }

  /** {@code value}, as the row converter makes it for a column of {@code type}, as a literal; or null. */
  static Literal<?> literal(Object value, Type type) {
    Literal<?> literal;
    if (value == null) {
      return null;
    } else if (value instanceof Boolean b) {
      literal = Literal.of(b);
    } else if (value instanceof Integer i) {
      literal = Literal.of(i);
    } else if (value instanceof Long l) {
      literal = Literal.of(l);
    } else if (value instanceof Float f) {
      literal = Literal.of(f);
    } else if (value instanceof Double d) {
      literal = Literal.of(d);
    } else if (value instanceof CharSequence s) {
      literal = Literal.of(s);
    } else if (value instanceof BigDecimal d) {
      literal = Literal.of(d);
    } else if (value instanceof UUID u) {
      literal = Literal.of(u);
    } else if (value instanceof ByteBuffer b) {
      literal = Literal.of(b);
    } else if (value instanceof LocalDate d) {
      literal = Literal.of((int) d.toEpochDay()).to(Types.DateType.get());
    } else if (value instanceof LocalTime t) {
      literal = Literal.of(t.toNanoOfDay() / 1_000).to(Types.TimeType.get());
    } else if (value instanceof LocalDateTime t) {
      literal = Literal.of(sinceEpoch(t.atOffset(ZoneOffset.UTC), type)).to(type);
    } else if (value instanceof OffsetDateTime t) {
      literal = Literal.of(sinceEpoch(t, type)).to(type);
    } else {
      return null;
    }
    return literal == null ? null : literal.to(type);
  }

  private static long sinceEpoch(OffsetDateTime t, Type type) {
    OffsetDateTime epoch = OffsetDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);
    return type.typeId() == Type.TypeID.TIMESTAMP_NANO
        ? ChronoUnit.NANOS.between(epoch, t)
        : ChronoUnit.MICROS.between(epoch, t);
  }
}
