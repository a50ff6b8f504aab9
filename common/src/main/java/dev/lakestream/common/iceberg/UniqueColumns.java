package dev.lakestream.common.iceberg;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;

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
 * too ({@link #dataFile(Schema, List, Map)}). Parquet decides a column's dictionary once, at the
 * end of the column's first page (at most {@code write.parquet.page-row-limit} values, 20,000 by
 * default), and keeps it only if the dictionary and the indexes into it are smaller than the
 * values. A column whose values in {@value #SAMPLE_ROWS} rows drawn at random from that page hold
 * no repeat gets no dictionary in the file: had a fifth of the page's values repeated an earlier
 * one, the draw would have met one but for a chance below one in ten thousand (one in a hundred at
 * a tenth), and a dictionary of 8-byte values pays from about a quarter of repeats, of 16-byte
 * values from an eighth. Rarer repeats can escape the draw, and for long values a dictionary can
 * pay with them: the file may then be a little larger than Parquet alone would write it, never
 * different in what it holds. Drawn at random, not the first rows: rows arrive in the source's
 * order, and a column can be unique over its first thousand rows and repeat over the page (a
 * product id in rows ordered by warehouse, then product). A column whose draw repeats, or that the
 * table's own properties set, keeps Parquet's or the table's choice.
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
   * of the schema with the position column, as they will be written, in that order), of a table
   * with {@code tableProperties}: as {@link #dataFile(Schema)}, and no dictionary either for a
   * column whose values in the sampled rows are at least two and none twice. Only top-level
   * primitive columns are looked at, not those Parquet gives no dictionary ({@link
   * #NO_DICTIONARY}) and not those the table's properties set a dictionary for.
   */
  public static Map<String, String> dataFile(
      Schema schema, List<? extends StructLike> rows, Map<String, String> tableProperties) {
    Map<String, String> out = new HashMap<>(dataFile(schema));
    if (rows.size() < 2) {
      return Map.copyOf(out);
    }
    int[] sample = sample(rows.size(), pageRows(tableProperties));
    if (sample.length < 2) {
      return Map.copyOf(out);
    }
    Set<Integer> keys = schema.identifierFieldIds();
    List<Types.NestedField> columns = schema.columns();
    Set<Object> seen = new HashSet<>(2 * sample.length);
    for (int pos = 0; pos < columns.size(); pos++) {
      Types.NestedField column = columns.get(pos);
      Type type = column.type();
      String property = TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + column.name();
      if (keys.contains(column.fieldId())
          || !type.isPrimitiveType()
          || NO_DICTIONARY.contains(type.typeId())
          || tableProperties.containsKey(property)) {
        continue;
      }
      if (noRepeat(rows, sample, pos, seen)) {
        out.put(property, "false");
      }
    }
    return Map.copyOf(out);
  }

  /**
   * The table's page row limit; its default when the table's value is not a number, which is
   * Iceberg's writer's to reject (with its own message), not this choice's.
   */
  private static int pageRows(Map<String, String> tableProperties) {
    try {
      return PropertyUtil.propertyAsInt(
          tableProperties,
          TableProperties.PARQUET_PAGE_ROW_LIMIT,
          TableProperties.PARQUET_PAGE_ROW_LIMIT_DEFAULT);
    } catch (NumberFormatException e) {
      return TableProperties.PARQUET_PAGE_ROW_LIMIT_DEFAULT;
    }
  }

  /**
   * Types Parquet writes without a dictionary in the format version Iceberg writes (1): booleans,
   * and fixed-length bytes (UUIDs are fixed too); whether their values repeat does not matter.
   */
  private static final Set<Type.TypeID> NO_DICTIONARY =
      Set.of(Type.TypeID.BOOLEAN, Type.TypeID.FIXED, Type.TypeID.UUID);

  /** How many rows of a batch's first page {@link #dataFile(Schema, List, Map)} looks at. */
  static final int SAMPLE_ROWS = 1_000;

  /**
   * The rows looked at, of {@code rows} rows of which the first page holds {@code pageRows}: all of
   * the page's when they are {@value #SAMPLE_ROWS} or fewer, otherwise {@value #SAMPLE_ROWS}
   * distinct ones drawn at random (the same draw for the same sizes, so that a file is written the
   * same way again).
   */
  static int[] sample(int rows, int pageRows) {
    int page = Math.min(rows, Math.max(1, pageRows));
    if (page <= SAMPLE_ROWS) {
      return IntStream.range(0, page).toArray();
    }
    // Floyd's draw of SAMPLE_ROWS distinct numbers below page.
    SplittableRandom random = new SplittableRandom(page);
    Set<Integer> drawn = new HashSet<>(2 * SAMPLE_ROWS);
    for (int j = page - SAMPLE_ROWS; j < page; j++) {
      int t = random.nextInt(j + 1);
      drawn.add(drawn.contains(t) ? j : t);
    }
    return drawn.stream().mapToInt(Integer::intValue).sorted().toArray();
  }

  /** Whether the column at {@code pos} of the {@code sample} rows holds two values or more, none twice. */
  private static boolean noRepeat(
      List<? extends StructLike> rows, int[] sample, int pos, Set<Object> seen) {
    seen.clear();
    for (int i : sample) {
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
