package dev.lakestream.common.schema;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ConnectSchema;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.types.Types;

/**
 * The Iceberg row type and primary key a change event asks its table to hold, with a fingerprint
 * that identifies it for caching. With embedded schemas the type comes from the row schema (all
 * columns, whatever the op); without, it is inferred from the after-image, or from the key for a
 * delete.
 */
public record RowShape(Types.StructType type, List<String> keyColumns, String fingerprint) {

  private static final int CACHE_SIZE = 256;

  /** Maps change events to shapes, remembering the last few schemas. Not thread-safe. */
  public static final class Resolver {
    private final Map<String, RowShape> cache = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, RowShape> eldest) {
        return size() > CACHE_SIZE;
      }
    };

    public RowShape of(ChangeEvent event) {
      List<String> keyColumns = new ArrayList<>();
      event.key().fieldNames().forEachRemaining(keyColumns::add);
      if (event.hasSchemas()) {
        ConnectSchema schema = event.rowSchema();
        String fingerprint = keyColumns + schema.fingerprint();
        RowShape shape = cache.get(fingerprint);
        if (shape == null) {
          for (String key : keyColumns) {
            if (schema.field(key) == null) {
              throw new BadChangeException("row schema lacks primary-key column \"" + key + "\"");
            }
          }
          shape = new RowShape(
              TypeMapping.rowType(schema, keyColumns), List.copyOf(keyColumns), fingerprint);
          cache.put(fingerprint, shape);
        }
        return shape;
      }
      Types.StructType type =
          TypeMapping.inferRowType(event.after() != null ? event.after() : event.key(), keyColumns);
      return new RowShape(type, List.copyOf(keyColumns), keyColumns + type.toString());
    }
  }
}
