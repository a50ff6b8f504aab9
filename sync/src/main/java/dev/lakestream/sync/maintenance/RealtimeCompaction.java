package dev.lakestream.sync.maintenance;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SnapshotRows;
import dev.lakestream.sync.diff.BranchFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;

/**
 * A full compaction of a table's {@code realtime} branch, in two steps so ingest keeps committing
 * in between: {@link #prepare} reads every live row at the branch's head (equality deletes applied)
 * into one new data file; {@link #commit} replaces the old data files with it, keeping the starting
 * snapshot's sequence number and validating from it. Equality deletes that land after the start
 * have a higher sequence number, so they still apply to the new file, and ingest never conflicts
 * with the rewrite. The equality deletes live at the start can apply to no data file afterwards
 * and are dropped in the same commit. Sync mirrors the rewrite on main like any other change.
 */
public final class RealtimeCompaction {

  private final Table table;
  private final Snapshot start;
  private final Set<DataFile> rewritten;
  private final Set<DeleteFile> dropped;
  private final DataFile compacted;
  private final long rows;

  private RealtimeCompaction(Table table, Snapshot start, Set<DataFile> rewritten, Set<DeleteFile> dropped,
      DataFile compacted, long rows) {
    this.table = table;
    this.start = start;
    this.rewritten = rewritten;
    this.dropped = dropped;
    this.compacted = compacted;
    this.rows = rows;
  }

  /** Writes the compacted file from realtime's head; commits nothing. */
  public static RealtimeCompaction prepare(Table table) {
    table.refresh();
    Snapshot start = table.snapshot(Branches.REALTIME);
    Set<DataFile> data = new HashSet<>(BranchFiles.liveDataFiles(table, start).values());
    Set<DeleteFile> equalityDeletes = new HashSet<>();
    for (DeleteFile f : BranchFiles.liveDeleteFiles(table, start).values()) {
      if (f.content() == FileContent.EQUALITY_DELETES) {
        equalityDeletes.add(f);
      }
    }
    Schema schema = table.schema();
    GenericFileWriterFactory writers = new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET).dataSchema(schema).build();
    OutputFileFactory files = OutputFileFactory.builderFor(table, 0, start.snapshotId())
        .format(FileFormat.PARQUET).operationId("compaction-" + UUID.randomUUID()).build();
    long[] rows = {0};
    DataWriter<Record> writer = writers.newDataWriter(files.newOutputFile(), table.spec(), null);
    try (writer) {
      SnapshotRows.forEach(table, start.snapshotId(), r -> {
        writer.write(r);
        rows[0]++;
      });
    } catch (IOException e) {
      throw new UncheckedIOException("compacting " + table.name(), e);
    }
    return new RealtimeCompaction(table, start, data, equalityDeletes, writer.toDataFile(), rows[0]);
  }

  /** Commits the rewrite on realtime; returns the new snapshot. */
  public Snapshot commit() {
    table.newRewrite()
        .toBranch(Branches.REALTIME)
        .validateFromSnapshot(start.snapshotId())
        .dataSequenceNumber(start.sequenceNumber())
        .rewriteFiles(rewritten, dropped, Set.of(compacted), Set.of())
        .commit();
    return table.snapshot(Branches.REALTIME);
  }

  public int dataFilesIn() {
    return rewritten.size();
  }

  public int equalityDeletesDropped() {
    return dropped.size();
  }

  public long rows() {
    return rows;
  }
}
