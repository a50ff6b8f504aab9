package dev.lakestream.ingest.commit;

import dev.lakestream.common.metrics.Hops;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/** The realtime committer's meters, declared in one place (names as the README lists them). */
final class RealtimeMetrics {

  final Counter commits;
  final Counter replaysSkipped;
  final Counter retries;
  final Counter rowsCommitted;
  final Counter truncates;
  final Counter trimmedRows;
  final Counter startedOver;
  final DistributionSummary filesPerCommit;
  final DistributionSummary bytesPerCommit;
  final Timer commitTime;
  final Timer freshness;
  final Counter overlapping;
  final Counter refused;
  /** The hop from a batch written to its realtime commit. */
  final Hops hops;

  RealtimeMetrics(MeterRegistry meters) {
    overlapping = meters.counter("lakestream.realtime.batches.overlapping");
    refused = meters.counter("lakestream.realtime.batches.refused");
    commits = meters.counter("lakestream.realtime.commits");
    replaysSkipped = meters.counter("lakestream.realtime.replays.skipped");
    retries = meters.counter("lakestream.realtime.commit.retries");
    rowsCommitted = meters.counter("lakestream.realtime.rows.committed");
    truncates = meters.counter("lakestream.realtime.truncates");
    trimmedRows = meters.counter("lakestream.realtime.rows.before.truncate");
    startedOver = meters.counter("lakestream.realtime.batches.positions.started.over");
    filesPerCommit = meters.summary("lakestream.realtime.commit.files");
    bytesPerCommit = meters.summary("lakestream.realtime.commit.bytes");
    commitTime = meters.timer("lakestream.realtime.commit.duration");
    hops = new Hops(meters, Hops.INGEST);
    freshness = Timer.builder("lakestream.realtime.freshness")
        .description("source commit of a commit's newest change to the commit")
        .publishPercentiles(0.5, 0.95, 0.99)
        .register(meters);
  }

  /** A round committed at {@code nowMs}, begun at {@code startedNanos}. */
  void committed(RoundDelta round, long startedNanos, long nowMs) {
    commits.increment();
    rowsCommitted.increment(round.rows);
    filesPerCommit.record(round.files);
    bytesPerCommit.record(round.bytes);
    truncates.increment(round.truncatesApplied);
    trimmedRows.increment(round.rowsTrimmed);
    startedOver.increment(round.startedOverBatches);
    commitTime.record(Duration.ofNanos(System.nanoTime() - startedNanos));
    if (round.maxSourceTsMs > 0) {
      freshness.record(Duration.ofMillis(Math.max(0, nowMs - round.maxSourceTsMs)));
    }
  }
}
