package dev.lakestream.ingest.buffer;

import dev.lakestream.common.metrics.Hops;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/** The change buffer's meters, declared in one place (names as the README lists them). */
final class IngestMetrics {

  final Counter changesIn;
  final Counter tombstones;
  final Counter alreadyCommitted;
  /**
   * Source partitions found (at a task's start) to be of a topic deleted and created again since
   * the table's offsets were committed.
   */
  final Counter topicRecreated;

  final Counter deadLettered;
  /** Changes of a table listed to keep a change log not logged: the log's name is another table's. */
  final Counter changelogSkipped;

  final Counter flushes;
  final Counter rowsWritten;
  final Counter keysWritten;
  final Counter filesWritten;
  final Counter bytesWritten;
  final Timer flushTime;
  /** Changes whose unchanged TOAST values were filled, from the batch or from the table. */
  final Counter unavailableFilledInBatch;

  final Counter unavailableFilledFromTable;
  /** Lookups of previous rows on realtime: how many, the files and bytes they read, their time. */
  final Timer previousRowLookups;

  final Counter previousRowFiles;
  final Counter previousRowBytes;
  /**
   * Flush attempts whose lookup of previous rows spent its budget and goes on at the next attempt,
   * the partition's later records held back meanwhile.
   */
  final Counter previousRowLookupsResumed;
  /** Flushes held back until the partition's earlier batches were on realtime. */
  final Counter flushesPostponed;
  /** Flushes reported on /health for waiting that long for the partition's earlier batches. */
  final Counter flushWaitsReported;
  /** Batches flushed early because the task's open batches held more than the heap allows. */
  final Counter flushesForMemory;
  /** Changes of open batches read again from the source topics after a restart or rebalance. */
  final Counter replayed;
  /** Due batches left to the next punctuation: the task's flushes had spent its round's time. */
  final Counter flushesLeftForNextRound;

  final Counter deferred;
  /**
   * Deletes of a PostgreSQL row that shared its key with a row the same transaction had moved in
   * (a DEFERRABLE key), applied to the other row only.
   */
  final Counter otherRowDeletes;
  /** TRUNCATEs read before any change created their table: kept for the committer until one does. */
  final Counter truncatesBeforeTable;
  /** The hops of a change through ingest: to Kafka, to ingest, in the buffer. */
  final Hops hops;

  IngestMetrics(MeterRegistry meters) {
    changesIn = meters.counter("lakestream.ingest.changes");
    tombstones = meters.counter("lakestream.ingest.tombstones");
    alreadyCommitted = meters.counter("lakestream.ingest.already.committed");
    topicRecreated = meters.counter("lakestream.ingest.source.topic.recreated");
    deadLettered = meters.counter("lakestream.ingest.dead.letters");
    changelogSkipped = meters.counter("lakestream.ingest.changelog.skipped");
    flushes = meters.counter("lakestream.ingest.flushes");
    rowsWritten = meters.counter("lakestream.ingest.rows.written");
    keysWritten = meters.counter("lakestream.ingest.delete.keys.written");
    filesWritten = meters.counter("lakestream.ingest.files.written");
    bytesWritten = meters.counter("lakestream.ingest.bytes.written");
    flushTime = meters.timer("lakestream.ingest.flush.duration");
    unavailableFilledInBatch =
        meters.counter("lakestream.ingest.unavailable.values.filled", "from", "batch");
    unavailableFilledFromTable =
        meters.counter("lakestream.ingest.unavailable.values.filled", "from", "table");
    previousRowLookups = meters.timer("lakestream.ingest.previous.row.lookup.duration");
    previousRowFiles = meters.counter("lakestream.ingest.previous.row.files.read");
    previousRowBytes = meters.counter("lakestream.ingest.previous.row.bytes.read");
    previousRowLookupsResumed = meters.counter("lakestream.ingest.previous.row.lookup.resumed");
    flushesPostponed = meters.counter("lakestream.ingest.flushes.postponed");
    flushWaitsReported = meters.counter("lakestream.ingest.flushes.long.waits");
    flushesForMemory = meters.counter("lakestream.ingest.flushes.buffer.full");
    replayed = meters.counter("lakestream.ingest.changes.read.again");
    flushesLeftForNextRound = meters.counter("lakestream.ingest.flushes.next.round");
    deferred = meters.counter("lakestream.ingest.changes.deferred");
    otherRowDeletes = meters.counter("lakestream.ingest.deletes.of.other.row");
    truncatesBeforeTable = meters.counter("lakestream.ingest.truncates.before.table");
    hops = new Hops(meters, Hops.INGEST);
  }
}
