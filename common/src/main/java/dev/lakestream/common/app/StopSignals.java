package dev.lakestream.common.app;

import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;

/**
 * Turns SIGINT (Ctrl-C) and SIGTERM (a container stop) into a stop request the app handles while
 * the JVM still runs normally. Closing from a shutdown hook instead would race the JVM's own
 * shutdown: Iceberg's worker pool stops taking tasks then, and the last commits and reads fail.
 */
public final class StopSignals {

  private StopSignals() {}

  /** A latch counted down on the first SIGINT or SIGTERM. */
  public static CountDownLatch install() {
    CountDownLatch stop = new CountDownLatch(1);
    for (String name : new String[] {"INT", "TERM"}) {
      Signal.handle(new Signal(name), signal -> stop.countDown());
    }
    return stop;
  }
}
