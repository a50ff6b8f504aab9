package dev.lakestream.common.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The latency of each hop a change makes from its source commit to {@code main}, as one timer,
 * {@value #METER}, tagged {@code hop} (p50, p95 and p99 published). Ingest records the first four
 * hops, sync the last four. {@code realtime-to-sync} and {@code realtime-to-planned} both start at
 * the realtime commit (the first is the part of the second spent before sync reads the event): the
 * hops without {@code realtime-to-sync}, added up, explain a change's freshness on main.
 */
public final class Hops {

  /** The longest span recorded: longer ones (from records' times) are recorded as this. */
  static final long MAX_SPAN_MS = Long.MAX_VALUE / 1_000_000 / 2;

  public static final String METER = "lakestream.hop.latency";

  /** The hops, in the order a change makes them. */
  public enum Hop {
    /** Source commit ({@code source.ts_ms}) to Debezium's record in Kafka (the record's timestamp). */
    SOURCE_TO_KAFKA("source-to-kafka", "source commit to Debezium's record in Kafka"),
    /** The record's timestamp to ingest reading it: how far ingest is behind. */
    KAFKA_TO_INGEST("kafka-to-ingest", "record in Kafka to read by ingest"),
    /** The oldest change of a batch: read by ingest to its batch written as files. */
    BUFFERED("buffered", "read by ingest to written in a batch (the batch's oldest change)"),
    /** A batch written to its realtime commit. */
    FLUSH_TO_REALTIME("flush-to-realtime", "batch written to committed on realtime"),
    /** A realtime commit to sync reading its event. */
    REALTIME_TO_SYNC("realtime-to-sync", "realtime commit to its event read by sync"),
    /** The newest realtime commit a cycle covers to the cycle being planned. */
    REALTIME_TO_PLANNED("realtime-to-planned", "realtime commit to the sync cycle planned"),
    /** A cycle planned to its last deletion vector written (index lookups and conversion). */
    CONVERTED("converted", "cycle planned to its deletes converted"),
    /** A cycle's deletes converted to its commit on main. */
    MAIN_COMMIT("main-commit", "deletes converted to committed on main");

    private final String tag;
    private final String description;

    Hop(String tag, String description) {
      this.tag = tag;
      this.description = description;
    }

    public String tag() {
      return tag;
    }

    public String description() {
      return description;
    }
  }

  /** The hops ingest records. */
  public static final Hop[] INGEST = {
    Hop.SOURCE_TO_KAFKA, Hop.KAFKA_TO_INGEST, Hop.BUFFERED, Hop.FLUSH_TO_REALTIME
  };

  /** The hops sync records. */
  public static final Hop[] SYNC = {
    Hop.REALTIME_TO_SYNC, Hop.REALTIME_TO_PLANNED, Hop.CONVERTED, Hop.MAIN_COMMIT
  };

  private final Map<Hop, Timer> timers = new EnumMap<>(Hop.class);

  /** The timers of {@code hops}, the ones the app records. */
  public Hops(MeterRegistry meters, Hop... hops) {
    for (Hop hop : hops) {
      timers.put(
          hop,
          Timer.builder(METER)
              .description("latency of one hop from source commit to main")
              .tag("hop", hop.tag())
              .publishPercentiles(0.5, 0.95, 0.99)
              .register(meters));
    }
  }

  /** Records {@code toMs - fromMs}; nothing when either time is unknown (not positive). */
  public void record(Hop hop, long fromMs, long toMs) {
    Timer timer = timers.get(hop);
    if (timer != null && fromMs > 0 && toMs > 0) {
      // Times come from records (a source's commit time, a producer's timestamp): a span past what
      // a timer holds in nanoseconds (292 years) would throw on the stream thread.
      timer.record(Duration.ofMillis(Math.min(Math.max(0, toMs - fromMs), MAX_SPAN_MS)));
    }
  }

  public void record(Hop hop, Duration took) {
    Timer timer = timers.get(hop);
    if (timer != null) {
      timer.record(took);
    }
  }

  public Timer timer(Hop hop) {
    return timers.get(hop);
  }

  /**
   * The p50, p95 and p99 in milliseconds of each hop recorded in {@code registries}, in the order of
   * the hops; a hop nobody recorded is left out. Micrometer's percentiles cover a sliding window of
   * the last few minutes, as Prometheus sees them.
   */
  public static Map<Hop, double[]> percentilesMs(MeterRegistry... registries) {
    Map<Hop, double[]> out = new LinkedHashMap<>();
    for (Hop hop : Hop.values()) {
      for (MeterRegistry registry : registries) {
        Timer timer = registry.find(METER).tag("hop", hop.tag()).timer();
        if (timer == null || timer.count() == 0) {
          continue;
        }
        double[] ms = new double[3];
        for (ValueAtPercentile v : timer.takeSnapshot().percentileValues()) {
          int at = v.percentile() < 0.9 ? 0 : v.percentile() < 0.98 ? 1 : 2;
          ms[at] = v.value(TimeUnit.MILLISECONDS);
        }
        out.put(hop, ms);
      }
    }
    return out;
  }
}
