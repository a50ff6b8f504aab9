package dev.lakestream.ingest.fence;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.TestTable;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** The fence as a restarted task reads it from its store: its position, keys and commit time. */
class SourceFenceStateTest {

  private static final String TOPIC = "app.accounts";

  private final TestTable table = TestTable.plain("app", "accounts");
  private final DebeziumDecoder decoder = new DebeziumDecoder();

  @Test
  void aFenceReadFromItsStoreDropsReplaysAndSeesASourceThatStartedOver() {
    KeyValueStore<String, String> store = store();
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 87);
    List<Change> before = events(gen.next(50));
    SourceFence first = new SourceFence(store, new SimpleMeterRegistry());
    for (int i = 0; i < before.size(); i++) {
      assertThat(first.admit(TOPIC, 0, i, event(before.get(i)), false)).isTrue();
    }

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    SourceFence restarted = new SourceFence(store, meters);
    assertThat(restarted.admit(TOPIC, 0, 50, event(before.get(before.size() - 1)), false))
        .as("the last change applied, published again")
        .isFalse();
    assertThat(restarted.admit(TOPIC, 0, 51, event(before.get(10)), false)).isFalse();
    gen.startOver(100, 5_000);
    Change fromTheNewSource = events(gen.next(1)).get(0);
    assertThat(restarted.admit(TOPIC, 0, 52, event(fromTheNewSource), false))
        .as("a change of a source whose positions started over")
        .isTrue();
    assertThat(meters.counter("lakestream.ingest.fence.started.over").count()).isEqualTo(1);
    assertThat(meters.counter("lakestream.ingest.fenced").count()).isEqualTo(2);

