package dev.lakestream.common.app;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * What {@code /health} reports: {@code DOWN} when the app's Kafka Streams client is not running or
 * its stream threads keep dying (a thread replaced {@value #FAILURES_FOR_DOWN} times within {@link
 * #FAILURE_WINDOW}: it fails on the same thing again and again); {@code DEGRADED} while a table is
 * parked (its work keeps failing and is retried later) or stalled (it makes no progress while its
 * lag grows); {@code UP} otherwise. Thread-safe.
 */
public final class Health {

  /** The states, worst last. */
  public enum Status {
    UP,
    DEGRADED,
    DOWN
  }

  static final int FAILURES_FOR_DOWN = 3;
  static final Duration FAILURE_WINDOW = Duration.ofMinutes(5);

  private volatile BooleanSupplier running = () -> true;
  private final Deque<Long> failures = new ArrayDeque<>();
  private final Map<String, String> problems = new ConcurrentHashMap<>();

  /** Whether the app's client runs (set once the client exists; until then, yes). */
  public void running(BooleanSupplier running) {
    this.running = running;
  }

  /** A stream thread died and was replaced. */
  public synchronized void threadFailed(long nowMs) {
    failures.addLast(nowMs);
    trim(nowMs);
  }

  /** Marks {@code subject} (a table) as in trouble, with what is wrong; {@link #clear} ends it. */
  public void problem(String subject, String what) {
    problems.put(subject, what);
  }

  public void clear(String subject) {
    problems.remove(subject);
  }

  public synchronized Status status(long nowMs) {
    trim(nowMs);
    if (!running.getAsBoolean() || failures.size() >= FAILURES_FOR_DOWN) {
      return Status.DOWN;
    }
    return problems.isEmpty() ? Status.UP : Status.DEGRADED;
  }

  /** The status and why, as JSON: {@code {"status":"DEGRADED","threadFailures":0,"problems":{...}}}. */
  public synchronized String describe(long nowMs) {
    Status status = status(nowMs);
    StringBuilder out = new StringBuilder("{\"status\":\"")
        .append(status)
        .append("\",\"threadFailures\":")
        .append(failures.size())
        .append(",\"running\":")
        .append(running.getAsBoolean())
        .append(",\"problems\":{");
    String sep = "";
    for (var e : new TreeMap<>(problems).entrySet()) {
      out.append(sep).append(quote(e.getKey())).append(':').append(quote(e.getValue()));
      sep = ",";
    }
    return out.append("}}").toString();
  }

  private void trim(long nowMs) {
    while (!failures.isEmpty() && failures.peekFirst() < nowMs - FAILURE_WINDOW.toMillis()) {
      failures.removeFirst();
    }
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
  }
}
