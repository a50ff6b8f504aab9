package dev.lakestream.sync.convert;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Serialized deletion vectors by identity, up to a number of bytes, the oldest kept dropped first.
 * In the order kept, not by Caffeine's frequency-based admission: a vector is written once and
 * asked for about once (by the next cycle, which replaces it), so every new one would tie with the
 * stale ones it competes with, and ties keep the stale. Thread-safe.
 */
final class KeptVectors {

  /** What an entry costs besides its bytes and its identity's characters. */
  private static final int OVERHEAD_BYTES = 96;

  private final long budgetBytes;
  private final LinkedHashMap<String, byte[]> vectors = new LinkedHashMap<>();
  private long bytes;

  KeptVectors(long budgetBytes) {
    this.budgetBytes = budgetBytes;
  }

  /** Whether a vector of {@code length} bytes can be kept at all (none can with a budget of 0). */
  boolean fits(long length) {
    return length + OVERHEAD_BYTES <= budgetBytes;
  }

  /** Keeps {@code vector}, dropping the oldest kept ones beyond the budget. */
  synchronized void keep(String id, byte[] vector) {
    long cost = cost(id, vector);
    if (cost > budgetBytes) {
      return;
    }
    byte[] previous = vectors.put(id, vector);
    bytes += cost - (previous == null ? 0 : cost(id, previous));
    Iterator<Map.Entry<String, byte[]>> oldest = vectors.entrySet().iterator();
    while (bytes > budgetBytes && oldest.hasNext()) {
      Map.Entry<String, byte[]> e = oldest.next();
      bytes -= cost(e.getKey(), e.getValue());
      oldest.remove();
    }
  }

  /** The vector kept as {@code id}, or null. */
  synchronized byte[] get(String id) {
    return vectors.get(id);
  }

  /** Drops the vector kept as {@code id}, if one is. */
  synchronized void drop(String id) {
    byte[] vector = vectors.remove(id);
    if (vector != null) {
      bytes -= cost(id, vector);
    }
  }

  synchronized int size() {
    return vectors.size();
  }

  synchronized long bytes() {
    return bytes;
  }

  private static long cost(String id, byte[] vector) {
    return 2L * id.length() + vector.length + OVERHEAD_BYTES;
  }
}
