package dev.lakestream.ingest.toast;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.KeyBounds;
import dev.lakestream.common.iceberg.KeyColumns;
import dev.lakestream.common.iceberg.RowsAtPositions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.StructLikeMap;

/**
 * Reads the current rows of some keys from a branch of a pipeline table, for the columns asked for.
 *
 * <p>Every change of a key writes the key into the batch's equality-delete file and, unless it is
 * a delete, the new row into the batch's data file; compaction writes only live rows. So the
 * current row of a key that exists is its row in the live data file with the highest data sequence
 * number that holds the key: no delete file needs reading. The lookup visits live data files from
 * the newest down, skips those whose key bounds exclude every key still sought, reads only the key
 * column of the others to find the keys' positions, and stops once every key is found; then it
 * reads the asked-for columns of just the rows found, page by page ({@link RowsAtPositions}).
 * Recently changed keys are found in the newest, smallest files.
 *
 * <p>The caveat is the premise: the key must exist on the branch. A key deleted there has no
 * current row, but the lookup would return its last one; callers look up keys the source says
 * exist (the target of an update).
 */
public final class PreviousRows {

  /**
   * The rows found by key, and what finding them cost.
   *
   * @param unwritten by key, the asked-for columns the file holding its row does not have (it was
   *     written before the table had them: the row's value there is unknown, not null); keys whose
   *     file has them all are absent
   */
  public record Found(
      Map<StructLike, Record> rows,
      int filesRead,
      long bytesRead,
      Map<StructLike, Set<String>> unwritten) {

    /** Nothing found, at no cost. */
    public static Found none() {
      return new Found(Map.of(), 0, 0, Map.of());
    }
  }

  private PreviousRows() {}

  /**
   * The current rows on {@code snapshot} of {@code keys} (records of the table's key columns), with
   * {@code columns} filled in; keys without a row are absent from the result.
   */
  public static Found lookup(
      Table table, Snapshot snapshot, Collection<Record> keys, Set<String> columns) {
    Schema keySchema = KeyColumns.keySchema(table);
    Types.StructType keyType = keySchema.asStruct();
    InternalRecordWrapper internal = new InternalRecordWrapper(keyType);
    StructLikeMap<Record> sought = StructLikeMap.create(keyType);
    for (Record key : keys) {
      sought.put(key, key);
    }
    List<DataFile> files =
        new ArrayList<>(BranchFiles.liveDataFiles(table, snapshot).values());
    files.sort(Comparator.comparingLong(DataFile::dataSequenceNumber).reversed());

    Map<DataFile, Map<Long, Record>> positions = new LinkedHashMap<>();
    long bytes = 0;
    int filesRead = 0;
    for (DataFile file : files) {
      if (sought.isEmpty()) {
        break;
      }
      boolean candidate = false;
      for (Record key : sought.values()) {
        if (KeyBounds.mayContain(file, keyType, internal.copyFor(key))) {
          candidate = true;
          break;
        }
      }
      if (!candidate) {
        continue;
      }
      Map<Long, Record> found = new HashMap<>();
      long[] position = {0};
      KeyColumns.forEach(table, file, keySchema, key -> {
        Record wanted = sought.get(key);
        if (wanted != null) {
          found.put(position[0], wanted);
        }
        position[0]++;
      });
      filesRead++;
      bytes += KeyColumns.bytes(file, keySchema);
      found.values().forEach(sought::remove);
      if (!found.isEmpty()) {
        positions.put(file, found);
      }
    }

    Schema projection = table.schema().select(new ArrayList<>(columns));
    Map<StructLike, Record> rows = StructLikeMap.create(keyType);
    Map<StructLike, Set<String>> unwritten = StructLikeMap.create(keyType);
    for (Map.Entry<DataFile, Map<Long, Record>> entry : positions.entrySet()) {
      RowsAtPositions.Read read = RowsAtPositions.read(
          table.io(), entry.getKey(), projection, new TreeSet<>(entry.getValue().keySet()));
      entry.getValue().forEach((position, key) -> {
        rows.put(key, read.rows().get(position));
        if (!read.absent().isEmpty()) {
          unwritten.put(key, read.absent());
        }
      });
      bytes += read.bytesRead();
    }
    return new Found(rows, filesRead, bytes, unwritten);
  }
}