    SourceFence again = new SourceFence(store, new SimpleMeterRegistry());
    assertThat(again.admit(TOPIC, 0, 53, event(fromTheNewSource), false))
        .as("the new source's change, published again after another restart")
        .isFalse();
  }

  @Test
  void aReplayThatCommittedWithinTheToleranceOfTheFenceIsDropped() {
    KeyValueStore<String, String> store = store();
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 88);
    List<Change> changes = events(gen.next(20));
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    SourceFence fence = new SourceFence(store, meters);
    changes.forEach(c -> fence.admit(TOPIC, 0, 0, event(c), false));
    Change last = changes.get(changes.size() - 1);
    // Commit times may run slightly out of log order (PostgreSQL takes a commit's time before it
    // writes the commit record).
    Change earlierInTheLog = new Change(
        'u',
        table,
        changes.get(0).key(),
        changes.get(0).before(),
        changes.get(0).after(),
        last.sourceTsMs() + SourceFence.STARTED_OVER_AFTER_MS,
        changes.get(0).lsn());
    assertThat(fence.admit(TOPIC, 0, 21, event(earlierInTheLog), false)).isFalse();
    assertThat(meters.counter("lakestream.ingest.fence.started.over").count()).isZero();
  }

  /**
   * A change logged before another can carry a later commit time: a MySQL row event carries its
   * statement's start (in seconds), so a short transaction that commits while a long statement runs
   * is logged before the statement's rows with a later time. Its replay is still a replay: the fence
   * keeps the latest commit time applied, not the time of the change that set it.
   */
  @Test
  void aReplayOfAChangeLoggedBeforeAnEarlierCommitTimeIsDropped() {
    KeyValueStore<String, String> store = store();
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 90);
    List<Change> changes = events(gen.next(2));
    Change longStatement = changes.get(1);
    Change shortTransaction =
        at(changes.get(0), longStatement.sourceTsMs() + 5 * SourceFence.STARTED_OVER_AFTER_MS);
    SourceFence fence = new SourceFence(store, new SimpleMeterRegistry());
    assertThat(fence.admit(TOPIC, 0, 0, event(shortTransaction), false)).isTrue();
    assertThat(fence.admit(TOPIC, 0, 1, event(longStatement), false)).isTrue();

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    SourceFence restarted = new SourceFence(store, meters);
    assertThat(restarted.admit(TOPIC, 0, 2, event(shortTransaction), false))
        .as("the short transaction, published again")
        .isFalse();
    assertThat(restarted.admit(TOPIC, 0, 3, event(longStatement), false)).isFalse();
    assertThat(meters.counter("lakestream.ingest.fence.started.over").count()).isZero();
    assertThat(meters.counter("lakestream.ingest.fenced").count()).isEqualTo(2);
  }

  /**
   * A commit time far ahead of this machine's clock (a source clock far off, a corrupt {@code
   * ts_ms}) is not believed: below the fence it does not show a source that started over, and above
   * it the time kept is bounded, so it cannot hide a later start over for good.
   */
  @Test
  void aCommitTimeFarAheadOfThisClockIsNotBelieved() {
    KeyValueStore<String, String> store = store();
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 91);
    List<Change> changes = events(gen.next(10));
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    SourceFence fence = new SourceFence(store, meters);
    changes.forEach(c -> assertThat(fence.admit(TOPIC, 0, 0, event(c), false)).isTrue());
    long farAhead = System.currentTimeMillis() + 10 * SourceFence.BELIEVED_AHEAD_MS;
    assertThat(fence.admit(TOPIC, 0, 10, event(at(changes.get(3), farAhead)), false))
        .as("a replay with a commit time ten hours ahead")
        .isFalse();
    assertThat(meters.counter("lakestream.ingest.fence.started.over").count()).isZero();

    Change next = events(gen.next(1)).get(0);
    assertThat(fence.admit(TOPIC, 0, 11, event(at(next, Long.MAX_VALUE)), false))
        .isTrue();
    String kept = store.get(TOPIC + "-0");
    long keptMs =
        Long.parseLong(kept.substring(kept.indexOf('@') + 1, kept.indexOf(';', kept.indexOf('@'))));
    assertThat(keptMs)
        .as("the latest commit time kept, from " + kept)
        .isLessThanOrEqualTo(System.currentTimeMillis() + SourceFence.BELIEVED_AHEAD_MS);
  }

  private Change at(Change change, long sourceTsMs) {
    return new Change(
        change.op(),
        table,
        change.key(),
        change.before(),
        change.after(),
        sourceTsMs,
        change.lsn());
  }

  /**
   * A fence kept by the version before commit times: replays are still dropped, and so is a change
   * of a source that started over, until a change moves the fence and gives it a commit time.
   */
  @Test
  void aFenceWithoutACommitTimeDropsReplaysUntilAChangeMovesIt() {
    KeyValueStore<String, String> store = store();
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 89);
    List<Change> before = events(gen.next(10));
    ChangeEvent last = event(before.get(before.size() - 1));
    long[] position = last.source().order().orElseThrow();
    store.put(TOPIC + "-0", position[0] + "," + position[1] + ",0;1;" + last.keyJson());

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    SourceFence fence = new SourceFence(store, meters);
    assertThat(fence.admit(TOPIC, 0, 10, last, false))
        .as("the change that set it, again")
        .isFalse();
    gen.startOver(100, 5_000);
    List<Change> fromTheNewSource = events(gen.next(3));
    assertThat(fence.admit(TOPIC, 0, 11, event(fromTheNewSource.get(0)), false))
        .as("below a fence without a commit time")
        .isFalse();
    gen.startOver(position[1] + 1_000, 5_000);
    Change later = events(gen.next(1)).get(0);
    assertThat(fence.admit(TOPIC, 0, 12, event(later), false)).isTrue();
    assertThat(fence.admit(TOPIC, 0, 13, event(fromTheNewSource.get(1)), false))
        .as("below the fence the change moved, committed before it")
        .isFalse();
    gen.startOver(100, 5_000);
    assertThat(fence.admit(TOPIC, 0, 14, event(events(gen.next(1)).get(0)), false))
        .as("a change of a source that started over, now that the fence has a commit time")
        .isTrue();
    assertThat(meters.counter("lakestream.ingest.fence.started.over").count()).isEqualTo(1);
  }

  /**
   * A key of megabytes (the connector's records may reach 16 MiB) is kept as its digest: the
   * store's records stay small (one larger than a Kafka record failed the task's commit at every
   * attempt), and a replay of its change is still known after a restart.
   */
  @Test
  void aKeyOfMegabytesIsKeptAsItsDigestAndItsReplayIsStillDropped() {
    TestTable notes = TestTable.textKeyed("app", "notes");
    String huge = "k".repeat(2_000_000);
    Change change =
        new Change('c', notes, List.of(huge), null, Map.of("code", huge, "n", 1L), 1_000, 5_000);
    KeyValueStore<String, String> store = store();
    SourceFence fence = new SourceFence(store, new SimpleMeterRegistry());
    assertThat(fence.admit("dbserver1.app.notes", 0, 0, event(change), false)).isTrue();
    try (KeyValueIterator<String, String> all = store.all()) {
      all.forEachRemaining(e -> assertThat(e.key.length() + e.value.length())
          .as("a record of the fence's store")
          .isLessThan(SourceFence.LONGEST_KEY + 200));
    }

    SourceFence restarted = new SourceFence(store, new SimpleMeterRegistry());
    assertThat(restarted.admit("dbserver1.app.notes", 0, 1, event(change), false))
        .as("the change published again")
        .isFalse();
  }

  /**
   * The first transaction a connector streams after its snapshot carries no commit LSN, and a
   * connector that starts again before it has recorded a commit sends it again the same way. The
   * fence's task has moved meanwhile (a fence made again from the store): the replay is still
   * known, and dropped. Applied again, its row would have stayed as it left it: the replay of the
   * next change is dropped by its position.
   */
  @Test
  void aReplayWithoutACommitLsnIsDroppedAfterTheTaskMoved() {
    KeyValueStore<String, String> store = store();
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 88);
    List<Change> changes = events(gen.next(20));
    SourceFence first = new SourceFence(store, new SimpleMeterRegistry());
    for (int i = 0; i < changes.size(); i++) {
      ChangeEvent event = i < 5 ? withoutCommitLsn(changes.get(i)) : event(changes.get(i));
      assertThat(first.admit(TOPIC, 0, i, event, false)).isTrue();
    }

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    SourceFence moved = new SourceFence(store, meters);
    for (int i = 0; i < changes.size(); i++) {
      ChangeEvent event = i < 5 ? withoutCommitLsn(changes.get(i)) : event(changes.get(i));
      assertThat(moved.admit(TOPIC, 0, 20 + i, event, false))
          .as("change %s published again", i)
          .isFalse();
    }
    assertThat(meters.counter("lakestream.ingest.fenced").count()).isEqualTo(changes.size());
    Change next = events(gen.next(1)).get(0);
    assertThat(moved.admit(TOPIC, 0, 40, withoutCommitLsn(next), false))
        .as("a change without a commit LSN not applied before")
        .isTrue();
  }

  /** The changes that are not tombstones. */
  private static List<Change> events(List<Change> changes) {
    return changes.stream().filter(c -> !c.isTombstone()).toList();
  }

  /** The change as the connector sends it in the first transaction it streams. */
  private ChangeEvent withoutCommitLsn(Change change) {
    return decoder
        .decode(
            DebeziumJson.key(change, true),
            DebeziumJson.withoutCommitLsn(DebeziumJson.value(change, true)))
        .orElseThrow();
  }

  private ChangeEvent event(Change change) {
    return decoder
        .decode(DebeziumJson.key(change, true), DebeziumJson.value(change, true))
        .orElseThrow();
  }

  private static KeyValueStore<String, String> store() {
    KeyValueStore<String, String> store = Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore(SourceFence.STORE), Serdes.String(), Serdes.String())
        .withLoggingDisabled()
        .build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
    return store;
  }
}
