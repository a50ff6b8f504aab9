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
 * Iceberg's own size estimate; past it, a file is read as Iceberg would, every time. Delete files
 * never change once written, so an entry is never stale; use one instance per piece of work (a
 * compaction) and let it go with it.
 */
public final class SharedDeletes extends BaseDeleteLoader {

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
    return bytes.get() + size <= budgetBytes;
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
    if (bytes.addAndGet(valueSize) > budgetBytes) {
      bytes.addAndGet(-valueSize); // another file took the room meanwhile: not kept
      return value;
    }
    Object raced = loaded.putIfAbsent(key, value);
    if (raced != null) {
      bytes.addAndGet(-valueSize);
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
