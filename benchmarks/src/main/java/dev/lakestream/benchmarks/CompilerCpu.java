package dev.lakestream.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The CPU time the JVM's JIT compiler threads (HotSpot's {@code C1 CompilerThread}s and {@code C2
 * CompilerThread}s) use, read from Linux's {@code /proc/self/task/*}{@code /stat}: they are not
 * Java threads, so {@link ThreadCpu} does not see them, and the compilation bean's total counts the
 * time compilations took, waits for a core included. HotSpot starts and stops compiler threads as
 * the work asks: a thread that ends between two readings takes its share with it, so the figure is
 * a lower bound.
 */
final class CompilerCpu {

  /** Clock ticks per second in {@code /proc}'s times, {@code USER_HZ}, 100 on Linux. */
  private static final long TICKS_PER_SECOND = 100;

  private final Map<String, Long> ticksByThread;

  private CompilerCpu(Map<String, Long> ticksByThread) {
    this.ticksByThread = ticksByThread;
  }

  /** The compiler threads' CPU so far, by thread; none where {@code /proc} is not there. */
  static CompilerCpu now() {
    Map<String, Long> ticks = new HashMap<>();
    Path tasks = Path.of("/proc/self/task");
    if (!Files.isDirectory(tasks)) {
      return new CompilerCpu(null);
    }
    try (DirectoryStream<Path> all = Files.newDirectoryStream(tasks)) {
      for (Path task : all) {
        String stat;
        try {
          stat = Files.readString(task.resolve("stat"));
        } catch (IOException gone) {
          continue; // the thread ended while listed
        }
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        if (open < 0 || close < open || !stat.substring(open + 1, close).contains("CompilerThre")) {
          continue;
        }
        // After the name: state, then fields 4.. of proc(5); utime and stime are fields 14 and 15.
        String[] fields = stat.substring(close + 2).split(" ");
        ticks.put(
            task.getFileName().toString(), Long.parseLong(fields[11]) + Long.parseLong(fields[12]));
      }
    } catch (IOException e) {
      return new CompilerCpu(null);
    }
    return new CompilerCpu(ticks);
  }

  /**
   * Milliseconds of CPU the compiler threads alive now used since {@code before} (a thread started
   * since counts whole), or -1 where unknown.
   */
  long millisSince(CompilerCpu before) {
    if (ticksByThread == null || before.ticksByThread == null) {
      return -1;
    }
    long ticks = 0;
    for (Map.Entry<String, Long> e : ticksByThread.entrySet()) {
      ticks += e.getValue() - before.ticksByThread.getOrDefault(e.getKey(), 0L);
    }
    return ticks * 1000 / TICKS_PER_SECOND;
  }
}
