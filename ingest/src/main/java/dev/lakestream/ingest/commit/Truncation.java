package dev.lakestream.ingest.commit;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.common.iceberg.FileColumns;
import dev.lakestream.common.iceberg.FileRows;
import dev.lakestream.common.iceberg.KeyColumns;
import dev.lakestream.common.iceberg.SharedDeletes;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.WithoutHadoopDefaults;
import dev.lakestream.ingest.buffer.BatchWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileWriterFactory;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.TypeUtil;

/**
 * A TRUNCATE at source position P on {@code realtime}: every row whose last change came before P is
 * removed, every row changed after it stays, whichever partition of the table's topic carried it.
 * Rows know their position ({@link SourcePositions}, kept in each data file with its bounds), so:
 *
 * <ul>
 *   <li>{@link #plan} (the truncate's own commit): a live data file whose positions are all below P
 *       is removed whole (metadata only); a file whose positions are all above P stays; a file that
 *       straddles P is read (key and position, deletes applied) and the keys of its live rows
 *       before P are deleted by one equality delete. A file whose positions have no bounds (a table
 *       of more than 100 columns, or a file written before positions existed, whose rows count as
 *       before P) is read the same way, and removed whole when none of its live rows is after P.
 *       A key whose row before P is live changed nowhere after P (a later change would have
 *       deleted that row), so the delete takes no row after P.
 *   <li>{@link #trim} (a batch of another partition committed after the truncate, its changes
 *       partly or wholly before P): its rows before P are left out, its data file rewritten without
 *       them when it straddles P. Rows without a position are new and stay.
 * </ul>
 *
 * Only the latest truncate matters: a later one removes everything an earlier one did.
 */
final class Truncation {

  /** What the truncate's commit does: files removed whole, keys deleted from straddling files. */
  record Plan(List<DataFile> remove, List<DeleteFile> deletes, long rowsDeleted) {}

  /** A batch after a truncate: the files to commit instead of its own, and its files to delete once committed. */
  record Trimmed(
      List<DataFile> dataFiles,
      List<DeleteFile> deleteFiles,
      List<String> obsolete,
      long rowsDropped) {}

  private Truncation() {}

  static Plan plan(Table table, Snapshot head, ByteBuffer position, int partitionId) {
    List<DataFile> remove = new ArrayList<>();
    List<DataFile> straddling = new ArrayList<>();
    List<DataFile> unbounded = new ArrayList<>();
    for (DataFile file : BranchFiles.liveDataFiles(table, head).values()) {
      ByteBuffer lower = SourcePositions.lower(file);
      ByteBuffer upper = SourcePositions.upper(file);
      if (lower == null || upper == null) {
        // No bounds: a file of a table of more than 100 columns (Iceberg keeps no bounds past its
        // first 100 columns by default), or one written before positions existed. Its rows are
        // read: those without a position are older than the truncate.
        unbounded.add(file);
      } else if (SourcePositions.compare(upper, position) < 0) {
        remove.add(file);
      } else if (SourcePositions.compare(lower, position) < 0) {
        straddling.add(file);
      }
    }
    if (straddling.isEmpty() && unbounded.isEmpty()) {
      return new Plan(remove, List.of(), 0);
    }
    Schema keySchema = KeyColumns.keySchema(table);
    Schema projection = TypeUtil.join(keySchema, new Schema(SourcePositions.FIELD));
    Map<String, FileScanTask> tasks = new HashMap<>();
    try (CloseableIterable<FileScanTask> planned =
        table.newScan().useSnapshot(head.snapshotId()).planFiles()) {
      planned.forEach(t -> tasks.put(t.file().location(), t));
    } catch (IOException e) {
      throw new UncheckedIOException("planning the truncate of " + table.name(), e);
    }
    List<Record> keys = new ArrayList<>();
    SharedDeletes shared = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
    for (DataFile file : straddling) {
      keys.addAll(
          keysBefore(table, tasks.get(file.location()), projection, keySchema, shared, position)
              .keys());
    }
    for (DataFile file : unbounded) {
      Before before =
          keysBefore(table, tasks.get(file.location()), projection, keySchema, shared, position);
      if (before.anyAfter()) {
        keys.addAll(before.keys());
      } else {
        remove.add(file); // every live row before the truncate: removed whole, as with bounds
      }
    }
    List<DeleteFile> deletes = BatchWriter.write(
            table, table.schema(), List.of(), keys, partitionId, System.nanoTime())
        .deleteFiles();
    return new Plan(remove, deletes, keys.size());
  }

