package dev.lakestream.sync.cycle;

import dev.lakestream.common.app.Health;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one table's failures from stopping the others that share its partition: a table whose
 * cycle fails (a convert task that fails, a commit that fails, a result that is refused) is
 * <em>parked</em>: its cycle is abandoned, it is planned again after a backoff that doubles with
 * each failure in a row (from the backstop interval up to {@link #MAX_BACKOFF_MS}), and until it
 * commits again {@code /health} says DEGRADED and names it. A cycle that makes no progress for
 * {@code stallMs} is reported the same way before it times out.
 *
 * <p>One guard per coordinator (per stream task); its state is in memory: after a restart a parked
 * table is tried at once, which is what a restart is for.
 */
final class TableGuard {

  static final long MAX_BACKOFF_MS = 30 * 60_000L;
  private static final Logger LOG = LoggerFactory.getLogger(TableGuard.class);

  private record Parked(long untilMs, int failures) {}

  private final Health health;
  private final long baseBackoffMs;
  private final Map<String, Parked> parked = new ConcurrentHashMap<>();
  private final Set<String> stalledTables = ConcurrentHashMap.newKeySet();
  private final Counter failures;
  private final Counter forgotten;

  TableGuard(Health health, MeterRegistry meters, long baseBackoffMs, String taskId) {
    this.health = health;
    this.baseBackoffMs = baseBackoffMs;
    this.failures = meters.counter("lakestream.sync.table.failures");
    this.forgotten = meters.counter("lakestream.sync.tables.forgotten");
    Gauge.builder("lakestream.sync.tables.parked", parked, Map::size)
        .description("tables whose cycles keep failing, waiting to be tried again")
        .tag("task", taskId)
        .register(meters);
  }

  /** Whether {@code table} waits out a backoff at {@code nowMs}. */
  boolean isParked(String table, long nowMs) {
    Parked p = parked.get(table);
    return p != null && nowMs < p.untilMs();
  }

  /** The cycle of {@code table} failed: park it, log what failed and what to do, report it. */
  void failed(String table, String what, Throwable cause, long nowMs) {
    Parked before = parked.get(table);
    int n = before == null ? 1 : before.failures() + 1;
    long backoff = Math.min(MAX_BACKOFF_MS, baseBackoffMs << Math.min(20, n - 1));
    parked.put(table, new Parked(nowMs + backoff, n));
    failures.increment();
    String reason = what + (cause == null ? "" : ": " + describe(cause));
    health.problem(
        subject(table),
        "parked after " + n + " failure(s) in a row; next try in " + backoff / 1000 + " s: "
            + reason);
    String advice = "the other tables keep syncing; it is tried again in " + backoff / 1000
        + " s (the wait doubles"
        + " with each failure, up to 30 min). If it keeps failing, fix the cause named here (the catalog or object"
        + " store unreachable, a file missing or unreadable) or drop the table from the pipeline";
    if (cause == null) {
      LOG.error("Sync of {} failed ({} in a row): {}; {}", table, n, reason, advice);
    } else {
      LOG.error("Sync of {} failed ({} in a row): {}; {}", table, n, reason, advice, cause);
    }
  }

  /** {@code table} committed (or had nothing to do): it is healthy again. */
  void succeeded(String table) {
    if (parked.remove(table) != null) {
      LOG.info("Sync of {} works again", table);
    }
    stalledTables.remove(table);
    health.clear(subject(table));
  }

  /** A cycle of {@code table} has not progressed for a while: say so until it does. */
  void stalled(String table, String what) {
    if (!parked.containsKey(table)) {
      stalledTables.add(table);
      health.problem(subject(table), "stalled: " + what);
    }
  }

  /** {@code table} is no longer synced (dropped, or not the pipeline's). */
  void forget(String table, String why) {
    parked.remove(table);
    health.clear(subject(table));
    forgotten.increment();
    LOG.warn("No longer syncing {}: {}", table, why);
  }

  /** Forgets every table (their task moved away): no problem of theirs is reported here any more. */
  void clearAll() {
    for (String table : parked.keySet()) {
      health.clear(subject(table));
    }
    parked.clear();
    stalledTables.forEach(t -> health.clear(subject(t)));
    stalledTables.clear();
  }

  private static String subject(String table) {
    return "sync table " + table;
  }

  private static String describe(Throwable e) {
    StringBuilder out = new StringBuilder();
    for (Throwable t = e; t != null && out.length() < 600; t = t.getCause()) {
      if (!out.isEmpty()) {
        out.append(" <- ");
      }
      out.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
      if (t.getCause() == t) {
        break;
      }
    }
    return out.toString();
  }
}
