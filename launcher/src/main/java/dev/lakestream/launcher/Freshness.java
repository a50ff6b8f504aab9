package dev.lakestream.launcher;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Freshness from source commit to a branch. Per change ({@link #perChange}): a change's source commit
 * time to the first branch commit that holds its source offset, exact on a topic of several
 * partitions. Per transaction ({@link #perTransaction}): PostgreSQL's own commit time (with {@code
 * track_commit_timestamp=on}) to the first branch commit whose newest source commit time reaches
 * it; on several partitions that can be before all of the transaction's changes are in, so it
 * reads low. Changes and transactions no commit reaches yet are left out.
 */
public final class Freshness {

  /** A branch commit: the newest source commit time it covers, and when it became visible. */
  record Visible(long maxSourceTsMs, long atMs) {}

  /**
   * A change in the source topic: where it is, its source commit time, and its record's timestamp
   * in Kafka ({@code inKafkaMs}, the time Connect's producer sent it; -1 when unknown).
   */
  record SourceChange(int partition, long offset, long sourceTsMs, long inKafkaMs) {
    SourceChange(int partition, long offset, long sourceTsMs) {
      this(partition, offset, sourceTsMs, -1);
    }
  }

  /** A branch commit: the last source offset it holds of each partition, and when it was made. */
  record Covered(Map<Integer, Long> lastOffsets, long atMs) {}

  /**
   * The changes whose source commit fell in one window of a run (from {@code fromMs} to {@code
   * untilMs} after the run's first change), and their freshness: p50, p99 and the worst, in ms.
   */
  public record Window(
      long fromMs, long untilMs, int changes, long p50Ms, long p99Ms, long maxMs) {}

  private Freshness() {}

  /**
   * Milliseconds per transaction from its commit time ({@code committedMs}, ms since the epoch) to
   * the earliest commit that covers it, sorted; transactions no commit covers yet are left out.
   */
  static List<Long> perTransaction(List<Long> committedMs, List<Visible> commits) {
    // Sorted by source time, with the earliest visibility of any commit at or after each position.
    List<Visible> sorted = new ArrayList<>(commits);
    sorted.sort(Comparator.comparingLong(Visible::maxSourceTsMs));
    long[] sourceTs = new long[sorted.size()];
    long[] earliestFrom = new long[sorted.size()];
    long earliest = Long.MAX_VALUE;
    for (int i = sorted.size() - 1; i >= 0; i--) {
      sourceTs[i] = sorted.get(i).maxSourceTsMs();
      earliest = Math.min(earliest, sorted.get(i).atMs());
      earliestFrom[i] = earliest;
    }
    List<Long> out = new ArrayList<>();
    for (long committed : committedMs) {
      int i = firstAtLeast(sourceTs, committed);
      if (i < sourceTs.length) {
        out.add(earliestFrom[i] - committed);
      }
    }
    out.sort(null);
    return out;
  }

  /**
   * Milliseconds per change from its source commit time to its record in Kafka, sorted: the
   * source's own part of the freshness (for PostgreSQL, Debezium decoding the WAL and Connect
   * sending the record), before the pipeline's. Changes whose record time is unknown are left out;
   * a record stamped before its commit time (clocks of two machines) counts as 0.
   */
  static List<Long> toKafka(List<SourceChange> changes) {
    List<Long> out = new ArrayList<>();
    for (SourceChange c : changes) {
      if (c.inKafkaMs() >= 0) {
        out.add(Math.max(0, c.inKafkaMs() - c.sourceTsMs()));
      }
    }
    out.sort(null);
    return out;
  }

  /**
   * Milliseconds per change from its source commit time to the first branch commit that holds its
   * offset, sorted; changes no commit holds yet are left out. Unlike {@link #perTransaction}, a
   * commit of another partition never counts for a change.
   */
  static List<Long> perChange(List<SourceChange> changes, List<Covered> commits) {
    List<Long> out = new ArrayList<>();
    visibleAfter(changes, commits).forEach(seen -> out.add(seen.ms()));
    out.sort(null);
    return out;
  }

  /**
   * Freshness over a run: the changes grouped by their source commit time into windows of {@code
   * windowMs} from the first change, each window's percentiles. A tail that a run's percentiles
   * only summarize shows here as the windows it comes from (the first seconds, or a stall).
   * Windows with no change a commit holds are left out.
   */
  static List<Window> overTime(List<SourceChange> changes, List<Covered> commits, long windowMs) {
    List<Seen> visible = visibleAfter(changes, commits);
    long first =
        visible.stream().mapToLong(seen -> seen.change().sourceTsMs()).min().orElse(0);
    Map<Long, List<Long>> byWindow = new TreeMap<>();
    visible.forEach(seen -> byWindow
        .computeIfAbsent((seen.change().sourceTsMs() - first) / windowMs, w -> new ArrayList<>())
        .add(seen.ms()));
    List<Window> out = new ArrayList<>();
    byWindow.forEach((w, ms) -> {
      ms.sort(null);
      out.add(new Window(
          w * windowMs,
          (w + 1) * windowMs,
          ms.size(),
          percentile(ms, 50),
          percentile(ms, 99),
          ms.get(ms.size() - 1)));
    });
    return out;
  }

  /** A change a commit holds, and ms from its source commit to the first such commit. */
  private record Seen(SourceChange change, long ms) {}

  /** Each change a commit holds, in the changes' order. */
  private static List<Seen> visibleAfter(List<SourceChange> changes, List<Covered> commits) {
    List<Covered> byTime = new ArrayList<>(commits);
    byTime.sort(Comparator.comparingLong(Covered::atMs));
    // Per partition: the commit times, and the highest offset held by then (never decreasing).
    Map<Integer, long[][]> held = new HashMap<>();
    Set<Integer> partitions = new HashSet<>();
    byTime.forEach(c -> partitions.addAll(c.lastOffsets().keySet()));
    for (int partition : partitions) {
      long[] times = new long[byTime.size()];
      long[] upTo = new long[byTime.size()];
      long max = -1;
      for (int i = 0; i < byTime.size(); i++) {
        max = Math.max(max, byTime.get(i).lastOffsets().getOrDefault(partition, -1L));
        times[i] = byTime.get(i).atMs();
        upTo[i] = max;
      }
      held.put(partition, new long[][] {times, upTo});
    }
    List<Seen> out = new ArrayList<>();
    for (SourceChange change : changes) {
      long[][] h = held.get(change.partition());
      if (h == null) {
        continue;
      }
      int i = firstAtLeast(h[1], change.offset());
      if (i < h[1].length) {
        out.add(new Seen(change, Math.max(0, h[0][i] - change.sourceTsMs())));
      }
    }
    return out;
  }

  /** The value at percentile {@code p} (0..100) of sorted values. */
  static long percentile(List<Long> sorted, double p) {
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.floor(sorted.size() * p / 100.0)));
  }

  private static int firstAtLeast(long[] values, long value) {
    int lo = 0;
    int hi = values.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (values[mid] < value) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
