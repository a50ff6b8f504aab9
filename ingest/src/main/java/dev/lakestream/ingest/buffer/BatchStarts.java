package dev.lakestream.ingest.buffer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Where each source partition's open batch starts in its topic, and which of its records since then
 * were not added to it for a reason that reading them again would not give (the source fence
 * dropped them, or they were dead-lettered): all a restarted task needs to read the open batches
 * again from the source topics ({@link SourceReplay}), so the batches themselves need no changelog.
 *
 * <p>Written once when a batch opens, once more per record left out, and removed with the flush, in
 * the task's exactly-once state: what it says always matches the consumer offsets committed with
 * it. The store is cached, so a run of records left out (a connector's replay the fence drops)
 * reaches the changelog once per commit. Left-out offsets are kept as ranges: such records come in
 * runs.
 *
 * <p>Store key: the batch's prefix ({@code topic NUL partition NUL}); value: version, first offset,
 * and the left-out ranges.
 */
final class BatchStarts {

  /** An open batch's start and the ranges of offsets after it that are not to be added again. */
  static final class Start {
    final long first;
    /** Inclusive ranges {@code [from, to]}, ascending. */
    final List<long[]> leftOut = new ArrayList<>();

    Start(long first) {
      this.first = first;
    }

    boolean leftOut(long offset) {
      for (long[] range : leftOut) {
        if (offset >= range[0] && offset <= range[1]) {
          return true;
        }
      }
      return false;
    }

    void leaveOut(long offset) {
      long[] last = leftOut.isEmpty() ? null : leftOut.get(leftOut.size() - 1);
      if (last != null && offset == last[1] + 1) {
        last[1] = offset;
      } else {
        leftOut.add(new long[] {offset, offset});
      }
    }
  }

  private static final byte VERSION = 1;

  private final KeyValueStore<String, byte[]> store;
  /** The store's entries, by prefix: opening a batch that is open reads nothing. */
  private final Map<String, Start> open = new HashMap<>();

  BatchStarts(KeyValueStore<String, byte[]> store) {
    this.store = store;
  }

  /** Reads the store (after a restart or a rebalance): the batches to read again, by prefix. */
  Map<String, Start> load() {
    open.clear();
    try (KeyValueIterator<String, byte[]> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<String, byte[]> entry = it.next();
        open.put(entry.key, decode(entry.value));
      }
    }
    return Map.copyOf(open);
  }

  /** A record at {@code offset} was added to the partition's batch. */
  void added(String prefix, long offset) {
    if (!open.containsKey(prefix)) {
      Start start = new Start(offset);
      open.put(prefix, start);
      store.put(prefix, encode(start));
    }
  }

  /**
   * A record at {@code offset} was dropped by the fence or dead-lettered; while the partition has an
   * open batch, reading it again must leave it out too.
   */
  void leftOut(String prefix, long offset) {
    Start start = open.get(prefix);
    if (start != null && offset > start.first && !start.leftOut(offset)) {
      start.leaveOut(offset);
      store.put(prefix, encode(start));
    }
  }

  /**
   * A record at {@code offset} that reading again passes over as well (a tombstone): joined to a
   * left-out range that ends just before it, so a connector's replay of deletes and their
   * tombstones stays one range.
   */
  void passedOver(String prefix, long offset) {
    Start start = open.get(prefix);
    if (start != null && !start.leftOut.isEmpty()) {
      long[] last = start.leftOut.get(start.leftOut.size() - 1);
      if (offset == last[1] + 1) {
        last[1] = offset;
        store.put(prefix, encode(start));
      }
    }
  }

  /** The partition's batch was flushed (or ended by a TRUNCATE). */
  void closed(String prefix) {
    if (open.remove(prefix) != null) {
      store.put(prefix, null);
    }
  }

  /** The topic and partition of a batch prefix. */
  static TopicPartition partitionOf(String prefix) {
    int first = prefix.indexOf('\u0000');
    int second = prefix.indexOf('\u0000', first + 1);
    return new TopicPartition(
        prefix.substring(0, first), Integer.parseInt(prefix.substring(first + 1, second)));
  }

  static byte[] encode(Start start) {
    ByteBuffer buf = ByteBuffer.allocate(1 + 8 + 4 + 16 * start.leftOut.size());
    buf.put(VERSION).putLong(start.first).putInt(start.leftOut.size());
    for (long[] range : start.leftOut) {
      buf.putLong(range[0]).putLong(range[1]);
    }
    return buf.array();
  }

  static Start decode(byte[] bytes) {
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    byte version = buf.get();
    if (version != VERSION) {
      throw new IllegalStateException("batch-start entry has unknown format version " + version);
    }
    Start start = new Start(buf.getLong());
    int ranges = buf.getInt();
    for (int i = 0; i < ranges; i++) {
      start.leftOut.add(new long[] {buf.getLong(), buf.getLong()});
    }
    return start;
  }
}
