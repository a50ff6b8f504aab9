package dev.lakestream.common.iceberg;

import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Rules files in or out for keys by the lower and upper bounds of the key columns: when the ranges
 * of any key column do not overlap, no key of one can be in the other. Missing bounds rule nothing
 * out. (Bounds of long strings are truncated, but lower bounds only downwards and upper bounds only
 * upwards, so the test stays safe.)
 *
 * <p>Bounds are compared in the order the file's writer computed them. Parquet orders UUIDs as
 * unsigned bytes, Iceberg's comparator (in 1.12, {@link UUID#compareTo}) as signed longs: with
 * random keys the two disagree and a file's bounds would seem to exclude keys it holds
 * (apache/iceberg#14216). UUIDs are therefore compared as unsigned bytes here.
 */
public final class KeyBounds {

  private static final Comparator<UUID> UUID_AS_UNSIGNED_BYTES = Comparator.<UUID>comparingLong(
          u -> u.getMostSignificantBits() ^ Long.MIN_VALUE)
      .thenComparingLong(u -> u.getLeastSignificantBits() ^ Long.MIN_VALUE);

  private KeyBounds() {}

  /** False when the key bounds of {@code data} and {@code deletes} show they share no key. */
  public static boolean mayOverlap(Schema schema, ContentFile<?> data, ContentFile<?> deletes) {
    for (Integer id : deletes.equalityFieldIds()) {
      Type type = schema.findType(id);
      if (type == null || !type.isPrimitiveType()) {
        continue;
      }
      Object dataLower = bound(data.lowerBounds(), id, type);
      Object dataUpper = bound(data.upperBounds(), id, type);
      Object deleteLower = bound(deletes.lowerBounds(), id, type);
      Object deleteUpper = bound(deletes.upperBounds(), id, type);
      Comparator<Object> cmp = comparator(type);
      if (dataLower != null && deleteUpper != null && cmp.compare(deleteUpper, dataLower) < 0) {
        return false;
      }
      if (dataUpper != null && deleteLower != null && cmp.compare(deleteLower, dataUpper) > 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * False when the bounds of {@code file} show it cannot hold {@code key}, a struct of the columns
   * of {@code keyType} (field ids of the table's schema) in Iceberg's internal representation (wrap
   * a generic record in an {@code InternalRecordWrapper}).
   */
  public static boolean mayContain(ContentFile<?> file, Types.StructType keyType, StructLike key) {
    for (int i = 0; i < keyType.fields().size(); i++) {
      Types.NestedField field = keyType.fields().get(i);
      Type type = field.type();
      if (!type.isPrimitiveType()) {
        continue;
      }
      Object value = key.get(i, Object.class);
      if (value == null) {
        continue;
      }
      Comparator<Object> cmp = comparator(type);
      Object lower = bound(file.lowerBounds(), field.fieldId(), type);
      Object upper = bound(file.upperBounds(), field.fieldId(), type);
      if ((lower != null && cmp.compare(value, lower) < 0)
          || (upper != null && cmp.compare(value, upper) > 0)) {
        return false;
      }
    }
    return true;
  }

  /** The order in which the data files' writers computed bounds of {@code type}. */
  @SuppressWarnings("unchecked")
  public static Comparator<Object> comparator(Type type) {
    if (type.typeId() == Type.TypeID.UUID) {
      return (Comparator<Object>) (Comparator<?>) UUID_AS_UNSIGNED_BYTES;
    }
    return (Comparator<Object>) Comparators.forType(type.asPrimitiveType());
  }

  private static Object bound(Map<Integer, ByteBuffer> bounds, int id, Type type) {
    if (bounds == null) {
      return null;
    }
    ByteBuffer buffer = bounds.get(id);
    return buffer == null ? null : Conversions.fromByteBuffer(type, buffer);
  }
}
