package dev.lakestream.ingest.buffer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.ingest.toast.UnavailableValues;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.TestTable;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The open batches as the change buffer keeps them, on the heap. Entries an earlier version left in
 * its changelogged store are restored into them, so a change of a key the restored batch already
 * holds replaces it and takes the values it lacks from it; what the batches hold is counted, per
 * batch and for the task.
 */
class BatchesTest {

  private static final Set<String> TOASTED = Set.of("name", "doc", "blob");

  private final TestTable table = TestTable.wide("inventory", "documents");
  private final DebeziumDecoder decoder = new DebeziumDecoder();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final IngestMetrics metrics = new IngestMetrics(meters);
  private final KeyValueStore<String, byte[]> schemaStore = store(Serdes.ByteArray());

  @Test
  void aBatchRestoredFromAnEarlierVersionsStoreKnowsItsKeysAndFillsFromTheChangesItHolds() {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 3).keepingValues(1.0);
    List<Change> rows = gen.snapshot(3);
    SchemaTexts texts = new SchemaTexts(schemaStore);
    Batches batches = batches();
    for (int i = 0; i < rows.size(); i++) {
      // As the earlier version's store held them: schema texts left out.
      byte[] key = DebeziumJson.key(rows.get(i), true);
      byte[] value = DebeziumJson.value(rows.get(i), true, Set.of());
      BufferedChange stored = texts.compact(new BufferedChange(i, 0, key, value));
      assertThat(stored.value())
          .as("the legacy entry refers to its schema text")
          .startsWith(0);
      batches.restore(Batches.prefix(table.topic(), 0) + decode(key, value).keyJson(), stored, 0);
    }
    assertThat(batches.open()).hasSize(1);
    Batches.Batch batch = batches.open().values().iterator().next();
    assertThat(batch.keys).isEqualTo(3);

    Change update = gen.updates(List.of(rows.get(0).key())).get(0);
    add(batches, update, 3, TOASTED);
    Change insert = gen.snapshot(1).get(0);
    add(batches, insert, 4, Set.of());

