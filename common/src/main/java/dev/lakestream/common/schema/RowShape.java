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

    /**
     * The last shape by the very schema instance it came from: the decoder hands out one instance
     * per distinct schema text, so most records skip building and hashing the fingerprint (the
     * schema's whole text).
     */
    private ConnectSchema lastSchema;

    private List<String> lastKeyColumns;
    private RowShape lastShape;

    public RowShape of(ChangeEvent event) {
      List<String> keyColumns = new ArrayList<>();
      event.key().fieldNames().forEachRemaining(keyColumns::add);
      if (event.hasSchemas()) {
        ConnectSchema schema = event.rowSchema();
        if (schema == lastSchema && keyColumns.equals(lastKeyColumns)) {
          return lastShape;
        }
        RowShape shape = byFingerprint(schema, keyColumns);
        lastSchema = schema;
        lastKeyColumns = keyColumns;
        lastShape = shape;
        return shape;
      }
      Types.StructType type =
          TypeMapping.inferRowType(event.after() != null ? event.after() : event.key(), keyColumns);
      return new RowShape(type, List.copyOf(keyColumns), keyColumns + type.toString());
    }

    private RowShape byFingerprint(ConnectSchema schema, List<String> keyColumns) {
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
  }
}
