package dev.lakestream.ingest.toast;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.KeyBounds;
import dev.lakestream.common.iceberg.KeyColumns;
import dev.lakestream.common.iceberg.RowsAtPositions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
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
 * Recently changed keys are found in the newest, smallest files. A {@link Lookup} does this in
 * steps, so that one over a large table can go on over several flush attempts.
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
   * {@code columns} filled in; keys without a row are absent from the result. Reads to the end.
   */
  public static Found lookup(
      Table table, Snapshot snapshot, Collection<Record> keys, Set<String> columns) {
    Lookup lookup = new Lookup(table, snapshot, keys, columns);
    while (!lookup.step(Long.MAX_VALUE)) {
      // reads to the end
    }
    return lookup.found();
  }

  /**
   * A lookup read in steps: each {@link #step} reads whole files, newest first, for as long as its
   * budget allows (at least one), and the next goes on where it stopped, so a lookup over a large
   * table need not end within one call. It reads the files of the snapshot it started on; the keys
   * and columns are fixed at its start.
   */
  public static final class Lookup {
    private final Table table;
    private final long snapshotId;
    private final Collection<Record> keys;
    private final Set<String> columns;
    private final Schema keySchema;
    private final Types.StructType keyType;
    private final InternalRecordWrapper internal;
    private final StructLikeMap<Record> sought;
    private final List<DataFile> files;
    /** The next file to look for keys in. */
    private int nextFile;

    private final Map<DataFile, Map<Long, Record>> positions = new LinkedHashMap<>();
    /** The files whose rows are still to be read, once every file was looked in. */
    private Iterator<Map.Entry<DataFile, Map<Long, Record>>> toRead;

    private final Map<StructLike, Record> rows;
    private final Map<StructLike, Set<String>> unwritten;
    private long bytes;
    private int filesRead;
    private int steps;
    private long spentNanos;
    private boolean done;

    public Lookup(Table table, Snapshot snapshot, Collection<Record> keys, Set<String> columns) {
      this.table = table;
      this.snapshotId = snapshot.snapshotId();
      this.keys = List.copyOf(keys);
      this.columns = Set.copyOf(columns);
      this.keySchema = KeyColumns.keySchema(table);
      this.keyType = keySchema.asStruct();
      this.internal = new InternalRecordWrapper(keyType);
      this.sought = StructLikeMap.create(keyType);
      for (Record key : keys) {
        sought.put(key, key);
      }
      this.files = new ArrayList<>(BranchFiles.liveDataFiles(table, snapshot).values());
      files.sort(Comparator.comparingLong(DataFile::dataSequenceNumber).reversed());
      this.rows = StructLikeMap.create(keyType);
      this.unwritten = StructLikeMap.create(keyType);
    }

    /** Whether this lookup is of these keys and columns in the table of this UUID. */
    public boolean isOf(String tableUuid, Collection<Record> keys, Set<String> columns) {
      return table.uuid().toString().equals(tableUuid)
          && this.keys.equals(List.copyOf(keys))
          && this.columns.equals(columns);
    }

    /** The snapshot it reads. */
    public long snapshotId() {
      return snapshotId;
    }

    /** The steps taken so far. */
    public int steps() {
      return steps;
    }

    /** The time its steps took, in all. */
    public Duration spent() {
      return Duration.ofNanos(spentNanos);
    }

    /**
     * Reads files until the lookup is done or {@code budgetNanos} have passed since the call (one
     * file at least); whether it is done.
     */
    public boolean step(long budgetNanos) {
      long started = System.nanoTime();
      steps++;
      boolean first = true;
      while (!done && (first || System.nanoTime() - started < budgetNanos)) {
        first = !next();
      }
      spentNanos += System.nanoTime() - started;
      return done;
    }

    /** What was found; only once done. */
    public Found found() {
      if (!done) {
        throw new IllegalStateException("the lookup is not done");
      }
      return new Found(rows, filesRead, bytes, unwritten);
    }

    /** One unit of work: a file looked in or read, or the move between; whether it read a file. */
    private boolean next() {
      if (toRead == null) {
        while (nextFile < files.size() && !sought.isEmpty()) {
          DataFile file = files.get(nextFile++);
          if (mayHoldASoughtKey(file)) {
            lookIn(file);
            return true;
          }
        }
        toRead = positions.entrySet().iterator();
        return false;
      }
      if (!toRead.hasNext()) {
        done = true;
        return false;
      }
      Map.Entry<DataFile, Map<Long, Record>> entry = toRead.next();
      Schema projection = table.schema().select(new ArrayList<>(columns));
      RowsAtPositions.Read read = RowsAtPositions.read(
          table.io(), entry.getKey(), projection, new TreeSet<>(entry.getValue().keySet()));
      entry.getValue().forEach((position, key) -> {
        rows.put(key, read.rows().get(position));
        if (!read.absent().isEmpty()) {
          unwritten.put(key, read.absent());
        }
      });
      bytes += read.bytesRead();
      return true;
    }

    private boolean mayHoldASoughtKey(DataFile file) {
      for (Record key : sought.values()) {
        if (KeyBounds.mayContain(file, keyType, internal.copyFor(key))) {
          return true;
        }
      }
      return false;
    }

    /** Reads the key column of {@code file}, noting the positions of the keys still sought. */
    private void lookIn(DataFile file) {
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
  }
}
