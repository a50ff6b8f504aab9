package dev.lakestream.common.iceberg;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.StructLikeSet;

/**
 * Delete files read once for many data files of one snapshot. Iceberg's generic reader loads every
 * delete file that applies to a data file again for each data file: a compaction of {@code n}
 * small files of realtime, each followed by its batch's equality-delete file, reads about n²/2
 * delete files. This loader keeps what it read (the rows of an equality-delete file, the positions
 * of a position-delete file), keyed by the delete file's location, up to {@code budgetBytes} of
 * heap (ten times Iceberg's estimate of the values); past it, a file is read as Iceberg would,
 * every time. Deletion vectors Iceberg reads on its own, uncached, so several in one Puffin file
 * never share a key. Delete files never change once written, so an entry is never stale; use one
 * instance per piece of work (a compaction) and let it go with it.
 *
 * <p>Iceberg also merges the deleted keys of all the delete files that apply to a data file into a
 * new set for each data file: quadratic again, in keys (benchmark 9: 86 s against 5 s for a
 * thousand small files of a thousand keys). A reader that says each data file's sequence number
 * before it reads it ({@link #nextDataFile}), in descending order and one file at a time on one
 * thread, gets one set that grows instead: every equality delete that applied to a newer file applies to an older
 * one too (its sequence number is higher still), so the next file's set is the last one's plus the
 * delete files new to it. A delete file Iceberg left out of a data file's list by its key bounds is
 * kept in the set: its keys apply by sequence number and, by those bounds, match no row of the file.
 * Used in another order or from another thread, or for deletes of a partition, the sets are made
 * per data file, as Iceberg does. The growing set lives as long as this loader and holds the keys of
 * every equality delete newer than the oldest file read, about what Iceberg's set for that oldest
 * file holds; it is not counted in the budget.
 */
public final class SharedDeletes extends BaseDeleteLoader {

  /**
   * Iceberg estimates a delete file's rows by their values alone (8 bytes for a long key); a kept
   * row costs about ten times that on the heap (the record, its array, the boxed value, a wrapper).
   */
  private static final long HEAP_PER_ESTIMATED_BYTE = 10;

  private final Map<String, Object> loaded = new ConcurrentHashMap<>();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong reads = new AtomicLong();
  private final long budgetBytes;
  private final AtomicLong keysMerged = new AtomicLong();

  /** The thread that said {@link #nextDataFile}, the only one the growing sets serve. */
  private Thread reader;
  /** The sequence number of the data file being read; {@link Long#MIN_VALUE} when none was said. */
  private long reading = Long.MIN_VALUE;
  /** A growing set of deleted keys per key type (the projection's struct). */
  private final Map<String, Growing> growing = new HashMap<>();

  /** The keys of the delete files in {@code members}, each of a sequence number above {@code lowest}. */
  private static final class Growing {
    final StructLikeSet keys;
    final Set<String> members = new HashSet<>();
    long lowest = Long.MAX_VALUE;

    Growing(Schema projection) {
      this.keys = StructLikeSet.create(projection.asStruct());
    }
  }

  /**
   * The same loader (its cache, its budget) reading the equality-delete files of one call on
   * Iceberg's delete worker pool: for calls that read more than one file from storage. This one
   * reads on the caller's thread, as {@link ContentFiles#deleteLoader} does and for its reason:
   * Iceberg waits for its pool by polling every 10 ms, and most calls read one file or none (the
   * growing sets read one file at a time, and a file read before is kept). Position deletes are
   * read on the caller's thread: a table of format v3 has one deletion vector per data file.
   */
  private final BaseDeleteLoader pooled;

  /** Reads delete files with {@code io}, keeping up to {@code budgetBytes} of them in memory. */
  public SharedDeletes(FileIO io, long budgetBytes) {
    super(deleteFile -> ContentFiles.input(io, deleteFile), null);
    this.budgetBytes = budgetBytes;
    this.pooled = new BaseDeleteLoader(deleteFile -> ContentFiles.input(io, deleteFile)) {
      @Override
      protected boolean canCache(long size) {
        return SharedDeletes.this.canCache(size);
      }

      @Override
      protected <V> V getOrLoad(String key, Supplier<V> valueSupplier, long valueSize) {
        return SharedDeletes.this.getOrLoad(key, valueSupplier, valueSize);
      }
    };
  }

  /** A budget for one piece of work: an eighth of the heap, at most 512 MiB. */
  public static long defaultBudgetBytes() {
    return Math.min(512L << 20, Runtime.getRuntime().maxMemory() / 8);
  }

  /**
   * Says that the data file read next has data sequence number {@code dataSequenceNumber}, so the
   * equality deletes loaded for it may extend the set loaded for the file before (see the class
   * comment). A file older than the last one said, or a call from another thread, starts the sets
   * afresh.
   */
  public synchronized void nextDataFile(long dataSequenceNumber) {
    if (reader != Thread.currentThread() || dataSequenceNumber > reading) {
      growing.clear();
    }
    reader = Thread.currentThread();
    reading = dataSequenceNumber;
  }

