package dev.lakestream.benchmarks;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU time the JVM's JIT compiler threads (HotSpot's {@code C1 CompilerThread}s and {@code C2
 * CompilerThread}s) have used so far, read from Linux's {@code /proc/self/task/*}{@code /stat}:
 * they are not Java threads, so {@link ThreadCpu} does not see them, and the compilation bean's
 * total counts the time compilations took, waits for a core included.
 */
final class CompilerCpu {

  /** Clock ticks per second in {@code /proc}'s times, {@code USER_HZ}, 100 on Linux. */
  private static final long TICKS_PER_SECOND = 100;

  private CompilerCpu() {}

  /** Milliseconds of CPU the compiler threads have used, or -1 where {@code /proc} is not there. */
  static long millis() {
    Path tasks = Path.of("/proc/self/task");
    if (!Files.isDirectory(tasks)) {
      return -1;
    }
    long ticks = 0;
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
        ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
      }
    } catch (IOException e) {
      return -1;
    }
    return ticks * 1000 / TICKS_PER_SECOND;
  }
}
