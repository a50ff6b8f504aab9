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
 * <p>Its own end, not the application's committed offset, bounds what is read again: offsets reset
 * back or forth while ingest was stopped, or a commit that failed after the state was written
 * (at-least-once), change the committed offset but not what the batch holds.
 *
 * <p>A task reads its open batches again in steps, between its polls, and consumes on meanwhile:
 * what it consumes while a partition is still being read is not added then but read after, from
 * the source topic (its end moves past it, {@link #deferred}). Everything below {@code checked}
 * was decided (added, left out or passed over); above it, up to the end, the records were consumed
 * but not yet decided, and the fence decides them when they are read.
 *
 * <p>Written with every record of a partition whose batch is open, and removed with the flush, in
 * the task's state. The store is cached: it reaches the changelog once per commit, in the same
 * transaction as the offsets under exactly-once. Left-out offsets are kept as ranges: such records
 * come in runs. Records left out one by one between added ones each make a range; the buffer flushes
 * a batch that holds {@link ChangeBuffer#MAX_LEFT_OUT_RANGES}, so an entry stays far below a Kafka
 * record's size limit and cheap to write with every record.
 *
 * <p>Store key: the batch's prefix ({@code topic NUL partition NUL}); value: version, first offset,
 * end, checked, and the left-out ranges.
 */
final class BatchStarts {

  /**
   * An open batch's first offset, the offset after the last record of the partition consumed since
   * ({@code end}), and the ranges of offsets in between that are not to be added again.
   */
  static final class Start {
    final long first;
    long end;
    /** The offset after the last record decided: from here to {@link #end}, none is yet. */
    long checked;
    /**
     * Inclusive ranges {@code [from, to]}, ascending, disjoint and apart: below {@link #checked},
     * records decided so; above it, offsets the task never consumed.
     */
    final List<long[]> leftOut = new ArrayList<>();

    Start(long first, long end, long checked) {
      this.first = first;
      this.end = end;
      this.checked = checked;
    }

    /** A record at {@code offset} was decided. */
    private void decided(long offset) {
      checked = Math.max(checked, offset + 1);
      end = Math.max(end, offset + 1);
    }

    /** The left-out range that holds {@code offset}, or null. */
    long[] rangeOf(long offset) {
      int low = 0;
      int high = leftOut.size() - 1;
      while (low <= high) {
        int mid = (low + high) >>> 1;
        long[] range = leftOut.get(mid);
        if (offset < range[0]) {
          high = mid - 1;
        } else if (offset > range[1]) {
          low = mid + 1;
        } else {
          return range;
        }
      }
      return null;
    }

    /** Leaves out {@code [from, to]}: joined to the ranges it overlaps or touches. */
    private void insert(long from, long to) {
      int low = 0;
      int high = leftOut.size();
      while (low < high) {
        int mid = (low + high) >>> 1;
        if (leftOut.get(mid)[1] < from - 1) {
          low = mid + 1;
        } else {
          high = mid;
        }
      }
      int past = low;
      long joinedFrom = from;
      long joinedTo = to;
      while (past < leftOut.size() && leftOut.get(past)[0] <= to + 1) {
        joinedFrom = Math.min(joinedFrom, leftOut.get(past)[0]);
        joinedTo = Math.max(joinedTo, leftOut.get(past)[1]);
        past++;
      }
      leftOut.subList(low, past).clear();
      leftOut.add(low, new long[] {joinedFrom, joinedTo});
    }

    boolean leftOut(long offset) {
      return rangeOf(offset) != null;
    }
  }

  /**
   * 3: with the offset up to which records were decided; 2 had none (all up to the end were); 1
   * was never released.
   */
  private static final byte VERSION = 3;

  private static final byte VERSION_WITHOUT_CHECKED = 2;

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

  /** The partition's open batch, or null. */
  Start get(String prefix) {
    return open.get(prefix);
  }

  /** How many left-out ranges the partition's open batch holds (0 when none is open). */
  int leftOutRanges(String prefix) {
    Start start = open.get(prefix);
    return start == null ? 0 : start.leftOut.size();
  }

  /**
   * Whether the record at {@code offset} was decided before, while the partition has an open batch:
   * it is below the batch's end, and is consumed again only after the application's offsets were
   * reset back, or after a commit failed under at-least-once. Within the batch it was added, left
   * out or passed over; below the batch's start it is in a batch already flushed (committed with
   * its files), or was dropped or dead-lettered then. Applied again, an older change would replace
   * the batch's newer one of the same key.
   */
  boolean covers(String prefix, long offset) {
    Start start = open.get(prefix);
    return start != null && offset < start.end;
  }

  /** A record at {@code offset} was added to the partition's batch. */
  void added(String prefix, long offset) {
    Start start = open.get(prefix);
    if (start == null) {
      start = new Start(offset, offset + 1, offset + 1);
      open.put(prefix, start);
      store.put(prefix, encode(start));
    } else if (offset >= start.checked) {
      start.decided(offset);
      store.put(prefix, encode(start));
    }
  }

  /**
   * The task's first record of the partition since it started is at {@code offset}: the offsets
   * from the batch's end up to it were never consumed by the task (the application's offsets were
   * moved forward while it was stopped; or they hold transaction markers or aborted records, which
   * reading gives none of) and are left out, so reading the batch again does not add them. Later
   * records follow the ones before, so only the first can skip records.
   */
  void firstConsumed(String prefix, long offset) {
    Start start = open.get(prefix);
    if (start != null && offset > start.end) {
      start.insert(start.end, offset - 1);
      start.end = offset;
      store.put(prefix, encode(start));
    }
  }

  /**
   * A record at {@code offset} was consumed while the partition's batch is still being read again:
   * it is read after the ones before it, and decided then.
   */
  void deferred(String prefix, long offset) {
    Start start = open.get(prefix);
    if (start != null && offset >= start.end) {
      start.end = offset + 1;
      store.put(prefix, encode(start));
    }
  }

  /**
   * A record at {@code offset} was dropped by the fence or dead-lettered; while the partition has an
   * open batch, reading it again must leave it out too.
   */
  void leftOut(String prefix, long offset) {
    Start start = open.get(prefix);
    if (start != null && offset >= start.checked) {
      start.decided(offset);
      start.insert(offset, offset);
      store.put(prefix, encode(start));
    }
  }

  /**
   * A record inside the open batch, read again after a restart, was dead-lettered this time (it was
   * added the first time): later readings leave it out too.
   */
  void refusedOnReading(String prefix, long offset) {
    Start start = open.get(prefix);
    if (start != null
        && offset >= start.first
        && offset < start.checked
        && !start.leftOut(offset)) {
      start.insert(offset, offset);
      store.put(prefix, encode(start));
    }
  }

  /**
   * A record at {@code offset} that reading again passes over as well (a tombstone): the batch's end
   * moves past it, and it joins a left-out range that ends just before it, so a connector's replay
   * of deletes and their tombstones stays one range.
   */
  void passedOver(String prefix, long offset) {
    Start start = open.get(prefix);
    if (start != null && offset >= start.checked) {
      start.decided(offset);
      if (start.leftOut(offset - 1)) {
        start.insert(offset, offset);
      }
      store.put(prefix, encode(start));
    }
  }

  /**
   * The partition's batch, read again up to {@code next}, was flushed (or ended by a TRUNCATE)
   * while the rest of what was consumed is still to be read: the next batch starts there.
   */
  void restartAt(String prefix, long next) {
    Start start = open.get(prefix);
    if (start == null) {
      return;
    }
    if (next >= start.end) {
      closed(prefix);
      return;
    }
    Start rest = new Start(next, start.end, Math.max(start.checked, next));
    for (long[] range : start.leftOut) {
      if (range[1] >= next) {
        rest.leftOut.add(new long[] {Math.max(range[0], next), range[1]});
      }
    }
    open.put(prefix, rest);
    store.put(prefix, encode(rest));
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
    ByteBuffer buf = ByteBuffer.allocate(1 + 8 + 8 + 8 + 4 + 16 * start.leftOut.size());
    buf.put(VERSION)
        .putLong(start.first)
        .putLong(start.end)
        .putLong(start.checked)
        .putInt(start.leftOut.size());
    for (long[] range : start.leftOut) {
      buf.putLong(range[0]).putLong(range[1]);
    }
    return buf.array();
  }

  static Start decode(byte[] bytes) {
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    byte version = buf.get();
    if (version != VERSION && version != VERSION_WITHOUT_CHECKED) {
      throw new IllegalStateException("batch-start entry has unknown format version " + version);
    }
    long first = buf.getLong();
    long end = buf.getLong();
    Start start = new Start(first, end, version == VERSION ? buf.getLong() : end);
    int ranges = buf.getInt();
    for (int i = 0; i < ranges; i++) {
      start.leftOut.add(new long[] {buf.getLong(), buf.getLong()});
    }
    return start;
  }
}
