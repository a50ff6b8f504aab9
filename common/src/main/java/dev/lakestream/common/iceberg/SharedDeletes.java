package dev.lakestream.common.iceberg;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.io.FileIO;

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

  /** Reads delete files with {@code io}, keeping up to {@code budgetBytes} of them in memory. */
  public SharedDeletes(FileIO io, long budgetBytes) {
    super(deleteFile -> io.newInputFile(deleteFile.location()));
    this.budgetBytes = budgetBytes;
  }

  /** A budget for one piece of work: an eighth of the heap, at most 512 MiB. */
  public static long defaultBudgetBytes() {
    return Math.min(512L << 20, Runtime.getRuntime().maxMemory() / 8);
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
