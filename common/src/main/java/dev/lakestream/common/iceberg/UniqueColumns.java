package dev.lakestream.common.iceberg;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Writer properties that turn Parquet's dictionary off for the columns whose values are unique in
 * every file the pipeline writes: the key columns (a batch, a compaction's output and an
 * equality-delete file hold each key once) and the source position (each row its own). For such a
 * column a dictionary is only work: Parquet hashes every value into it, finds at the end of the
 * first page that it does not pay, and writes the page again without it. Given to a writer
 * factory, not set on the table: a user's table keeps its properties, and other writers theirs.
 * A column that is not unique after all is still written correctly, only without a dictionary.
 *
 * <p>A batch's data file is written from rows held in memory, so its other columns are looked at
 * too ({@link #dataFile(Schema, List)}): a column whose first {@value #SAMPLE_ROWS} values hold no
 * repeat gets no dictionary in that file either. Parquet decides a column's dictionary once, at
 * the end of the column's first page (up to 20,000 values by default), keeping it only if the
 * dictionary and the indexes into it are smaller than the values: with no repeat among 1,000
 * values the values come from a domain of hundreds of thousands or more, so the first page's
 * values repeat too rarely for that, and Parquet would have hashed them all and then dropped the
 * dictionary. A column whose sample holds a repeat keeps Parquet's own decision.
 */
public final class UniqueColumns {

  private UniqueColumns() {}

  /** For a data file of {@code schema} with the position column: its key columns and positions. */
  public static Map<String, String> dataFile(Schema schema) {
    Map<String, String> out = keyColumns(schema);
    out.put(
        TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + SourcePositions.NAME,
        "false");
    return Map.copyOf(out);
  }

  /**
   * For a data file of {@code schema} (without the position column) holding {@code rows} (records
   * of the schema with the position column, as they will be written, in that order): as {@link
   * #dataFile(Schema)}, and no dictionary either for a column whose first {@value #SAMPLE_ROWS}
   * rows hold at least two values and no value twice. Only top-level primitive columns are looked
   * at, and not those Parquet gives no dictionary ({@link #NO_DICTIONARY}).
   */
  public static Map<String, String> dataFile(Schema schema, List<? extends StructLike> rows) {
    Map<String, String> out = new HashMap<>(dataFile(schema));
    int sampled = Math.min(rows.size(), SAMPLE_ROWS);
    if (sampled < 2) {
      return Map.copyOf(out);
    }
    Set<Integer> keys = schema.identifierFieldIds();
    List<Types.NestedField> columns = schema.columns();
    Set<Object> seen = new HashSet<>(2 * sampled);
    for (int pos = 0; pos < columns.size(); pos++) {
      Types.NestedField column = columns.get(pos);
      Type type = column.type();
      if (keys.contains(column.fieldId())
          || !type.isPrimitiveType()
          || NO_DICTIONARY.contains(type.typeId())) {
        continue;
      }
      if (noRepeat(rows, sampled, pos, seen)) {
        out.put(
            TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + column.name(), "false");
      }
    }
    return Map.copyOf(out);
  }

  /**
   * Types Parquet writes without a dictionary in the format version Iceberg writes (1): booleans,
   * and fixed-length bytes (UUIDs are fixed too); whether their values repeat does not matter.
   */
  private static final Set<Type.TypeID> NO_DICTIONARY =
      Set.of(Type.TypeID.BOOLEAN, Type.TypeID.FIXED, Type.TypeID.UUID);

  /** How many rows of a batch {@link #dataFile(Schema, List)} looks at. */
  static final int SAMPLE_ROWS = 1_000;

  /** Whether the column at {@code pos} of the first {@code sampled} rows holds two values or more, none twice. */
  private static boolean noRepeat(
      List<? extends StructLike> rows, int sampled, int pos, Set<Object> seen) {
    seen.clear();
    for (int i = 0; i < sampled; i++) {
      Object value = rows.get(i).get(pos, Object.class);
      if (value == null) {
        continue;
      }
      if (!seen.add(value)) {
        return false;
      }
    }
    return seen.size() >= 2;
  }

  /**
   * For an equality-delete file of the key columns: no dictionary at all, every column being a key
   * column (Iceberg's delete writers read Parquet's own switch, not the per-column settings).
   */
  public static Map<String, String> equalityDeleteFile() {
    return Map.of(PARQUET_ENABLE_DICTIONARY, "false");
  }

  /** Parquet's property ({@code ParquetOutputFormat.ENABLE_DICTIONARY}), read by Iceberg's writers. */
  static final String PARQUET_ENABLE_DICTIONARY = "parquet.enable.dictionary";

  private static Map<String, String> keyColumns(Schema schema) {
    Map<String, String> out = new HashMap<>();
    for (int id : schema.identifierFieldIds()) {
      out.put(
          TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + schema.findColumnName(id),
          "false");
    }
    return out;
  }
}
