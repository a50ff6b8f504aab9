package dev.lakestream.launcher;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Freshness per source transaction: PostgreSQL's own commit time (with {@code
 * track_commit_timestamp=on}) to the commit time of the first snapshot (of a branch) whose newest
 * source commit time reaches it. Transactions no snapshot reaches yet are left out.
 */
final class Freshness {

  /** A branch commit: the newest source commit time it covers, and when it became visible. */
  record Visible(long maxSourceTsMs, long atMs) {}

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
