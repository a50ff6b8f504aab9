package dev.lakestream.ingest.fence;

import dev.lakestream.common.debezium.ChangeEvent;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drops the changes a source connector publishes again after a restart (Kafka Connect delivers at
 * least once: e1 e2 e3, crash, e2 e3 e4). Per source partition it keeps the highest source
 * position applied, in the task's exactly-once state; a change at or below it was applied before
 * and is dropped, so no row moves backwards and no deleted key comes back while a replay passes.
 *
 * <p>Within one source partition the connector's order is the source's commit order, so positions
 * only grow; what comes at or below the highest is a replay. Two changes share a position in one
 * case: the delete and the create of a primary-key update; the create (marked by Debezium's {@code
 * __debezium.oldkey} header) orders after the delete.
 *
 * <p>Snapshot reads ({@code op=r}, {@code source.snapshot} set: initial, repeated or incremental
 * snapshots) are always applied and do not move the fence: they carry the row's current state,
 * their position is the snapshot's, not the row's, and a repeated snapshot restarts from the
 * beginning.
 *
 * <p>A PostgreSQL change without a commit LSN in {@code source.sequence} (the first transaction a
 * restarted connector streams, before it has seen a commit; or a connector that sends no {@code
 * sequence}) cannot be placed in the order. It is dropped only when its own LSN, unique per row
 * change, is among the recently applied LSNs of its partition (held in memory): a replay; otherwise
 * it is applied and the fence stays. Never dropping what may be new is the rule: a row moving back
 * for a moment is a smaller harm than a change lost. Other changes without a position (unknown
 * connectors) are applied unfenced; a warning says so once per partition.
 */
public final class SourceFence {

  public static final String STORE = "source-fence";
  /** Debezium's header on the create event of a primary-key update. */
  public static final String OLD_KEY_HEADER = "__debezium.oldkey";

  private static final Logger LOG = LoggerFactory.getLogger(SourceFence.class);

  private final KeyValueStore<String, String> store;
  private final Counter fenced;
  private final Map<String, long[]> highest = new HashMap<>();
  private final Map<String, Run> runs = new HashMap<>();
  private final Set<String> unordered = new HashSet<>();
  private final Map<String, RecentLsns> recent = new HashMap<>();

  public SourceFence(KeyValueStore<String, String> store, MeterRegistry meters) {
    this.store = store;
    this.fenced = meters.counter("lakestream.ingest.fenced");
  }

  /**
   * True when the change is to be applied; false when it is a replay (counted, and logged with the
   * range of offsets and positions when the replay ends).
   */
  public boolean admit(String topic, int partition, long offset, ChangeEvent event, boolean primaryKeyUpdateCreate) {
    String key = topic + "-" + partition;
    if (event.source().snapshot()) {
      endRun(key);
      return true;
    }
    Optional<long[]> order = event.source().order();
    Long lsn = event.source().lsn();
    if (order.isEmpty() && lsn != null) {
      RecentLsns seen = recent.computeIfAbsent(key, k -> new RecentLsns());
      if (seen.contains(lsn, primaryKeyUpdateCreate)) {
        return drop(key, offset, event, highest(key));
      }
      endRun(key);
      seen.add(lsn, primaryKeyUpdateCreate);
      return true;
    }
    if (order.isEmpty()) {
      if (unordered.add(key)) {
        LOG.warn("{}@{}: the change has no ordered source position ({}); replays from the connector are not fenced "
            + "on this partition", key, offset, event.source().describe());
      }
      return true;
    }
    long[] position = Arrays.copyOf(order.get(), order.get().length + 1);
    position[position.length - 1] = primaryKeyUpdateCreate ? 1 : 0;
    long[] applied = highest(key);
    if (applied != null && compare(position, applied) <= 0) {
      return drop(key, offset, event, applied);
    }
    endRun(key);
    highest.put(key, position);
    store.put(key, encode(position));
    if (lsn != null) {
      recent.computeIfAbsent(key, k -> new RecentLsns()).add(lsn, primaryKeyUpdateCreate);
    }
    return true;
  }

  /** Counts a dropped replay into the run of its partition; returns false (not admitted). */
  private boolean drop(String key, long offset, ChangeEvent event, long[] applied) {
    fenced.increment();
    Run run = runs.computeIfAbsent(key, k -> new Run(offset, event.source().describe(), applied));
    run.count++;
    run.lastOffset = offset;
    run.lastPosition = event.source().describe();
    return false;
  }

  /** Logs the replays dropped so far on every partition (called on the task's timer). */
  public void flushLog() {
    for (String key : runs.keySet().toArray(String[]::new)) {
      endRun(key);
    }
  }

  private void endRun(String key) {
    Run run = runs.remove(key);
    if (run != null) {
      LOG.info("Fenced {} replayed change(s) of {} at offsets {}..{} (source {} .. {}): applied before (position {})",
          run.count, key, run.firstOffset, run.lastOffset, run.firstPosition, run.lastPosition,
          run.fence == null ? "none" : Arrays.toString(run.fence));
    }
  }

  private long[] highest(String key) {
    long[] cached = highest.get(key);
    if (cached == null) {
      String stored = store.get(key);
      if (stored != null) {
        cached = decode(stored);
        highest.put(key, cached);
      }
    }
    return cached;
  }

  static int compare(long[] a, long[] b) {
    for (int i = 0; i < Math.min(a.length, b.length); i++) {
      int c = Long.compare(a[i], b[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.length, b.length);
  }

  private static String encode(long[] position) {
    StringBuilder out = new StringBuilder();
    for (long p : position) {
      if (out.length() > 0) {
        out.append(',');
      }
      out.append(p);
    }
    return out.toString();
  }

  private static long[] decode(String text) {
    return Arrays.stream(text.split(",")).mapToLong(Long::parseLong).toArray();
  }

  /** The LSNs of the changes applied last on one partition (the create of a key update apart), bounded. */
  private static final class RecentLsns {
    private static final int CAPACITY = 50_000;
    private final java.util.LinkedHashSet<Long> lsns = new java.util.LinkedHashSet<>();

    boolean contains(long lsn, boolean create) {
      return lsns.contains(create ? -lsn : lsn);
    }

    void add(long lsn, boolean create) {
      lsns.add(create ? -lsn : lsn);
      if (lsns.size() > CAPACITY) {
        var it = lsns.iterator();
        it.next();
        it.remove();
      }
    }
  }

  private static final class Run {
    final long firstOffset;
    final String firstPosition;
    final long[] fence;
    long lastOffset;
    String lastPosition;
    long count;

    Run(long firstOffset, String firstPosition, long[] fence) {
      this.firstOffset = firstOffset;
      this.firstPosition = firstPosition;
      this.fence = fence;
    }
  }
}
