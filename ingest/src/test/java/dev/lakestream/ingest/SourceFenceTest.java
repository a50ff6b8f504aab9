package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.ingest.fence.SourceFence;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * Replays from the source connector (the same changes published again after a Connect restart)
 * never move a row backwards: they are dropped by their source position and counted.
 */
class SourceFenceTest {

  @Test
  void replaysAfterACommitAndWithinABatchAreDroppedAndCounted() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 81);
      ingest.send(gen.snapshot(200), true);
      List<Change> changes = gen.next(600);
      ingest.send(changes.subList(0, 300), true);
      ingest.flushAndCommit();

      // The connector restarts from an older offset: changes 200..299 again, then new ones.
      long replayed = replay(ingest, changes.subList(200, 300));
      ingest.send(changes.subList(300, 450), true);
      // A second replay inside the open batch, before it is flushed.
      replayed += replay(ingest, changes.subList(350, 450));
      ingest.send(changes.subList(450, 600), true);
      ingest.flushAndCommit();

      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.counter("lakestream.ingest.fenced")).isEqualTo(replayed).isGreaterThan(100);
    }
  }

  @Test
  void rowsThatShareASourcePositionAreEachAppliedOnceAndTheirReplaysDropped() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 85);
      // A COPY of 2,000 rows, 150 per WAL record, in two batches.
      List<Change> copy = gen.copy(2_000, 150);
      ingest.send(copy.subList(0, 1_000), true);
      ingest.flushAndCommit();
      ingest.send(copy.subList(1_000, 1_620), true);
      assertThat(ingest.counter("lakestream.ingest.fenced")).isZero();
      // The connector restarts in the middle of a record (offset stored after row 1,530 of 1,620):
      // the rows it publishes again are dropped, whichever of a shared position's rows they are.
      long replayed = replay(ingest, copy.subList(1_530, 1_620));
      ingest.send(copy.subList(1_620, 2_000), true);
      replayed += replay(ingest, copy.subList(960, 1_700));
      ingest.send(gen.next(200), true);
      ingest.flushAndCommit();

      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.realtimeRows(table)).hasSizeGreaterThan(2_000);
      assertThat(ingest.counter("lakestream.ingest.fenced")).isEqualTo(replayed);
    }
  }

  @Test
  void withTheFenceOffReplaysAreAppliedAgain() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest =
        new IngestDriver(List.of(table.topic()), Map.of(IngestConfig.SOURCE_FENCE, "false"))) {
      ChangeStreamGenerator gen =
          new ChangeStreamGenerator(table, 84, new ChangeStreamGenerator.Mix(0, 1, 0, 0, 0, 0));
      ingest.send(gen.snapshot(20), true);
      List<Change> updates = gen.next(200);
      ingest.send(updates, true);
      ingest.flushAndCommit();
      replay(ingest, updates.subList(0, 100));
      ingest.flushAndCommit();
      assertThat(ingest.counter("lakestream.ingest.fenced")).isZero();
      assertThat(ingest.realtimeDiffersFromModel(table))
          .as("older values applied again: rows moved back")
          .isNotNull();
    }
  }

  @Test
  void aRepeatedSnapshotIsAppliedNotFenced() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 82);
      List<Change> snapshot = gen.snapshot(100);
      ingest.send(snapshot, true);
      ingest.send(gen.next(100), true);
      ingest.flushAndCommit();
      // Snapshot reads carry the row's state when read; a connector that snapshots again sends the
      // current rows, which are applied (here the test re-sends the same reads of rows unchanged
      // since).
      List<Change> unchanged = snapshot.stream()
          .filter(c -> ingest.model(table).contains(c.key())
              && ingest.model(table).row(c.key()).equals(c.after()))
          .toList();
      ingest.send(unchanged, true);
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.counter("lakestream.ingest.fenced")).isZero();
    }
  }

  @Test
  void theDeleteAndCreateOfAPrimaryKeyUpdateShareAPositionAndBothApply() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen =
          new ChangeStreamGenerator(table, 83, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      Change insert = gen.next(1).get(0);
      ingest.send(List.of(insert), true);
      List<Object> newKey = List.of(((Number) insert.key().get(0)).longValue() + 1_000_000);
      Map<String, Object> moved = new LinkedHashMap<>(insert.after());
      moved.put("id", newKey.get(0));
      long lsn = insert.lsn() + 10;
      ingest.send(
          new Change('d', table, insert.key(), insert.after(), null, insert.sourceTsMs() + 1, lsn),
          headers("__debezium.newkey"));
      ingest.send(
          new Change('c', table, newKey, null, moved, insert.sourceTsMs() + 1, lsn),
          headers(SourceFence.OLD_KEY_HEADER));
      ingest.flushAndCommit();

      assertThat(ingest.realtimeRows(table)).containsOnlyKeys(newKey);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.counter("lakestream.ingest.fenced")).isZero();
    }
  }

  /**
   * The connector is pointed at another database holding the same rows (a blue/green upgrade): its
   * log positions are lower than the fence, its commit times later. Its changes are applied, not
   * dropped as replays, and the fence starts again from them: a replay of the new source is dropped.
   */
  @Test
  void changesOfASourceThatStartedOverAreAppliedAndItsReplaysDropped() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 86);
      ingest.send(gen.snapshot(200), true);
      ingest.send(gen.next(300), true);
      ingest.flushAndCommit();

      gen.startOver(1_000, 30_000);
      List<Change> fromTheNewSource = gen.next(400);
      ingest.send(fromTheNewSource.subList(0, 300), true);
      long replayed = replay(ingest, fromTheNewSource.subList(100, 300));
      ingest.send(fromTheNewSource.subList(300, 400), true);
      ingest.flushAndCommit();

      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.counter("lakestream.ingest.fence.started.over")).isEqualTo(1);
      assertThat(ingest.counter("lakestream.ingest.fenced")).isEqualTo(replayed);
    }
  }

  /** Publishes the changes again, as a restarted connector does; returns how many are not tombstones. */
  private static long replay(IngestDriver ingest, List<Change> changes) {
    long events = 0;
    for (Change c : changes) {
      ingest.sendRaw(c.table().topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      if (!c.isTombstone()) {
        events++;
      }
    }
    return events;
  }

  private static RecordHeaders headers(String name) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(name, "{}".getBytes(StandardCharsets.UTF_8));
    return headers;
  }
}
