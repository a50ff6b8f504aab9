package dev.lakestream.sync.diff;

import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;

/**
 * Rules out an equality delete for a data file by the lower and upper bounds of the key columns:
 * when the ranges of any key column do not overlap, no key of the delete can be in the file. Missing
 * bounds rule nothing out. (Bounds of long strings are truncated, but lower bounds only downwards
 * and upper bounds only upwards, so the test stays safe.)
 */
public final class KeyBounds {

  private KeyBounds() {}

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

  @SuppressWarnings("unchecked")
  private static Comparator<Object> comparator(Type type) {
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
