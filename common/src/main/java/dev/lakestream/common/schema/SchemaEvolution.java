package dev.lakestream.common.schema;

import dev.lakestream.common.debezium.BadChangeException;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Decides how a table's schema must change to hold rows of an incoming type: new columns are added
 * (also inside structs), and a column whose source type grew is widened where Iceberg allows it
 * (int to long, float to double, a decimal's precision). A narrower incoming type that fits the
 * column needs no change. Any other difference is rejected with {@link BadChangeException} naming
 * the column, the table's type and the incoming type.
 */
public final class SchemaEvolution {

  /** One change to apply. {@code parent} is null for a top-level column. */
  public sealed interface Change permits AddColumn, WidenColumn {}

  public record AddColumn(String parent, String name, Type type) implements Change {}

  public record WidenColumn(String path, Type.PrimitiveType type) implements Change {}

  private SchemaEvolution() {}

  /** The changes that make {@code table} hold rows of {@code incoming}; empty when none are needed. */
  public static List<Change> plan(Types.StructType table, Types.StructType incoming) {
    List<Change> changes = new ArrayList<>();
    struct(null, table, incoming, changes);
    return changes;
  }

  public static void apply(List<Change> changes, UpdateSchema update) {
    for (Change change : changes) {
      if (change instanceof AddColumn add) {
        update.addColumn(add.parent(), add.name(), add.type());
      } else if (change instanceof WidenColumn widen) {
        update.updateColumn(widen.path(), widen.type());
      }
    }
  }

  private static void struct(
      String path, Types.StructType table, Types.StructType incoming, List<Change> changes) {
    for (Types.NestedField field : incoming.fields()) {
      Types.NestedField existing = table.field(field.name());
      String fieldPath = path == null ? field.name() : path + "." + field.name();
      if (existing == null) {
        changes.add(new AddColumn(path, field.name(), field.type()));
      } else {
        reconcile(fieldPath, existing.type(), field.type(), changes);
      }
    }
  }

  private static void reconcile(String path, Type table, Type incoming, List<Change> changes) {
    if (table.isStructType() && incoming.isStructType()) {
      struct(path, table.asStructType(), incoming.asStructType(), changes);
      return;
    }
    if (table.isListType() && incoming.isListType()) {
      reconcile(
          path + ".element",
          table.asListType().elementType(),
          incoming.asListType().elementType(),
          changes);
      return;
    }
    if (table.isMapType() && incoming.isMapType()) {
      if (!table.asMapType().keyType().equals(incoming.asMapType().keyType())) {
        throw incompatible(
            path + ".key", table.asMapType().keyType(), incoming.asMapType().keyType());
      }
      reconcile(
          path + ".value",
          table.asMapType().valueType(),
          incoming.asMapType().valueType(),
          changes);
      return;
    }
    if (table.isPrimitiveType() && incoming.isPrimitiveType()) {
      if (table.equals(incoming)
          || TypeUtil.isPromotionAllowed(incoming, table.asPrimitiveType())) {
        return;
      }
      if (TypeUtil.isPromotionAllowed(table, incoming.asPrimitiveType())) {
        changes.add(new WidenColumn(path, incoming.asPrimitiveType()));
        return;
      }
    }
    throw incompatible(path, table, incoming);
  }

  private static BadChangeException incompatible(String path, Type table, Type incoming) {
    return new BadChangeException("column \""
        + path
        + "\" is "
        + table
        + " in the table but the source now sends "
        + incoming
        + "; Iceberg cannot change "
        + table
        + " to "
        + incoming
        + " (only int->long, float->double and wider decimal precision)");
  }
}