  @Override
  public StructLikeSet loadEqualityDeletes(Iterable<DeleteFile> deleteFiles, Schema projection) {
    synchronized (this) {
      if (reader == Thread.currentThread() && reading != Long.MIN_VALUE && grows(deleteFiles)) {
        String type = projection.asStruct().toString();
        Growing set = growing.get(type);
        if (set == null || set.lowest <= reading) {
          set = new Growing(projection);
          growing.put(type, set);
        }
        for (DeleteFile d : deleteFiles) {
          if (!set.members.contains(d.location())) {
            set.keys.addAll(merged(List.of(d), super.loadEqualityDeletes(List.of(d), projection)));
            set.members.add(d.location());
            set.lowest = Math.min(set.lowest, d.dataSequenceNumber());
          }
        }
        return set.keys;
      }
    }
    int rowBytes =
        projection.columns().stream().mapToInt(TypeUtil::estimateSize).sum();
    StructLikeSet keys = toRead(deleteFiles, rowBytes) > 1
        ? pooled.loadEqualityDeletes(deleteFiles, projection)
        : super.loadEqualityDeletes(deleteFiles, projection);
    return merged(deleteFiles, keys);
  }

  /**
   * How many of {@code deleteFiles} a load reads from storage: those not kept, and those Iceberg
   * will not look for in the cache because {@link #canCache} refuses their size (Iceberg's
   * estimate, by {@code rowBytes} per row) once the budget is nearly spent.
   */
  private int toRead(Iterable<DeleteFile> deleteFiles, int rowBytes) {
    int n = 0;
    for (DeleteFile d : deleteFiles) {
      if (!loaded.containsKey(d.location()) || !canCache(estimate(d.recordCount(), rowBytes))) {
        n++;
      }
    }
    return n;
  }

  /** Iceberg's estimate of an equality-delete file's rows: rows times the projection's value size. */
  private static long estimate(long rows, int rowBytes) {
    try {
      return Math.multiplyExact(rows, rowBytes);
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  /**
   * Whether {@code deleteFiles} may extend the growing set of the file being read: each applies to
   * it by its sequence number, and each is global (of an unpartitioned spec: a delete of a
   * partition applies to that partition's files only, which a set shared across files would not
   * know).
   */
  private boolean grows(Iterable<DeleteFile> deleteFiles) {
    for (DeleteFile d : deleteFiles) {
      if (d.dataSequenceNumber() == null
          || d.dataSequenceNumber() <= reading
          || (d.partition() != null && d.partition().size() > 0)) {
        return false;
      }
    }
    return true;
  }

  /** {@code keys}, the keys of {@code files}, counted as merged. */
  private StructLikeSet merged(Iterable<DeleteFile> files, StructLikeSet keys) {
    for (DeleteFile d : files) {
      keysMerged.addAndGet(d.recordCount());
    }
    return keys;
  }

  /**
   * How many deleted keys were put in sets for the data files read (counted by the delete files'
   * rows): each delete file's keys once per data file it applies to when each file gets its own
   * set, once when the sets grow.
   */
  public long keysMerged() {
    return keysMerged.get();
  }

  @Override
  protected boolean canCache(long size) {
    long heap = heapBytes(size);
    return heap >= 0 && heap <= budgetBytes - bytes.get();
  }

  /** The heap {@code estimate} takes when kept; -1 when the estimate is unusable (overflow, negative). */
  private static long heapBytes(long estimate) {
    if (estimate < 0 || estimate > Long.MAX_VALUE / HEAP_PER_ESTIMATED_BYTE) {
      return -1;
    }
    return estimate * HEAP_PER_ESTIMATED_BYTE;
  }

  @Override
  @SuppressWarnings("unchecked")
  protected <V> V getOrLoad(String key, Supplier<V> valueSupplier, long valueSize) {
    Object known = loaded.get(key);
    if (known != null) {
      return (V) known;
    }
    V value = valueSupplier.get();
    reads.incrementAndGet();
    long heap = heapBytes(valueSize);
    if (heap < 0) {
      return value;
    }
    if (bytes.addAndGet(heap) > budgetBytes) {
      bytes.addAndGet(-heap); // another file took the room meanwhile: not kept
      return value;
    }
    Object raced = loaded.putIfAbsent(key, value);
    if (raced != null) {
      bytes.addAndGet(-heap);
      return (V) raced;
    }
    return value;
  }

  /**
   * How many delete files this loader read through its cache: each once while the budget lasts
   * (single deletion vectors Iceberg reads on its own, uncached, and they are not counted).
   */
  public long filesRead() {
    return reads.get();
  }
}
