package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Reads every row of a snapshot, deletes applied, in the table's own columns: a reader appends the
 * columns it needed to apply deletes ({@code _pos} for deletion vectors), which are not part of the
 * row.
 *
 * <p>A snapshot of Parquet files is read file by file, newest first, with its delete files read
 * through one {@link SharedDeletes}: Iceberg's generic reader reads every equality-delete file that
 * applies to a data file again for each data file, so a realtime snapshot of {@code n} batches (a
 * data file and an equality-delete file each) cost about n²/2 delete-file reads. Other formats are
 * read with Iceberg's generic reader, and so is a snapshot of more than {@link #MAX_SORTED_FILES}
 * data files.
 */
public final class SnapshotRows {

  /**
   * Past this many data files a snapshot is read with Iceberg's reader, which plans one file at a
   * time: the files are sorted in memory, and each lists the delete files that apply to it (for
   * random keys, every newer one: about n²/2 references in all).
   */
  static final int MAX_SORTED_FILES = 4_096;

  private SnapshotRows() {}

  public static void forEach(Table table, long snapshotId, Consumer<Record> action) {
    forEach(
        table,
        snapshotId,
        new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes()),
        MAX_SORTED_FILES,
        action);
  }

  /**
   * As {@link #forEach(Table, long, Consumer)}, with the delete files read through {@code deletes}
   * and Iceberg's reader past {@code maxSortedFiles} data files.
   */
  static void forEach(
      Table table,
      long snapshotId,
      SharedDeletes deletes,
      int maxSortedFiles,
      Consumer<Record> action) {
    Schema schema = table.schema();
    Consumer<Record> inColumns =
        r -> action.accept(r.size() == schema.columns().size() ? r : FileRows.inColumns(schema, r));
    TableScan scan = table.newScan().useSnapshot(snapshotId);
    List<FileScanTask> tasks = new ArrayList<>();
    boolean sortable = true;
    try (CloseableIterable<FileScanTask> planned = scan.planFiles()) {
      for (FileScanTask task : planned) {
        if (task.file().format() != FileFormat.PARQUET || tasks.size() == maxSortedFiles) {
          sortable = false;
          break;
        }
        tasks.add(task);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("planning snapshot " + snapshotId + " of " + table.name(), e);
    }
    if (!sortable) {
      tasks.clear();
      try (CloseableIterable<Record> records =
          IcebergGenerics.read(table).useSnapshot(snapshotId).build()) {
        records.forEach(inColumns);
      } catch (IOException e) {
        throw new UncheckedIOException("reading snapshot " + snapshotId + " of " + table.name(), e);
      }
      return;
    }
    // Newest first: the equality deletes of one file's set are then the last file's and more.
    tasks.sort(Comparator.comparingLong(SnapshotRows::sequence).reversed());
    deletes.nextDataFile(Long.MAX_VALUE); // no set of an earlier read applies to this one
    for (FileScanTask task : tasks) {
      deletes.nextDataFile(sequence(task));
      // In the snapshot's schema, as Iceberg's reader reads a snapshot.
      FileRows.forEach(table, task, scan.schema(), deletes, inColumns);
    }
  }

  /** The data sequence number of {@code task}'s file (none in a format 1 table: 0). */
  private static long sequence(FileScanTask task) {
    Long sequence = task.file().dataSequenceNumber();
    return sequence == null ? 0 : sequence;
  }
}
