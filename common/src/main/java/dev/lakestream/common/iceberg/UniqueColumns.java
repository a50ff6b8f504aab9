package dev.lakestream.common.iceberg;

import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.TableProperties;

/**
 * Writer properties that turn Parquet's dictionary off for the columns whose values are unique in
 * every file the pipeline writes: the key columns (a batch, a compaction's output and an
 * equality-delete file hold each key once) and the source position (each row its own). For such a
 * column a dictionary is only work: Parquet hashes every value into it, finds at the end of the
 * first page that it does not pay, and writes the page again without it. Given to a writer
 * factory, not set on the table: a user's table keeps its properties, and other writers theirs.
 * A column that is not unique after all is still written correctly, only without a dictionary.
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
