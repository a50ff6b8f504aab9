package dev.lakestream.testkit;

/** The JVM's heap, for tests that compare an estimate of what objects take with what they take. */
public final class Heap {

  private Heap() {}

  /**
   * The heap in use once the collector has run, as far as it can be told from inside: the least of
   * three readings, each after a collection.
   */
  public static long inUse() throws InterruptedException {
    Runtime runtime = Runtime.getRuntime();
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(50);
      least = Math.min(least, runtime.totalMemory() - runtime.freeMemory());
    }
    return least;
  }
}
