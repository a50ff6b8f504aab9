package dev.lakestream.testkit;

import java.time.Duration;
import java.util.concurrent.Callable;

/** Polls a condition until it holds or a deadline passes. */
public final class Eventually {

  private Eventually() {}

  /**
   * Waits until {@code differences} returns null (nothing differs). On timeout fails with the last
   * difference it reported.
   */
  public static void noDifference(Duration timeout, Callable<String> differences) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = null;
    Exception lastError = null;
    while (System.nanoTime() < deadline) {
      try {
        last = differences.call();
        lastError = null;
        if (last == null) {
          return;
        }
      } catch (AssertionError e) {
        throw e;
      } catch (Exception e) {
        lastError = e;
      }
      Thread.sleep(200);
    }
    AssertionError failure = new AssertionError("still different after " + timeout + ": " + last);
    if (lastError != null) {
      failure.initCause(lastError);
    }
    throw failure;
  }

  public static void until(Duration timeout, String what, Callable<Boolean> condition)
      throws Exception {
    noDifference(timeout, () -> condition.call() ? null : "waiting for " + what);
  }
}
