package dev.lakestream.ingest.fence;

import dev.lakestream.common.Sha256;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.kafka.PartitionText;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drops the changes a source connector publishes again after a restart (Kafka Connect delivers at
 * least once: e1 e2 e3, crash, e2 e3 e4). Per source partition it keeps the highest source
 * position applied, and the keys of the changes applied at that position, in the task's
 * exactly-once state; a change below the highest position, or at it with a key already applied
 * there, was applied before and is dropped, so no row moves backwards and no deleted key comes back
 * while a replay passes.
 *
 * <p>Within one source partition the connector's order is the source's commit order, so positions
 * only grow. Several changes share one position when the source logs them in one record:
 * PostgreSQL writes a multi-row insert ({@code COPY}, {@code INSERT ... SELECT}, {@code pg_restore})
 * as one WAL record per heap page, so dozens to hundreds of rows carry the same LSN. They are
 * distinct rows, so distinct keys: each is applied once, and a replay of any of them is still
 * dropped, wherever in the group the connector resumes. (Two changes of one key at one position do
 * not happen: a table's key is unique within a record.) The delete and the create of a primary-key
 * update also share a position; the create (marked by Debezium's {@code __debezium.oldkey} header)
 * orders after the delete.
 *
 * <p>Snapshot reads ({@code op=r}, {@code source.snapshot} set: initial, repeated or incremental
 * snapshots) are always applied and do not move the fence: they carry the row's current state,
 * their position is the snapshot's, not the row's, and a repeated snapshot restarts from the
 * beginning.
 *
 * <p>A change below the fence whose source commit time is later by more than {@value
 * #STARTED_OVER_AFTER_MS} ms than every commit time applied on its partition (and not more than
 * {@value #BELIEVED_AHEAD_MS} ms ahead of this machine's clock) is not a replay (a replay carries
 * the commit time it had when it was applied, so no later than the latest applied): the source's
 * positions started over, as they do when the connector is pointed at another database that holds
 * the same tables (a blue/green or logical replication upgrade, a restore into a new cluster),
 * whose log positions are lower. The fence
 * starts again from that change (warned, counted in {@code lakestream.ingest.fence.started.over}),
 * so the new source's changes are applied, not dropped as replays. The latest commit time applied
 * is kept, not the commit time of the change that set the fence: a change logged before another
 * can carry a later time (a MySQL row event carries its statement's start, in seconds, and a short
 * transaction that commits while a long statement runs is logged before it; a PostgreSQL
 * subscriber logs replicated transactions with their origin's commit time), and its replay would
 * otherwise look like a source that started over and be applied again, moving rows back.
 *
 * <p>A PostgreSQL change without a commit LSN in {@code source.sequence} (the first transaction a
 * restarted connector streams, before it has seen a commit; or a connector that sends no {@code
 * sequence}) cannot be placed in the order. It is dropped only when its own LSN and key are among
 * the recently applied ones of its partition (held in memory): a replay; otherwise it is applied
 * and the fence stays. Those applied without a commit LSN are also kept in the store (the latest
 * 50,000 per partition), so a task that moves, or starts again, still knows them. That is enough:
 * a connector sends a change without a commit LSN only when it streams from a start before it had
 * seen a commit, so a change it replays without one had none the first time either. Applied again, its
 * row would stay as that old change left it: the replay's later changes carry commit LSNs, and
 * their positions drop them. Never dropping what may be new is the rule: a row moving back for a moment
 * is a smaller harm than a change lost. Other changes without a position (unknown connectors) are
 * applied unfenced; a warning says so once per partition.
 *
 * <p>State per partition {@code topic-partition}: the highest position, the latest commit time
 * applied, the number of changes applied at it and the first one's key, in one entry (overwritten by every
 * change in the usual case of one change per position; the store is cached, so its changelog gets
 * the entry once per commit); the keys of further changes at the same position in entries {@code topic-partition NUL
 * key}, removed when the position moves on. A key longer than {@value #LONGEST_KEY} characters is
 * kept as its SHA-256 ({@code #} and the hex digest; a key's JSON text starts with a brace): a key
 * of a megabyte or more (the connector's records may reach 16 MiB) made a store record larger than
 * a Kafka record, whose send failed the task at every attempt.
 */
public final class SourceFence {

  public static final String STORE = "source-fence";
  /** Debezium's header on the create event of a primary-key update. */
  public static final String OLD_KEY_HEADER = "__debezium.oldkey";

  private static final Logger LOG = LoggerFactory.getLogger(SourceFence.class);
  private static final char SEP = '\u0000';
  /**
   * The first character of the keys of changes applied without a commit LSN ({@code \u0001
   * topic-partition NUL sequence}), which no topic name holds: apart from a partition's own keys.
   */
  private static final char UNORDERED = '\u0001';
  /** The longest key kept as it is; a longer one is kept as its digest. */
  static final int LONGEST_KEY = 1024;
  /**
   * How much later than the latest commit time applied a change's must be to show the source
   * started over.
   */
  static final long STARTED_OVER_AFTER_MS = 1_000;
  /**
   * How far ahead of this machine's clock a commit time is believed: beyond it (a source clock far
   * off, a corrupt {@code ts_ms}), it neither shows a source that started over nor raises the
   * latest time kept, which would then hide a later start over until real time caught up.
   */
  static final long BELIEVED_AHEAD_MS = 3_600_000;

  private final KeyValueStore<String, String> store;
  private final Counter fenced;
  private final Counter startedOver;
  private final Map<String, High> highest = new HashMap<>();
  private final Map<String, Run> runs = new HashMap<>();
  private final Set<String> unordered = new HashSet<>();
  /** Partitions warned of a fence without a commit time (kept by an earlier version). */
  private final Set<String> timeless = new HashSet<>();

  private final Map<String, RecentLsns> recent = new HashMap<>();
  /** {@code topic-partition}: a partition's key in the maps and the store. */
  private final PartitionText partitionKeys = new PartitionText((t, p) -> t + "-" + p);

  /** The highest position applied on a partition and the keys applied at it. */
  private static final class High {
    final long[] position;
    /**
     * The latest source commit time applied on the partition (from state written before that, the
     * commit time of the change that set the position); -1 when unknown (older state).
     */
    long tsMs = -1;
    /** The key of the first change applied at the position (null in legacy state). */
    String firstKey;
    /**
     * The keys of further changes at the position; null while there are none (a position holds one
     * change in the usual case: no set made per change).
     */
    Set<String> others;
    /** How many changes the stored state says were applied at the position. */
    int applied;
    /** State without keys: every change at the position counts as applied. */
    boolean legacy;

    High(long[] position) {
      this.position = position;
    }

    boolean applied(String key) {
      return legacy || key.equals(firstKey) || (others != null && others.contains(key));
    }

    /** Another key applied at the position. */
    void addOther(String key) {
      if (!key.equals(firstKey)) {
        if (others == null) {
          others = new HashSet<>();
        }
        others.add(key);
      }
    }

    /** How many changes were applied at the position (as far as their keys are known). */
    int keyCount() {
      return (firstKey == null ? 0 : 1) + (others == null ? 0 : others.size());
    }
  }

  public SourceFence(KeyValueStore<String, String> store, MeterRegistry meters) {
    this.store = store;
    this.fenced = meters.counter("lakestream.ingest.fenced");
    this.startedOver = meters.counter("lakestream.ingest.fence.started.over");
  }

  /**
   * True when the change is to be applied; false when it is a replay (counted, and logged with the
   * range of offsets and positions when the replay ends).
   */
  public boolean admit(
      String topic, int partition, long offset, ChangeEvent event, boolean primaryKeyUpdateCreate) {
    String partitionKey = partitionKeys.of(topic, partition);
    if (event.source().snapshot()) {
      endRun(partitionKey);
      return true;
    }
    Optional<long[]> order = event.source().order();
    Long lsn = event.source().lsn();
    String key = fenceKey(event.keyJson());
    if (order.isEmpty() && lsn != null) {
      RecentLsns seen = recent(partitionKey);
      if (seen.contains(lsn, primaryKeyUpdateCreate, key)) {
        return drop(partitionKey, offset, event, highestPosition(partitionKey));
      }
      endRun(partitionKey);
      // Its commit time is not the fence's to keep: the first transaction a connector streams from
      // a new source comes this way, and its time would make the new source's next changes look
      // like replays.
      seen.add(lsn, primaryKeyUpdateCreate, key);
      keep(partitionKey, seen, lsn, primaryKeyUpdateCreate, key);
      return true;
    }
    if (order.isEmpty()) {
      if (unordered.add(partitionKey)) {
        LOG.warn(
            "{}@{}: the change has no ordered source position ({}); replays from the connector are not fenced "
                + "on this partition",
            partitionKey,
            offset,
            event.source().describe());
      }
      return true;
    }
    long[] position = Arrays.copyOf(order.get(), order.get().length + 1);
    position[position.length - 1] = primaryKeyUpdateCreate ? 1 : 0;
    High high = high(partitionKey);
    int c = high == null ? 1 : compare(position, high.position);
    if (c < 0 || (c == 0 && high.applied(key))) {
      if (!startedOver(partitionKey, offset, event, high)) {
        return drop(partitionKey, offset, event, high.position);
      }
      c = 1;
    }
    endRun(partitionKey);
    if (c == 0) {
      // Another change at the highest position: a row of the same source record.
      high.addOther(key);
      high.tsMs = Math.max(high.tsMs, believed(event.source().tsMs()));
      store.put(partitionKey + SEP + key, "");
      store.put(partitionKey, encode(high));
    } else {
      if (high != null && high.others != null) {
        for (String k : high.others) {
          store.delete(partitionKey + SEP + k);
        }
      }
      High next = new High(position);
      next.firstKey = key;
      // After a start over, the old source's times are behind the new one's: the maximum is its.
      next.tsMs =
          Math.max(high == null ? -1 : high.tsMs, believed(event.source().tsMs()));
      highest.put(partitionKey, next);
      store.put(partitionKey, encode(next));
    }
    if (lsn != null) {
      recent(partitionKey).add(lsn, primaryKeyUpdateCreate, key);
    }
    return true;
  }

  /**
   * Whether {@code event}, below the fence, committed later than every change applied on the
   * partition by more than {@value #STARTED_OVER_AFTER_MS} ms: then the source's positions started
   * over (warned and counted) and the fence starts again from it.
   */
  private boolean startedOver(String partitionKey, long offset, ChangeEvent event, High high) {
    long tsMs = event.source().tsMs();
    if (high.tsMs < 0 && tsMs >= 0 && timeless.add(partitionKey)) {
      LOG.warn(
          "{}@{}: the fence of this partition was set before fences kept commit times: until a"
              + " change moves it, a change below it is taken for a replay, also one of a source"
              + " that started over",
          partitionKey,
          offset);
    }
    if (high.tsMs < 0
        || tsMs < 0
        || tsMs - high.tsMs <= STARTED_OVER_AFTER_MS
        || believed(tsMs) != tsMs) {
      return false;
    }
    endRun(partitionKey);
    startedOver.increment();
    LOG.warn(
        "{}@{}: the source position went back from {} to {} ({}) while its commit time went forward"
            + " from the latest applied, {}, to {}: the source started over (the connector reads"
            + " another database, whose log positions are lower); its changes are applied and the fence starts again from"
            + " this one",
        partitionKey,
        offset,
        Arrays.toString(high.position),
        event.source().order().map(Arrays::toString).orElse("none"),
        event.source().describe(),
        Instant.ofEpochMilli(high.tsMs),
        Instant.ofEpochMilli(tsMs));
    return true;
  }

  /** {@code tsMs}, at most {@link #BELIEVED_AHEAD_MS} ahead of this machine's clock. */
  private static long believed(long tsMs) {
    return Math.min(tsMs, System.currentTimeMillis() + BELIEVED_AHEAD_MS);
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

  /**
   * The recently applied changes of a partition: those applied without a commit LSN are read from
   * the store the first time (kept by this task before it moved or started again), oldest first.
   */
  private RecentLsns recent(String partitionKey) {
    RecentLsns seen = recent.get(partitionKey);
    if (seen == null) {
      seen = new RecentLsns();
      String prefix = keptPrefix(partitionKey);
      try (KeyValueIterator<String, String> it =
          store.prefixScan(prefix, Serdes.String().serializer())) {
        while (it.hasNext()) {
          var e = it.next();
          String[] parts = e.value.split(",", 3);
          seen.add(Long.parseLong(parts[0]), "1".equals(parts[1]), parts[2]);
          seen.nextKept = Long.parseLong(e.key.substring(prefix.length())) + 1;
        }
      }
      recent.put(partitionKey, seen);
    }
    return seen;
  }

  /** The prefix of the store keys of a partition's changes applied without a commit LSN. */
  private static String keptPrefix(String partitionKey) {
    return UNORDERED + partitionKey + SEP;
  }

  /**
   * Keeps a change applied without a commit LSN in the store, and drops the one kept 50,000
   * changes before it.
   */
  private void keep(String partitionKey, RecentLsns seen, long lsn, boolean create, String key) {
    long n = seen.nextKept++;
    String prefix = keptPrefix(partitionKey);
    store.put(prefix + String.format("%019d", n), lsn + "," + (create ? "1" : "0") + "," + key);
    if (n >= RecentLsns.CAPACITY) {
      store.delete(prefix + String.format("%019d", n - RecentLsns.CAPACITY));
    }
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
      LOG.info(
          "Fenced {} replayed change(s) of {} at offsets {}..{} (source {} .. {}): applied before (position {})",
          run.count,
          key,
          run.firstOffset,
          run.lastOffset,
          run.firstPosition,
          run.lastPosition,
          run.fence == null ? "none" : Arrays.toString(run.fence));
    }
  }

  private long[] highestPosition(String partitionKey) {
    High high = high(partitionKey);
    return high == null ? null : high.position;
  }

  private High high(String partitionKey) {
    High cached = highest.get(partitionKey);
    if (cached == null) {
      String stored = store.get(partitionKey);
      if (stored != null) {
        cached = decode(stored);
        if (cached.applied > 1) {
          try (KeyValueIterator<String, String> it =
              store.prefixScan(partitionKey + SEP, Serdes.String().serializer())) {
            High high = cached;
            it.forEachRemaining(e -> high.addOther(e.key.substring(partitionKey.length() + 1)));
          }
        }
        highest.put(partitionKey, cached);
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

  /** {@code key}, or its digest when it is longer than {@link #LONGEST_KEY} characters. */
  static String fenceKey(String key) {
    if (key.length() <= LONGEST_KEY) {
      return key;
    }
    return "#" + HexFormat.of().formatHex(Sha256.of(key.getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * {@code p1,p2,...;applied;@commit time;first key}; state written before keys were kept is the
   * position alone, and before commit times were kept it has no {@code @commit time;}. (A version
   * before commit times reads the time as part of the first key: it then applies a replay of the
   * very change that set the fence again, which changes nothing.)
   */
  private static String encode(High high) {
    StringBuilder out = new StringBuilder();
    for (long p : high.position) {
      if (out.length() > 0) {
        out.append(',');
      }
      out.append(p);
    }
    out.append(';').append(high.keyCount()).append(';');
    if (high.tsMs >= 0) {
      out.append('@').append(high.tsMs).append(';');
    }
    return out.append(high.firstKey).toString();
  }

  private static High decode(String text) {
    String[] parts = text.split(";", 3);
    High high =
        new High(Arrays.stream(parts[0].split(",")).mapToLong(Long::parseLong).toArray());
    if (parts.length < 3) {
      // Kept by a version that fenced by position alone: everything at it counts as applied.
      high.legacy = true;
      return high;
    }
    high.applied = Integer.parseInt(parts[1]);
    String rest = parts[2];
    int end = rest.indexOf(';');
    if (rest.startsWith("@") && end > 0) {
      // A key is JSON text: it never starts with '@'.
      high.tsMs = Long.parseLong(rest.substring(1, end));
      rest = rest.substring(end + 1);
    }
    high.firstKey = rest;
    return high;
  }

  /** The LSNs and keys of the changes applied last on one partition (the create of a key update apart), bounded. */
  private static final class RecentLsns {
    static final int CAPACITY = 50_000;
    private final LinkedHashSet<Seen> seen = new LinkedHashSet<>();
    /** The number the next change applied without a commit LSN is kept in the store under. */
    long nextKept;

    boolean contains(long lsn, boolean create, String key) {
      return seen.contains(new Seen(lsn, create, key));
    }

    void add(long lsn, boolean create, String key) {
      seen.add(new Seen(lsn, create, key));
      if (seen.size() > CAPACITY) {
        var it = seen.iterator();
        it.next();
        it.remove();
      }
    }

    /** One applied change: no text made of it (the key's hash is the key string's own, cached). */
    private record Seen(long lsn, boolean create, String key) {}
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