  /** The keys of a file's live rows before the truncate, and whether it has live rows after it. */
  private record Before(List<Record> keys, boolean anyAfter) {}

  private static Before keysBefore(
      Table table,
      FileScanTask task,
      Schema projection,
      Schema keySchema,
      SharedDeletes shared,
      ByteBuffer position) {
    List<Record> keys = new ArrayList<>();
    boolean[] after = {false};
    FileRows.forEach(table, task, projection, shared, row -> {
      ByteBuffer p = (ByteBuffer) row.getField(SourcePositions.NAME);
      if (p == null || SourcePositions.compare(p, position) < 0) {
        Record key = GenericRecord.create(keySchema);
        keySchema.columns().forEach(f -> key.setField(f.name(), row.getField(f.name())));
        keys.add(key);
      } else {
        after[0] = true;
      }
    });
    return new Before(keys, after[0]);
  }

  /**
   * {@code batch} without its changes before {@code position}; null when it needs no trimming. The
   * files it replaces are deleted by the caller once the commit holds (a retry reads them again).
   */
  static Trimmed trim(Table table, FilesWritten batch, ByteBuffer position) {
    if (batch.minPosition() == null
        || SourcePositions.compare(SourcePositions.fromHex(batch.minPosition()), position) > 0) {
      return null; // wholly after the truncate (or from a source without positions: new)
    }
    var specs = table.specs();
    List<String> obsolete = new ArrayList<>();
    batch.dataFiles(specs).forEach(f -> obsolete.add(f.location()));
    batch.deleteFiles(specs).forEach(f -> obsolete.add(f.location()));
    if (batch.maxPosition() != null
        && SourcePositions.compare(SourcePositions.fromHex(batch.maxPosition()), position) < 0) {
      return new Trimmed(List.of(), List.of(), obsolete, batch.dataRows());
    }
    List<DataFile> kept = new ArrayList<>();
    long dropped = 0;
    for (DataFile file : batch.dataFiles(specs)) {
      Rewritten r = rewriteFrom(table, file, position);
      dropped += r.dropped;
      if (r.file != null) {
        kept.add(r.file);
      }
    }
    // The batch's equality deletes stay: they only remove older rows, all of them before the
    // truncate.
    return new Trimmed(
        kept,
        batch.deleteFiles(specs),
        batch.dataFiles(specs).stream().map(DataFile::location).toList(),
        dropped);
  }

  private record Rewritten(DataFile file, long dropped) {}

  /** The data file with only its rows at or after {@code position} (or without one); null when none is left. */
  private static Rewritten rewriteFrom(Table table, DataFile file, ByteBuffer position) {
    // With the columns the file holds: one the table gained since it was written has no value in
    // it, which is not a null (FileColumns).
    Schema schema =
        FileColumns.rewriteSchema(table, FileColumns.held(table.io(), file, table.schema()));
    FileWriterFactory<Record> writers = WithoutHadoopDefaults.dataWriters(table, schema);
    OutputFileFactory files = OutputFileFactory.builderFor(table, 0, System.nanoTime())
        .format(FileFormat.PARQUET)
        .operationId("truncate-" + UUID.randomUUID())
        .build();
    DataWriter<Record> writer = writers.newDataWriter(files.newOutputFile(), table.spec(), null);
    long dropped = 0;
    try (writer;
        CloseableIterable<Record> rows = Parquet.read(ContentFiles.input(table.io(), file))
            .project(schema)
            .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(schema, fileSchema))
            .build()) {
      for (Record row : rows) {
        ByteBuffer p = (ByteBuffer) row.getField(SourcePositions.NAME);
        if (p == null || SourcePositions.compare(p, position) >= 0) {
          writer.write(row);
        } else {
          dropped++;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "trimming " + file.location() + " of " + table.name() + " to a truncate", e);
    }
    DataFile written = writer.toDataFile();
    if (written.recordCount() == 0) {
      table.io().deleteFile(written.location());
      return new Rewritten(null, dropped);
    }
    return new Rewritten(written, dropped);
  }
}
