package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

/**
 * Which of a table's columns a data file holds. A file written before the table had a column
 * holds none of it: Iceberg reads the column as null there, but the row's value is unknown, not
 * null (a column a source renamed, or filled without a change to log). Compaction keeps files of
 * different columns apart, so that a rewritten row does not take a null it never had.
 */
public final class FileColumns {

  /**
   * Top-level field ids of files whose footers were read, by location (a file never changes): a
   * table whose metrics do not name every column (lists and maps get none in Iceberg 1.12, nor do
   * columns past the first 100) has its small files' footers read once, not at every check.
   */
  private static final Map<String, Set<Integer>> FOOTERS =
      Collections.synchronizedMap(new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Set<Integer>> eldest) {
          return size() > 10_000;
        }
      });

  /** The distinct sets of {@link #FOOTERS}, each kept once. */
  private static final Map<Set<Integer>, Set<Integer>> DISTINCT = new ConcurrentHashMap<>();

  private FileColumns() {}

  /**
   * The field ids of {@code schema}'s top-level columns that {@code file} holds: from its column
   * metrics where they name the column (or one of its fields), else from its Parquet footer.
   */
  public static Set<Integer> held(FileIO io, DataFile file, Schema schema) {
    Set<Integer> held = new LinkedHashSet<>();
    Map<Integer, Long> counts = file.valueCounts();
    boolean footerNeeded = false;
    for (Types.NestedField column : schema.columns()) {
      if (counts != null && counted(counts, column)) {
        held.add(column.fieldId());
      } else {
        footerNeeded = true;
      }
    }
    if (footerNeeded) {
      Set<Integer> inFooter = FOOTERS.get(file.location());
      if (inFooter == null) {
        // One copy of each set: a table's files mostly hold the same columns.
        if (DISTINCT.size() > 1_000) {
          DISTINCT.clear();
        }
        inFooter = DISTINCT.computeIfAbsent(topLevelIds(footer(io, file)), Set::copyOf);
        FOOTERS.put(file.location(), inFooter);
      }
      for (Types.NestedField column : schema.columns()) {
        if (inFooter.contains(column.fieldId())) {
          held.add(column.fieldId());
        }
      }
    }
    return held;
  }

  /** The field ids of a Parquet schema's top-level columns (Iceberg writes each with its id). */
  private static Set<Integer> topLevelIds(MessageType fileSchema) {
    Set<Integer> ids = new HashSet<>();
    for (Type field : fileSchema.getFields()) {
      if (field.getId() != null) {
        ids.add(field.getId().intValue());
      }
    }
    return ids;
  }

  /**
   * What a rewrite of rows of files that hold the columns {@code held} writes: those columns of the
   * table, and ingest's source position (rows keep the positions ingest gave them, so a TRUNCATE
   * still finds them), with the key's identifier ids (which the writers' settings read).
   */
  public static Schema rewriteSchema(Table table, Set<Integer> held) {
    Schema withPositions = SourcePositions.withPosition(table.schema());
    Set<Integer> columns = new HashSet<>(held);
    columns.add(SourcePositions.FIELD.fieldId());
    Schema selected = TypeUtil.select(withPositions, columns);
    Set<Integer> identifiers = new HashSet<>(withPositions.identifierFieldIds());
    identifiers.retainAll(TypeUtil.getProjectedIds(selected));
    return new Schema(selected.columns(), identifiers);
  }

  private static boolean counted(Map<Integer, Long> counts, Types.NestedField column) {
    if (counts.containsKey(column.fieldId())) {
      return true;
    }
    return column.type().isNestedType()
        && TypeUtil.getProjectedIds(column.type()).stream().anyMatch(counts::containsKey);
  }

  private static MessageType footer(FileIO io, DataFile file) {
    try (ParquetFileReader reader = ParquetFileReader.open(
        RowsAtPositions.parquetFile(ContentFiles.input(io, file)),
        ParquetReadOptions.builder().build())) {
      return reader.getFooter().getFileMetaData().getSchema();
    } catch (IOException e) {
      throw new UncheckedIOException("reading the footer of " + file.location(), e);
    }
  }
}
