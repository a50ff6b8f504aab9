package dev.lakestream.reader;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.common.iceberg.SummaryKeys;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongPredicate;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A table's {@code main} branch read as versions: {@link #version()}, {@link #schema}, {@link
 * #snapshot} (the rows at a version) and {@link #delta} (the rows that differ between two versions,
 * each with a weight, +1 appeared, -1 went away), computed from file-level changes.
 *
 * <p>A delta reads only what changed: the rows of data files added in the range, minus what their
 * deletion vector deletes at the newer version (+1); the rows of data files removed in the range
 * (a mirrored compaction), minus what was deleted at the older version (-1); and in data files
 * live at both versions, the positions newly set in their deletion vector (-1). Rows on both sides
 * with equal values cancel: a compaction moves rows without changing them and so nets to zero. When
 * the snapshot summaries of the range show no deletion at all, the rows of the added files are
 * streamed as they are (the append-only fast path).
 *
 * <p>Consolidation holds the rows of one bucket in memory; when the rows to consolidate exceed the
 * budget in rows ({@link #withMemoryBudget}), or the rows held pass the budget in bytes ({@link
 * #withMemoryBudgetBytes}: wide rows), the files are read once and each row is spilled to a local
 * file by the hash of its values ({@link SpilledBuckets}), and the buckets are consolidated one at a
 * time, so memory stays bounded whatever the delta's size and every file is read once.
 */
public final class MainVersions {

  private static final Logger LOG = LoggerFactory.getLogger(MainVersions.class);
  private static final long DEFAULT_BUDGET_ROWS = 500_000;
  /** The default budget in bytes: a quarter of the heap the JVM may take. */
  private static final long DEFAULT_BUDGET_BYTES = Runtime.getRuntime().maxMemory() / 4;
  /**
   * Heap a row held for consolidation takes besides its identity text's length: the map's entry,
   * the identity string's and the row's objects. A row's own values are counted as twice its
   * identity's length (the text, and the values the row holds).
   */
  private static final long HELD_ROW_OVERHEAD = 200;

  private static final long PROGRESS_EVERY_MS = 10_000;
  /** Spill files open at once while a delta over the budget is split (about 90 kB of heap each). */
  private static final int MAX_OPEN_BUCKETS = 128;
  /** Levels of splitting before a bucket is consolidated in memory whatever its size. */
  private static final int MAX_LEVELS = 4;

  private final Table table;
  private final long budgetRows;
  private final long budgetBytes;
  private final AtomicLong appendOnlyDeltas = new AtomicLong();
  private final AtomicLong consolidatedDeltas = new AtomicLong();

  private MainVersions(Table table, long budgetRows, long budgetBytes) {
    this.table = table;
    this.budgetRows = budgetRows;
    this.budgetBytes = budgetBytes;
  }

  public static MainVersions of(Table table) {
    return new MainVersions(table, DEFAULT_BUDGET_ROWS, DEFAULT_BUDGET_BYTES);
  }

  /** At most this many rows are held in memory to consolidate a delta (default 500,000). */
  public MainVersions withMemoryBudget(long rows) {
    if (rows < 1) {
      throw new IllegalArgumentException("the memory budget must be at least one row");
    }
    return new MainVersions(table, rows, budgetBytes);
  }

  /**
   * The rows held in memory to consolidate a delta take about this many bytes at most (default: a
   * quarter of the JVM's maximum heap); past it, the rest of the delta is spilled to local files.
   * A row's size is estimated from its values' text: wide rows (large text, JSON, binary) pass this
   * budget long before the budget in rows.
   */
  public MainVersions withMemoryBudgetBytes(long bytes) {
    if (bytes < 1) {
      throw new IllegalArgumentException("the memory budget must be at least one byte");
    }
    return new MainVersions(table, budgetRows, bytes);
  }

  /** The current version: main's head. */
  public Version version() {
    table.refresh();
    Snapshot head = table.snapshot(Branches.MAIN);
    if (head == null) {
      throw new IllegalStateException("table " + table.name() + " has no main branch");
    }
    return version(head);
  }

  /** The version {@code snapshotId}, which must be on main. */
  public Version version(long snapshotId) {
    return version(onMain(snapshotId));
  }

  /** The schema of the rows at {@code version}. */
  public Schema schema(long version) {
    return schemaOf(onMain(version));
  }

  /** Calls {@code rows} with every row at {@code version}, in its schema; returns how many. */
  public long snapshot(long version, Consumer<Record> rows) {
    Snapshot s = onMain(version);
    Schema schema = schemaOf(s);
    Map<String, DeleteFile> dvs = BranchFiles.deletionVectors(table, s);
    BaseDeleteLoader loader = loader();
    Progress progress = new Progress("snapshot " + version);
    for (DataFile file : BranchFiles.liveDataFiles(table, s).values()) {
      PositionDeleteIndex deleted = index(loader, dvs.get(file.location()), file);
      DataFileRows.read(
          table, schema, file, pos -> deleted == null || !deleted.isDeleted(pos), row -> {
            rows.accept(row);
            progress.row();
          });
    }
    return progress.rows;
  }

  /**
   * The rows that differ between {@code from} and {@code to}, consolidated (no row with both
   * weights), in the schema of {@code to}. {@code from} must be {@code to} or one of its ancestors
   * on main.
   *
   * <p>Rows go to {@code sink} as they are read: when this throws (a data file that cannot be read,
   * a snapshot expired meanwhile), the sink may have had part of the delta. Apply a delta as one
   * unit, committed after this returns, or a retry applies those rows twice.
   */
  public DeltaStats delta(long from, long to, DeltaSink sink) {
    long started = System.nanoTime();
    Snapshot newer = onMain(to);
    List<Snapshot> range = range(from, newer);
    Schema schema = schemaOf(newer);
    if (range.isEmpty()) {
      return new DeltaStats(from, to, 0, true, 0, 0, 0, 0, 0, elapsedMs(started));
    }
    if (range.stream().noneMatch(MainVersions::deletes)) {
      appendOnlyDeltas.incrementAndGet();
      Progress progress = new Progress("delta " + from + ".." + to);
      int files = 0;
      for (Snapshot s : range) {
        for (DataFile file :
            SnapshotChanges.builderFor(table).snapshot(s).build().addedDataFiles()) {
          files++;
          DataFileRows.read(table, schema, file, pos -> true, row -> {
            sink.accept(row, 1);
            progress.row();
          });
        }
      }
      return new DeltaStats(
          from, to, range.size(), true, progress.rows, 0, 0, files, 1, elapsedMs(started));
    }
    consolidatedDeltas.incrementAndGet();
    // range() checked that from is on main and an ancestor of to.
    return consolidated(from, to, table.snapshot(from), newer, range.size(), schema, sink, started);
  }

  /** Deltas served by the append-only fast path since this object was made. */
  public long appendOnlyDeltas() {
    return appendOnlyDeltas.get();
  }

  /** Deltas that were consolidated since this object was made. */
  public long consolidatedDeltas() {
    return consolidatedDeltas.get();
  }

  private DeltaStats consolidated(
      long from,
      long to,
      Snapshot older,
      Snapshot newer,
      int snapshots,
      Schema schema,
      DeltaSink sink,
      long started) {
    Map<String, DataFile> before = BranchFiles.liveDataFiles(table, older);
    Map<String, DataFile> after = BranchFiles.liveDataFiles(table, newer);
    Map<String, DeleteFile> dvsBefore = BranchFiles.deletionVectors(table, older);
    Map<String, DeleteFile> dvsAfter = BranchFiles.deletionVectors(table, newer);
    BaseDeleteLoader loader = loader();

    // Each side: the files to read and which of their positions count.
    List<Part> parts = new ArrayList<>();
    long estimate = 0;
    for (DataFile f : after.values()) {
      DeleteFile dvAfter = dvsAfter.get(f.location());
      if (!before.containsKey(f.location())) {
        PositionDeleteIndex deletedAfter = index(loader, dvAfter, f);
        parts.add(new Part(f, 1, pos -> deletedAfter == null || !deletedAfter.isDeleted(pos)));
        estimate += f.recordCount();
      } else {
        DeleteFile dvBefore = dvsBefore.get(f.location());
        if (dvAfter != null
            && (dvBefore == null
                || !dvBefore.location().equals(dvAfter.location())
                || !Objects.equals(dvBefore.contentOffset(), dvAfter.contentOffset()))) {
          // Only a file whose vector changed is read: its newly deleted rows go away.
          PositionDeleteIndex deletedAfter = index(loader, dvAfter, f);
          PositionDeleteIndex deletedBefore = index(loader, dvBefore, f);
          parts.add(new Part(
              f,
              -1,
              pos -> deletedAfter.isDeleted(pos)
                  && (deletedBefore == null || !deletedBefore.isDeleted(pos))));
          estimate += dvAfter.recordCount() - (dvBefore == null ? 0 : dvBefore.recordCount());
        }
      }
    }
    for (DataFile f : before.values()) {
      if (!after.containsKey(f.location())) {
        PositionDeleteIndex deletedBefore = index(loader, dvsBefore.get(f.location()), f);
        parts.add(new Part(f, -1, pos -> deletedBefore == null || !deletedBefore.isDeleted(pos)));
        estimate += f.recordCount();
      }
    }
    boolean bothSides =
        parts.stream().anyMatch(p -> p.weight > 0) && parts.stream().anyMatch(p -> p.weight < 0);
    Progress progress = new Progress("delta " + from + ".." + to);
    long[] counts = new long[3]; // added, removed, cancelled
    int[] buckets = {0};
    Types.StructType type = schema.asStruct();
    if (!bothSides) {
      // One side only: nothing can cancel, every row is emitted as it is read.
      for (Part part : parts) {
        DataFileRows.read(table, schema, part.file, part.keep, row -> {
          progress.row();
          sink.accept(row, part.weight);
          counts[part.weight > 0 ? 0 : 1]++;
        });
      }
      buckets[0] = 1;
    } else {
      consolidate(
          entries -> {
            for (Part part : parts) {
              DataFileRows.read(table, schema, part.file, part.keep, row -> {
                progress.row();
                entries.accept(part.weight, RowJson.of(type, row), row);
              });
            }
          },
          estimate,
          0,
          schema,
          sink,
          counts,
          buckets);
      if (buckets[0] > 1) {
        LOG.info(
            "Delta {}..{} of {}: {} rows to consolidate, over the memory budget ({} rows, {} bytes):"
                + " spilled to local files by hash and consolidated in {} buckets, one at a time",
            from,
            to,
            table.name(),
            estimate,
            budgetRows,
            budgetBytes,
            buckets[0]);
      }
    }
    return new DeltaStats(
        from,
        to,
        snapshots,
        false,
        counts[0],
        counts[1],
        counts[2],
        parts.size(),
        buckets[0],
        elapsedMs(started));
  }

  /** Rows given to an {@link EntryConsumer}: each with its weight and identity. */
  private interface EntrySource {
    void forEach(EntryConsumer entries);
  }

  private interface EntryConsumer {
    void accept(int weight, String identity, Record row);
  }

  /**
   * Consolidates the rows of {@code source} (about {@code rows} of them): in memory when they fit
   * the budget; otherwise spilled by the hash of their identity to at most {@link
   * #MAX_OPEN_BUCKETS} local files, each then consolidated the same way (split again, with a hash
   * of another seed, when one still holds more than the budget). Rows taken in memory that pass the
   * budget in bytes as they are read are spilled then, with the rest. Each row is read from its data
   * file once, and written and read back once per level.
   */
  private void consolidate(
      EntrySource source,
      long rows,
      int level,
      Schema schema,
      DeltaSink sink,
      long[] counts,
      int[] buckets) {
    try (Held held =
        new Held(schema, rows, level, level >= MAX_LEVELS ? Long.MAX_VALUE : budgetBytes)) {
      if (rows > budgetRows && level < MAX_LEVELS) {
        held.spillTo((int) Math.min(MAX_OPEN_BUCKETS, (rows + budgetRows - 1) / budgetRows));
      }
      source.forEach(held);
      if (held.spilled == null) {
        emit(held.rows, sink, counts);
        buckets[0]++;
      } else {
        counts[2] += held.cancelledBeforeSpill;
        consolidateBuckets(held.spilled, held.perBucket, level, schema, sink, counts, buckets);
      }
    }
  }

  /** Consolidates each bucket of {@code spilled} in turn, one level down. */
  private void consolidateBuckets(
      SpilledBuckets spilled,
      long[] perBucket,
      int level,
      Schema schema,
      DeltaSink sink,
      long[] counts,
      int[] buckets) {
    spilled.forEachBucket((b, entries) -> consolidate(
        inner -> {
          for (SpilledBuckets.Entry e : entries) {
            inner.accept(e.weight(), e.identity(), e.row());
          }
        },
        perBucket[b],
        level + 1,
        schema,
        sink,
        counts,
        buckets));
  }

  /**
   * The rows of one consolidation: held in memory while they fit the budget in bytes. Once they
   * pass it, what is held goes to spill files by bucket (each identity once, with its weight so far)
   * and so does every row after it: the rows are read from their files once either way. Rows known
   * to be over the budget in rows are spilled from the first ({@link #spillTo}).
   */
  private static final class Held implements EntryConsumer, AutoCloseable {
    final Map<String, Weighted> rows = new HashMap<>();
    private final Schema schema;
    private final long expectedRows;
    private final int level;
    private final long budgetBytes;
    private long heldBytes;
    private long seen;
    SpilledBuckets spilled;
    long[] perBucket;
    /** Rows that cancelled among those held before they were spilled. */
    long cancelledBeforeSpill;

    Held(Schema schema, long expectedRows, int level, long budgetBytes) {
      this.schema = schema;
      this.expectedRows = expectedRows;
      this.level = level;
      this.budgetBytes = budgetBytes;
    }

    @Override
    public void accept(int weight, String identity, Record row) {
      seen++;
      if (spilled != null) {
        spill(weight, identity, row);
        return;
      }
      Weighted w = rows.get(identity);
      if (w == null) {
        w = new Weighted(row);
        rows.put(identity, w);
        heldBytes += 3L * identity.length() + HELD_ROW_OVERHEAD;
      }
      w.add(weight);
      if (heldBytes > budgetBytes) {
        spillHeld();
      }
    }

    /**
     * Opens buckets for what the rows of this source would take in all (the bytes held so far,
     * scaled by the rows expected), twice over, and moves the held rows into them.
     */
    private void spillHeld() {
      double projected = (double) heldBytes * Math.max(expectedRows, seen) / seen;
      spillTo(
          (int) Math.max(2, Math.min(MAX_OPEN_BUCKETS, Math.ceil(2 * projected / budgetBytes))));
    }

    /** Opens {@code n} spill buckets and moves what is held into them. */
    void spillTo(int n) {
      spilled = new SpilledBuckets(schema, n);
      perBucket = new long[n];
      rows.forEach((identity, w) -> {
        cancelledBeforeSpill += w.seen - Math.abs(w.weight);
        if (w.weight != 0) {
          spill(w.weight, identity, w.row);
        }
      });
      rows.clear();
    }

    private void spill(int weight, String identity, Record row) {
      int b = bucket(identity, level, perBucket.length);
      perBucket[b] += Math.abs(weight);
      spilled.add(b, weight, identity, row);
    }

    @Override
    public void close() {
      if (spilled != null) {
        spilled.close();
      }
    }
  }

  /**
   * The bucket of a row's identity at a level of splitting: the string's hash at the first, a
   * 64-bit FNV-1a hash seeded by the level below it (rows one level put together must spread).
   */
  static int bucket(String identity, int level, int buckets) {
    if (level == 0) {
      return Math.floorMod(identity.hashCode(), buckets);
    }
    long h = 0xcbf29ce484222325L ^ (level * 0x9E3779B97F4A7C15L);
    for (int i = 0; i < identity.length(); i++) {
      h ^= identity.charAt(i);
      h *= 0x100000001b3L;
    }
    return (int) Math.floorMod(h ^ (h >>> 32), (long) buckets);
  }

  /** Emits each row as often as its net weight says; counts what was added, removed, cancelled. */
  private static void emit(Map<String, Weighted> rows, DeltaSink sink, long[] counts) {
    for (Weighted w : rows.values()) {
      int emit = Math.abs(w.weight);
      for (int i = 0; i < emit; i++) {
        sink.accept(w.row, Integer.signum(w.weight));
      }
      counts[w.weight > 0 ? 0 : 1] += emit;
      counts[2] += w.seen - emit;
    }
  }

  private record Part(DataFile file, int weight, LongPredicate keep) {}

  private static final class Weighted {
    final Record row;
    int weight;
    int seen;

    Weighted(Record row) {
      this.row = row;
    }

    /** Adds a row of weight +1 or -1, or an entry of several rows (spilled consolidated). */
    void add(int rowWeight) {
      weight += rowWeight;
      seen += Math.max(1, Math.abs(rowWeight));
    }
  }

  /** Whether a main snapshot may have deleted rows, from its summary (the standard keys and this pipeline's). */
  static boolean deletes(Snapshot s) {
    if (DataOperations.APPEND.equals(s.operation())) {
      return false;
    }
    Map<String, String> summary = s.summary();
    for (String key : List.of(
        SnapshotSummary.DELETED_FILES_PROP,
        SnapshotSummary.ADDED_DELETE_FILES_PROP,
        SnapshotSummary.ADDED_POS_DELETES_PROP,
        SnapshotSummary.ADDED_EQ_DELETES_PROP,
        SnapshotSummary.DELETED_RECORDS_PROP,
        "added-dvs",
        SummaryKeys.DVS_ADDED,
        SummaryKeys.DATA_FILES_REMOVED)) {
      String value = summary.get(key);
      if (value != null && Long.parseLong(value) > 0) {
        return true;
      }
    }
    // Writers fill in the deletion counts when they are not zero; a summary without the standard
    // totals comes from a writer that does not, and is taken to have deleted something.
    return !summary.containsKey(SnapshotSummary.TOTAL_DATA_FILES_PROP);
  }

  /** The snapshots after {@code from} up to {@code to}, oldest first; {@code from} must be an ancestor of {@code to}. */
  private List<Snapshot> range(long from, Snapshot to) {
    onMain(from);
    List<Snapshot> range = new ArrayList<>();
    for (Snapshot s = to; s != null; s = BranchFiles.parent(table, s)) {
      if (s.snapshotId() == from) {
        Collections.reverse(range);
        return range;
      }
      range.add(s);
    }
    throw new IllegalArgumentException(
        "table " + table.name() + ": version " + from + " is not an ancestor of version "
            + to.snapshotId() + " on main (or the snapshots between them have expired)");
  }

  private Snapshot onMain(long snapshotId) {
    table.refresh();
    Snapshot s = table.snapshot(snapshotId);
    if (s == null) {
      throw new IllegalArgumentException("table " + table.name() + ": no version " + snapshotId
          + " (not a snapshot of the table, or expired)");
    }
    for (Snapshot a = table.snapshot(Branches.MAIN); a != null; a = BranchFiles.parent(table, a)) {
      if (a.snapshotId() == snapshotId) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "table " + table.name() + ": snapshot " + snapshotId + " is not a version of main");
  }

  private Version version(Snapshot s) {
    String ts = s.summary().get(SummaryKeys.MAX_SOURCE_TS_MS);
    return new Version(
        s.snapshotId(),
        s.sequenceNumber(),
        s.timestampMillis(),
        s.schemaId() == null ? table.schema().schemaId() : s.schemaId(),
        ts == null ? -1 : Long.parseLong(ts));
  }

  private Schema schemaOf(Snapshot s) {
    Schema schema = s.schemaId() == null ? null : table.schemas().get(s.schemaId());
    return schema != null ? schema : table.schema();
  }

  private BaseDeleteLoader loader() {
    return ContentFiles.deleteLoader(table.io());
  }

  private static PositionDeleteIndex index(BaseDeleteLoader loader, DeleteFile dv, DataFile file) {
    return dv == null ? null : loader.loadPositionDeletes(List.of(dv), file.location());
  }

  private static long elapsedMs(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1_000_000;
  }

  /** Logs rows read and the rate every 10 s. */
  private final class Progress {
    private final String what;
    private final long startedMs = System.currentTimeMillis();
    private long lastLogMs = startedMs;
    long rows;

    Progress(String what) {
      this.what = what;
    }

    void row() {
      rows++;
      if ((rows & 0xFFF) == 0) {
        long now = System.currentTimeMillis();
        if (now - lastLogMs >= PROGRESS_EVERY_MS) {
          lastLogMs = now;
          LOG.info(
              "{} of {}: {} rows read, {} rows/s",
              what,
              table.name(),
              rows,
              rows * 1000 / Math.max(1, now - startedMs));
        }
      }
    }
  }
}