    assertThat(batch.keys).as("the update replaced its key's change").isEqualTo(4);
    List<Batches.Entry> entries = batches.entries(batch);
    assertThat(entries).hasSize(4);
    assertThat(batch.bytes).as("the bytes the batch holds").isEqualTo(held(batches, batch));
    assertThat(batches.bytes()).isEqualTo(batch.bytes);
    assertThat(entries)
        .as("entries are held without their schema texts, and read back as they came")
        .allSatisfy(e -> {
          assertThat(e.held().value()).startsWith(0);
          assertThat(e.change().value()).startsWith('{');
        });
    assertThat(entries.get(0).held().value())
        .hasSizeLessThan(DebeziumJson.value(rows.get(0), true).length / 2);
    BufferedChange filled = entries.stream()
        .filter(e -> e.change().offset() == 3)
        .findFirst()
        .orElseThrow()
        .change();
    ChangeEvent real = decode(DebeziumJson.key(update, true), DebeziumJson.value(update, true));
    assertThat(decode(filled.key(), filled.value()).after())
        .as("the placeholders replaced by the restored change's values")
        .isEqualTo(real.after());
    assertThat(metrics.unavailableFilledInBatch.count()).isEqualTo(1);
  }

  @Test
  void theTaskCountsWhatItsBatchesHoldAndKnowsTheLargest() {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 6);
    Batches batches = batches();
    List<Change> rows = gen.snapshot(6);
    for (int i = 0; i < rows.size(); i++) {
      add(batches, rows.get(i), i % 3 == 0 ? 0 : 1, i, Set.of());
    }
    // A key's later change replaces its earlier one: counted once.
    add(batches, gen.updates(List.of(rows.get(1).key())).get(0), 1, 6, Set.of());
    long sum = 0;
    Batches.Batch largest = null;
    for (Batches.Batch batch : batches.open().values()) {
      long held = held(batches, batch);
      assertThat(batch.bytes).as("partition %d", batch.partition).isEqualTo(held);
      sum += held;
      if (largest == null || batch.bytes > largest.bytes) {
        largest = batch;
      }
    }
    assertThat(batches.open()).hasSize(2);
    assertThat(batches.bytes()).isEqualTo(sum);
    assertThat(batches.largest(0)).isSameAs(largest);
    // A batch whose flush waits for realtime is passed over until its retry.
    largest.retryAtMs = 100;
    Batches.Batch other = batches.open().values().stream()
        .filter(b -> b.partition == 0)
        .findFirst()
        .orElseThrow();
    assertThat(batches.largest(99)).isSameAs(other);
    assertThat(batches.largest(100)).isSameAs(largest);
    assertThat(largest.partition).as("four keys against two").isEqualTo(1);

    batches.clear(largest, true);
    Batches.Batch left = batches.open().values().iterator().next();
    assertThat(batches.bytes()).isEqualTo(left.bytes);
    assertThat(batches.largest(0)).isSameAs(left);
    batches.clear(left, true);
    assertThat(batches.bytes()).isZero();
    assertThat(batches.largest(0)).isNull();
  }

  @Test
  void aClearedBatchLeavesNothingBehind() {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 4);
    Batches batches = batches();
    List<Change> rows = gen.snapshot(5);
    for (int i = 0; i < rows.size(); i++) {
      add(batches, rows.get(i), i, Set.of());
    }
    Batches.Batch batch = batches.open().values().iterator().next();
    batches.clear(batch, true);
    assertThat(batches.open()).isEmpty();
    assertThat(batches.bytes()).isZero();
    // The same keys again open a new batch that counts them afresh.
    add(batches, rows.get(0), 5, Set.of());
    assertThat(batches.open().values().iterator().next().keys).isEqualTo(1);
  }

  @Test
  void aChangeStoredAsItCameKeepsItsDecodedFormAndAFilledOrRestoredOneDoesNot() {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 5).keepingValues(1.0);
    List<Change> rows = gen.snapshot(3);
    Batches batches = batches();
    for (int i = 0; i < rows.size(); i++) {
      add(batches, rows.get(i), i, Set.of());
    }
    // Filled from the key's change in the batch: stored with other bytes than it came with.
    add(batches, gen.updates(List.of(rows.get(0).key())).get(0), 3, TOASTED);
    Batches.Batch batch = batches.open().values().iterator().next();

    for (Batches.Entry e : batches.entries(batch)) {
      // What a flush reads without putting the record's bytes back together.
      assertThat(e.offset()).isEqualTo(e.change().offset());
      assertThat(e.sourceTsMs()).isEqualTo(e.change().sourceTsMs());
      assertThat(e.previousKey()).isEqualTo(e.change().previousKey());
      if (e.change().offset() == 3) {
        assertThat(e.decoded()).as("the filled change").isNull();
      } else {
        assertThat(e.decoded()).as("change at %d", e.change().offset()).isNotNull();
        assertThat(e.decoded().event())
            .as("the kept form is what its stored bytes decode to")
            .isEqualTo(decode(e.change().key(), e.change().value()));
      }
    }

    batches.clear(batch, true);
    add(batches, rows.get(1), 4, Set.of());
    Batches.Batch next = batches.open().values().iterator().next();
    assertThat(batches.entries(next)).singleElement().satisfies(e -> assertThat(
            e.decoded().event())
        .isEqualTo(decode(e.change().key(), e.change().value())));
  }

  @Test
  void aTaskKeepsAtMostItsShareOfDecodedChangesAndGetsItBackWhenABatchIsFlushed() {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(TestTable.plain("inventory", "many"), 7);
    Batches batches = batches();
    List<Change> rows = gen.snapshot(Batches.MAX_DECODED + 10);
    for (int i = 0; i < rows.size(); i++) {
      add(batches, rows.get(i), i % 2, i, Set.of());
    }
    assertThat(decodedIn(batches)).isEqualTo(Batches.MAX_DECODED);
    Batches.Batch first = batches.open().values().iterator().next();
    long freed =
        batches.entries(first).stream().filter(e -> e.decoded() != null).count();
    batches.clear(first, true);
    List<Change> more = gen.snapshot(Batches.MAX_DECODED);
    for (int i = 0; i < more.size(); i++) {
      add(batches, more.get(i), 2, rows.size() + i, Set.of());
    }
    assertThat(decodedIn(batches))
        .as("the flushed batch's share is kept for the changes after it")
        .isEqualTo(Batches.MAX_DECODED);
    assertThat(batches.entries(batches.open().values().stream()
            .filter(b -> b.partition == 2)
            .findFirst()
            .orElseThrow()))
        .filteredOn(e -> e.decoded() != null)
        .hasSize((int) freed);
  }

  /** What a batch's entries hold, summed entry by entry. */
  private static long held(Batches batches, Batches.Batch batch) {
    return batches.entries(batch).stream()
        .mapToLong(e -> Batches.sizeOf(e.key(), e.held()))
        .sum();
  }

  private long decodedIn(Batches batches) {
    return batches.open().values().stream()
        .flatMap(b -> batches.entries(b).stream())
        .filter(e -> e.decoded() != null)
        .count();
  }

  private void add(Batches batches, Change change, long offset, Set<String> toasted) {
    add(batches, change, 0, offset, toasted);
  }

  private void add(
      Batches batches, Change change, int partition, long offset, Set<String> toasted) {
    byte[] key = DebeziumJson.key(change, true);
    byte[] value = DebeziumJson.value(change, true, toasted);
    batches.add(
        table.topic(),
        partition,
        offset,
        new Admission.Admitted(null, decode(key, value), false, null, null),
        key,
        value,
        null,
        false,
        0);
  }

  private ChangeEvent decode(byte[] key, byte[] value) {
    return decoder.decode(key, value).orElseThrow();
  }

  private Batches batches() {
    return new Batches(
        new SchemaTexts(schemaStore),
        decoder,
        new UnavailableValues(UnavailableValues.DEBEZIUM_DEFAULT),
        metrics,
        Set.of());
  }

  private static <V> KeyValueStore<String, V> store(Serde<V> values) {
    KeyValueStore<String, V> store = Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore("store"), Serdes.String(), values)
        .withLoggingDisabled()
        .build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
    return store;
  }
  /**
   * A batch whose flush waits for its partition's earlier batches takes its turn after the batches
   * opened before its last attempt: it does not take every round's time from those behind it.
   */
  @Test
  void aBatchWaitingForItsPartitionsEarlierBatchesTakesItsTurnAfterItsLastAttempt() {
    long tick = 100;
    Batches.Batch waiting = new Batches.Batch("t", 0, 1_000);
    Batches.Batch second = new Batches.Batch("t", 1, 2_000);
    Batches.Batch third = new Batches.Batch("t", 2, 3_000);
    List<Batches.Batch> due = new ArrayList<>(List.of(third, second, waiting));
    due.sort(Comparator.comparingLong(b -> b.flushTurn(tick)));
    assertThat(due).as("never attempted: oldest first").containsExactly(waiting, second, third);

    waiting.postponedSinceMs = 2_400;
    waiting.retryAtMs = 2_500 + tick; // attempted last at 2,500
    due.sort(Comparator.comparingLong(b -> b.flushTurn(tick)));
    assertThat(due).containsExactly(second, waiting, third);
  }
}
