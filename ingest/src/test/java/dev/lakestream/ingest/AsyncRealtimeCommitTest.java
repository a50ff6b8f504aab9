package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The realtime committer with {@code ingest.commit.async} on (the default): commits run on the
 * committer's own thread, and the stream thread applies what they did at a later punctuation. The
 * other TopologyTestDriver tests commit on the stream thread; the Kafka tests run this default.
 */
class AsyncRealtimeCommitTest {

  private static final Duration PATIENCE = Duration.ofSeconds(120);

  @BeforeEach
  @AfterEach
  void resetGate() {
    GatedFileIO.reset();
  }

  private static IngestDriver driver(TestTable table) throws Exception {
    return new IngestDriver(
        List.of(table.topic()),
        Map.of(
            IngestConfig.COMMIT_ASYNC,
            "true",
            PipelineConfig.CATALOG_PREFIX + "io-impl",
            GatedFileIO.class.getName()));
  }

  @Test
  void commitsRunOnTheCommittersThreadAndRealtimeEqualsTheSourceAfterEach() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = driver(table)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 44);
      Random random = new Random(44);
      ingest.send(gen.snapshot(200), true);
      GatedFileIO.WRITERS.clear(); // the table's creation wrote its first (empty) snapshots
      List<RealtimeCommitted> announced = new ArrayList<>();
      for (int round = 1; round <= 8; round++) {
        ingest.send(gen.next(1 + random.nextInt(300)), true);
        ingest.flushOnly();
        pumpUntil(ingest, "the realtime commit of round " + round, () -> {
          announced.addAll(ingest.realtimeCommits.readValuesToList());
          return ingest.realtimeDiffersFromModel(table) == null;
        });
      }
      long head = ingest.table(table).snapshot(Branches.REALTIME).snapshotId();
      pumpUntil(ingest, "the announcement of realtime's head", () -> {
        announced.addAll(ingest.realtimeCommits.readValuesToList());
        return !announced.isEmpty() && announced.get(announced.size() - 1).snapshotId() == head;
      });
      assertThat(announced).as("commits announced").hasSizeGreaterThanOrEqualTo(8);
      assertThat(GatedFileIO.WRITERS)
          .as("threads that wrote the commits' manifests")
          .isNotEmpty()
          .allSatisfy(name -> assertThat(name).startsWith("lakestream-realtime-commit-"));
    }
  }

  /**
   * A batch that arrives under the key of one being committed (it starts at the same source offset:
   * the offsets were reset) replaces it in the store; the commit in flight must not take it away.
   */
  @Test
  void aBatchReplacedUnderItsKeyWhileItsCommitRunsIsCommittedAfterIt() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = driver(table)) {
      holdTheFirstCommit(ingest, new ChangeStreamGenerator(table, 45));
      FilesWritten first = ingest.filesWritten.readValue();

      FilesWritten replacement = replacing(first, first.lastOffset() + 5);
      ingest.filesWrittenIn.pipeInput(first.table(), replacement);
      GatedFileIO.open();

      pumpUntil(ingest, "the replacing batch's offsets on realtime", () -> {
        ingest.realtimeCommits.readValuesToList();
        return lastCommitted(ingest, table, first) == replacement.lastOffset();
      });
      assertThat(ingest.counter("lakestream.realtime.batches.overlapping"))
          .as("the replacement was committed as an overlapping batch")
          .isEqualTo(1.0);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  @Test
  void aCommitThatFailsOnItsThreadFailsTheTask() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = driver(table)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 46);
      ingest.send(gen.snapshot(20), true);
      GatedFileIO.WRITERS.clear(); // the table's creation wrote its first (empty) snapshots
      int created = ingest.realtimeSnapshots(table).size();
      GatedFileIO.fail();
      ingest.flushOnly();

      assertThatThrownBy(() -> pumpUntil(ingest, "a failure", () -> false))
          .as("the commit's failure reaches the stream thread")
          .hasStackTraceContaining("gated failure writing");
      assertThat(GatedFileIO.WRITERS)
          .as("the failed write was the commit's, on its thread")
          .isNotEmpty()
          .allSatisfy(name -> assertThat(name).startsWith("lakestream-realtime-commit-"));
      assertThat(ingest.realtimeSnapshots(table))
          .as("nothing committed after the table's creation")
          .hasSize(created);
    }
  }

  /**
   * A table that reaches 64 pending batches while a commit hangs (a slow catalog) waits for it a
   * few seconds, not until it ends: the stream thread, which holds the task's transaction open and
   * must poll, goes on; the batches wait in the store and are all committed once it ends.
   */
  @Test
  void aFullTableWaitsForAHangingCommitOnlyAWhile() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = driver(table)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 47);
      holdTheFirstCommit(ingest, gen);

      int batches = 70;
      for (int i = 0; i < batches; i++) {
        ingest.send(gen.next(3), true);
        ingest.flushOnly(); // each flush reaches the committer as one pending batch
      }
      assertThat(ingest.pendingBatches().approximateNumEntries())
          .as("batches the stream thread took in while the commit hung at the gate")
          .isGreaterThanOrEqualTo(batches);

      GatedFileIO.open();
      pumpUntil(ingest, "every pending batch on realtime", () -> {
        ingest.realtimeCommits.readValuesToList();
        return ingest.realtimeDiffersFromModel(table) == null;
      });
      pumpUntil(ingest, "the pending store emptied", () -> {
        ingest.realtimeCommits.readValuesToList();
        return ingest.pendingBatches().approximateNumEntries() == 0;
      });
    }
  }

  /** Sends a snapshot of 20 rows and lets their batch's commit start, held at the gate. */
  private static void holdTheFirstCommit(IngestDriver ingest, ChangeStreamGenerator gen)
      throws InterruptedException {
    ingest.send(gen.snapshot(20), true);
    GatedFileIO.shut();
    ingest.flushOnly();
    ingest.commitOnly();
    GatedFileIO.awaitHeld();
  }

  /** {@code batch} as a batch of the same key that holds no files and ends at {@code lastOffset}. */
  private static FilesWritten replacing(FilesWritten batch, long lastOffset) {
    return new FilesWritten(
        batch.table(),
        batch.sourceTopic(),
        batch.sourcePartition(),
        batch.firstOffset(),
        lastOffset,
        0,
        0,
        0,
        batch.maxSourceTsMs(),
        List.of(),
        List.of(),
        batch.writtenAtMs() + 1,
        batch.changelogTable(),
        List.of(),
        batch.minPosition(),
        batch.maxPosition(),
        null,
        batch.tableUuid(),
        batch.sourceTopicId());
  }

  private static long lastCommitted(IngestDriver ingest, TestTable table, FilesWritten batch) {
    return SourceOffsets.of(ingest.table(table), Branches.REALTIME)
        .last(batch.sourceTopic(), batch.sourcePartition());
  }

  /** Advances the driver's clock in small steps (the committer's polls) until {@code done}. */
  private static void pumpUntil(IngestDriver ingest, String what, BooleanSupplier done)
      throws InterruptedException {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waited " + PATIENCE.toSeconds() + " s for " + what);
      }
      ingest.advance(20);
      Thread.sleep(5);
    }
  }
}
