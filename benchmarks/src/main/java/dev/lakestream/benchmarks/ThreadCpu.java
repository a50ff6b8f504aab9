package dev.lakestream.benchmarks;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The CPU time and the bytes allocated of the live threads whose names match, by thread id: taken
 * before and after a run, the difference is what an app's own threads spent, without the broker,
 * the garbage collector or the JIT compiler that share the JVM. Bytes allocated depend on the work
 * done, not on the machine's load: they compare runs of different hours.
 */
final class ThreadCpu {

  private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

  private final Map<Long, Long> nanosById;
  private final Map<Long, Long> bytesById;
  private final Map<Long, String> namesById;

  private ThreadCpu(
      Map<Long, Long> nanosById, Map<Long, Long> bytesById, Map<Long, String> namesById) {
    this.nanosById = nanosById;
    this.bytesById = bytesById;
    this.namesById = namesById;
  }

  static ThreadCpu of(Predicate<String> names) {
    Map<Long, Long> out = new HashMap<>();
    Map<Long, Long> bytes = new HashMap<>();
    Map<Long, String> threadNames = new HashMap<>();
    for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
      if (info != null && names.test(info.getThreadName())) {
        threadNames.put(info.getThreadId(), info.getThreadName());
        long nanos = THREADS.getThreadCpuTime(info.getThreadId());
        if (nanos >= 0) {
          out.put(info.getThreadId(), nanos);
        }
        long allocated = THREADS.getThreadAllocatedBytes(info.getThreadId());
        if (allocated >= 0) {
          bytes.put(info.getThreadId(), allocated);
        }
      }
    }
    return new ThreadCpu(out, bytes, threadNames);
  }

  /** The bytes the calling thread has allocated so far. */
  static long allocatedByThisThread() {
    return THREADS.getCurrentThreadAllocatedBytes();
  }

  /** Bytes allocated since {@code before} by the threads now matching. */
  long bytesAllocatedSince(ThreadCpu before) {
    long sum = 0;
    for (var e : bytesById.entrySet()) {
      sum += e.getValue() - before.bytesById.getOrDefault(e.getKey(), 0L);
    }
    return sum;
  }

  /**
   * Nanoseconds spent since {@code before} by the threads now matching, summed by the group {@code
   * group} names for each thread's name.
   */
  Map<String, Long> nanosSinceByGroup(ThreadCpu before, Function<String, String> group) {
    Map<String, Long> out = new TreeMap<>();
    for (var e : nanosById.entrySet()) {
      long spent = e.getValue() - before.nanosById.getOrDefault(e.getKey(), 0L);
      out.merge(group.apply(namesById.get(e.getKey())), spent, Long::sum);
    }
    return out;
  }

  /** Nanoseconds spent since {@code before} by the threads now matching. */
  long nanosSince(ThreadCpu before) {
    long sum = 0;
    for (var e : nanosById.entrySet()) {
      sum += e.getValue() - before.nanosById.getOrDefault(e.getKey(), 0L);
    }
    return sum;
  }
}
