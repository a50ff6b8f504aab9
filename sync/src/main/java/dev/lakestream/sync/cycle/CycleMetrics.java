package dev.lakestream.sync.cycle;

import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.metrics.Hops;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/** What the cycle coordinator counts, in the app's registry. */
final class CycleMetrics {

  final Counter cycles;
  final Counter replans;
  final Counter tasksSent;
  final Counter groupsSent;
  final Counter keysConverted;
  final Counter reconvertedDeletes;
  final Counter liveSetDiffs;
  final DistributionSummary realtimeSnapshotsPerCycle;
  final Timer cycleTime;
  final Timer freshness;
  final Counter filesByIndex;
  final Counter filesScanned;
  final Counter filesSkippedByIndex;
  final Counter lookupsTooLarge;
  final Counter deadLettered;
  final Counter timedOut;
  final Hops hops;

  CycleMetrics(MeterRegistry meters) {
    cycles = meters.counter("lakestream.sync.cycles");
    replans = meters.counter("lakestream.sync.replans");
    tasksSent = meters.counter("lakestream.sync.convert.tasks");
    groupsSent = meters.counter("lakestream.sync.convert.groups");
    keysConverted = meters.counter("lakestream.sync.keys.converted");
    reconvertedDeletes = meters.counter("lakestream.sync.reconverted.deletes");
    liveSetDiffs = meters.counter("lakestream.sync.live.set.diffs");
    realtimeSnapshotsPerCycle = meters.summary("lakestream.sync.cycle.realtime.snapshots");
    cycleTime = meters.timer("lakestream.sync.cycle.duration");
    filesByIndex = meters.counter("lakestream.sync.resolver.files", "resolver", "index");
    filesScanned = meters.counter("lakestream.sync.resolver.files", "resolver", "scan");
    filesSkippedByIndex = meters.counter("lakestream.sync.index.files.skipped");
    lookupsTooLarge = meters.counter("lakestream.sync.index.cycles.scanned");
    deadLettered = meters.counter("lakestream.sync.dead.letters");
    timedOut = meters.counter("lakestream.sync.cycles.timed.out");
    hops = new Hops(meters, Hops.SYNC);
    freshness = Timer.builder("lakestream.main.freshness")
        .description("source commit to main commit")
        .publishPercentiles(0.5, 0.95, 0.99)
        .register(meters);
  }

  void committed(CyclePlan plan, MainCommitted event, long nowMs) {
    cycles.increment();
    keysConverted.increment(event.keysConverted());
    reconvertedDeletes.increment(plan.reconvertedDeletes());
    if (plan.liveSetDiff()) {
      liveSetDiffs.increment();
    }
    realtimeSnapshotsPerCycle.record(plan.realtimeSnapshots());
    cycleTime.record(Duration.ofMillis(Math.max(0, nowMs - plan.plannedAtMs())));
    if (event.maxSourceTsMs() > 0) {
      freshness.record(Duration.ofMillis(Math.max(0, nowMs - event.maxSourceTsMs())));
    }
  }
}
