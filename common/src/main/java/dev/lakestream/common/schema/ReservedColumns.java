package dev.lakestream.common.schema;

import dev.lakestream.common.iceberg.SourcePositions;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * Source column names a table must not take. Iceberg's other metadata column names ({@code _file},
 * {@code _row_id}, ...) are fine as columns: readers tell them apart by field id. Two are not:
 *
 * <ul>
 *   <li>{@code _pos}: Iceberg's Java readers (Spark, Flink, the generic reader) add the row position
 *       column by that name to apply position deletes, and refuse the projection when the table has
 *       a column of the name ("multiple fields for name _pos"). {@code main} holds deletion vectors,
 *       so such a table could not be read there.
 *   <li>{@link SourcePositions#NAME}: ingest writes it beside the table's columns in every data file.
 * </ul>
 *
 * Only top-level columns count: a nested field's name is qualified by its struct's.
 */
public final class ReservedColumns {

  /** Each name and why a table cannot take it. */
  public static final Map<String, String> NAMES = Map.of(
      MetadataColumns.ROW_POSITION.name(),
      "which is the name of Iceberg's row position (Iceberg's Java readers, Spark's and Flink's"
          + " among them, cannot read a table with such a column once it has position deletes, and"
          + " main holds deletion vectors)",
      SourcePositions.NAME,
      "which is the name of the source position ingest writes in every data file");

  private ReservedColumns() {}

  /**
   * Why a table whose schema is {@code existing} (null for a table not yet made) cannot take the
   * columns of {@code type}; empty when it can. A column the table already has is not refused
   * again: a table an earlier version made with {@code _pos} keeps being mirrored as before.
   */
  public static Optional<String> refusal(Types.StructType type, Schema existing) {
    for (Types.NestedField field : type.fields()) {
      String why = NAMES.get(field.name());
      if (why != null && (existing == null || existing.findField(field.name()) == null)) {
        return Optional.of("column \"" + field.name() + "\", " + why + ". Leave the column out of"
            + " the capture (the connector's column.exclude.list) or rename it in the source");
      }
    }
    return Optional.empty();
  }
}
