package dev.lakestream.sync.index;

import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;
import org.apache.kafka.common.utils.Utils;

/**
 * A primary key as bytes (each key column in Iceberg's single-value binary form, length-prefixed,
 * in the key schema's order) and the index partition it belongs to (murmur2 of those bytes, as
 * Kafka's default partitioner hashes record keys).
 *
 * <p>The bytes do not change when a key column is widened the ways Iceberg allows: an int is
 * written as the long it widens to, a float as a double, and a decimal's bytes (its unscaled
 * value) do not depend on its precision. So an index built before an {@code int} key became a
 * {@code bigint} still finds its keys (version 1 wrote an int as 4 bytes).
 */
final class KeyCodec {

  /**
   * The encoding's version, kept with each table's index: an index of another version is rebuilt.
   * 3: a {@code timestamp_ns} key column in nanoseconds (2 wrote the microseconds of a data file's
   * key, which never matched its deletes), and a {@code date} one as its days (2 failed on it).
   * 4: a key of more than {@link KeyIndex#MAX_STORED_KEY} bytes under its digest. An index of 3
   * is taken as it is ({@link #VERSION_WHOLE_LONG_KEYS}).
   */
  static final int VERSION = 4;

  /**
   * The version whose indexes this one reads without building them again: the same encoding, its
   * long keys stored whole, which {@link KeyIndex} still finds. A version of it that meets an index
   * of {@link #VERSION} builds it again (it would not find the keys under a digest).
   */
  static final int VERSION_WHOLE_LONG_KEYS = 3;

  private final List<Types.NestedField> fields;

  KeyCodec(Schema keySchema) {
    this.fields = keySchema.columns();
  }

  byte[] bytes(StructLike key) {
    ByteBuffer[] parts = new ByteBuffer[fields.size()];
    int size = 0;
    for (int i = 0; i < fields.size(); i++) {
      Object value = key.get(i, Object.class);
      if (value == null) {
        throw new IllegalArgumentException(
            "a key column is null: " + fields.get(i).name());
      }
      Type type = fields.get(i).type();
      parts[i] = Conversions.toByteBuffer(widest(type), widest(type, internal(type, value)));
      size += 4 + parts[i].remaining();
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    for (ByteBuffer part : parts) {
      out.putInt(part.remaining());
      out.put(part.duplicate());
    }
    return out.array();
  }

  /** The type a column of {@code type} can widen to, whose bytes the key is written in. */
  private static Type widest(Type type) {
    return switch (type.typeId()) {
      case INTEGER -> Types.LongType.get();
      case FLOAT -> Types.DoubleType.get();
      default -> type;
    };
  }

  /** {@code value} as the widest type of its column's (a date's days stay an int). */
  private static Object widest(Type type, Object value) {
    if (type.typeId() == Type.TypeID.INTEGER && value instanceof Integer i) {
      return i.longValue();
    } else if (type.typeId() == Type.TypeID.FLOAT && value instanceof Float f) {
      return f.doubleValue();
    }
    return value;
  }

  /**
   * Readers may give java.time values for dates and times: their internal (numeric) form for a
   * column of {@code type}, as Iceberg's delete loader gives them (microseconds, nanoseconds for a
   * {@code timestamp_ns}).
   */
  private static Object internal(Type type, Object value) {
    boolean nanos = type.typeId() == Type.TypeID.TIMESTAMP_NANO;
    if (value instanceof LocalDate d) {
      return DateTimeUtil.daysFromDate(d);
    } else if (value instanceof LocalDateTime t) {
      return nanos ? DateTimeUtil.nanosFromTimestamp(t) : DateTimeUtil.microsFromTimestamp(t);
    } else if (value instanceof OffsetDateTime t) {
      return nanos ? DateTimeUtil.nanosFromTimestamptz(t) : DateTimeUtil.microsFromTimestamptz(t);
    } else if (value instanceof LocalTime t) {
      return DateTimeUtil.microsFromTime(t);
    } else if (value instanceof byte[] b) {
      return ByteBuffer.wrap(b);
    }
    return value;
  }

  static int partition(byte[] keyBytes, int partitions) {
    return Utils.toPositive(Utils.murmur2(keyBytes)) % partitions;
  }
}
