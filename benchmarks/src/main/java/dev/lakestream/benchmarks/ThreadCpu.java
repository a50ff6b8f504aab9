package dev.lakestream.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The CPU time of the live threads whose names match, by thread id: taken before and after a run,
 * the difference is the CPU an app's own threads spent, without the broker, the garbage collector
 * or the JIT compiler that share the JVM.
 */
final class ThreadCpu {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final Map<Long, Long> nanosById;

  private ThreadCpu(Map<Long, Long> nanosById) {
    this.nanosById = nanosById;
  }

  static ThreadCpu of(Predicate<String> names) {
    Map<Long, Long> out = new HashMap<>();
    for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
      if (info != null && names.test(info.getThreadName())) {
        long nanos = THREADS.getThreadCpuTime(info.getThreadId());
        if (nanos >= 0) {
          out.put(info.getThreadId(), nanos);
        }
      }
    }
    return new ThreadCpu(out);
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
