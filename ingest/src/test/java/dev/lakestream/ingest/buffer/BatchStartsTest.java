package dev.lakestream.ingest.buffer;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * What a restarted task reads again is decided by the batch-starts entry alone: its start, its end
 * and the offsets left out, as the store holds them.
 */
class BatchStartsTest {

  private static final String P = Batches.prefix("dbserver1.inventory.customers", 3);

  private final KeyValueStore<String, byte[]> store = store();

  @Test
  void whileABatchIsOpenEverythingBelowItsEndWasDecided() {
    BatchStarts starts = new BatchStarts(store);
    starts.leftOut(P, 5); // no open batch: nothing to remember
    starts.passedOver(P, 6);
    assertThat(store.get(P)).isNull();
    starts.added(P, 7);
    starts.passedOver(P, 8);
    starts.added(P, 9);
    // Below the start: flushed, dropped or dead-lettered before the batch opened.
    assertThat(starts.covers(P, 6)).isTrue();
    assertThat(starts.covers(P, 7)).isTrue();
    assertThat(starts.covers(P, 9)).isTrue();
    assertThat(starts.covers(P, 10)).isFalse();

    BatchStarts.Start restarted = new BatchStarts(store).load().get(P);
    assertThat(restarted.first).isEqualTo(7);
    assertThat(restarted.end).isEqualTo(10);
    assertThat(BatchStarts.partitionOf(P).toString()).isEqualTo("dbserver1.inventory.customers-3");

    starts.closed(P);
    assertThat(starts.covers(P, 8)).isFalse();
    assertThat(store.get(P)).isNull();
  }

  @Test
  void aConnectorReplayOfDeletesAndTheirTombstonesIsOneRange() {
    BatchStarts starts = new BatchStarts(store);
    starts.added(P, 100);
    for (long offset = 101; offset < 181; offset += 2) {
      starts.leftOut(P, offset); // a delete the fence drops
      starts.passedOver(P, offset + 1); // its tombstone
    }
    starts.added(P, 181);
    starts.passedOver(P, 182); // a tombstone after an added record joins nothing
    BatchStarts.Start start = new BatchStarts(store).load().get(P);
    assertThat(start.leftOut).hasSize(1);
    assertThat(start.leftOut.get(0)).containsExactly(101, 180);
    assertThat(start.end).isEqualTo(183);
  }

  @Test
  void whatIsLeftOutIsExactlyWhatWasRecordedInWhateverOrder() {
    Random random = new Random(17);
    for (int round = 0; round < 200; round++) {
      KeyValueStore<String, byte[]> store = store();
      BatchStarts starts = new BatchStarts(store);
      TreeSet<Long> model = new TreeSet<>();
      long offset = random.nextInt(1_000);
      starts.added(P, offset);
      for (int i = 0; i < 300; i++) {
        offset += 1 + (random.nextInt(4) == 0 ? random.nextInt(5) : 0);
        switch (random.nextInt(3)) {
          case 0 -> starts.added(P, offset);
          case 1 -> {
            starts.leftOut(P, offset);
            model.add(offset);
          }
          default -> {
            starts.passedOver(P, offset);
            // A tombstone right after a left-out record joins its range: read again, it is passed
            // over either way.
            if (model.contains(offset - 1)) {
              model.add(offset);
            }
          }
        }
      }
      BatchStarts.Start first = starts.load().get(P);
      // Records refused only when read again, anywhere in the batch, in any order.
      for (int i = 0; i < 20; i++) {
        long refused = first.first + random.nextInt((int) (first.end - first.first));
        starts.refusedOnReading(P, refused);
        model.add(refused);
      }
      BatchStarts.Start start = new BatchStarts(store).load().get(P);
      for (long o = start.first - 3; o < start.end + 3; o++) {
        assertThat(start.leftOut(o))
            .as("offset %d left out (round %d)", o, round)
            .isEqualTo(model.contains(o));
      }
      for (int i = 1; i < start.leftOut.size(); i++) {
        assertThat(start.leftOut.get(i)[0])
            .as("ranges ascending and disjoint")
            .isGreaterThan(start.leftOut.get(i - 1)[1]);
      }
    }
  }

  /**
   * While a batch is read again, what is consumed meanwhile only moves its end; those records are
   * decided when they are read, in order, and a restart before that reads them as undecided.
   */
  @Test
  void recordsConsumedWhileABatchIsReadAgainAreDecidedWhenRead() {
    BatchStarts starts = new BatchStarts(store);
    starts.added(P, 10);
    starts.leftOut(P, 11);
    starts.added(P, 12);
    BatchStarts again = new BatchStarts(store);
    again.load();
    again.deferred(P, 13);
    again.deferred(P, 14);
    again.deferred(P, 15);
    assertThat(again.covers(P, 15)).isTrue();
    again.refusedOnReading(P, 12); // decided before: now refused on reading
    again.refusedOnReading(P, 14); // not decided yet: not a refusal on reading
    again.leftOut(P, 13); // the fence drops it now
    BatchStarts.Start start = new BatchStarts(store).load().get(P);
    assertThat(start.first).isEqualTo(10);
    assertThat(start.end).isEqualTo(16);
    assertThat(start.checked).isEqualTo(14);
    for (long o = 10; o <= 15; o++) {
      assertThat(start.leftOut(o)).as("offset %d left out", o).isEqualTo(o >= 11 && o <= 13);
    }

    again.added(P, 14);
    again.passedOver(P, 15);
    start = new BatchStarts(store).load().get(P);
    assertThat(start.checked).isEqualTo(16);
    assertThat(start.end).isEqualTo(16);
  }

  /** A batch flushed while its partition is still read again: the next one starts where reading is. */
  @Test
  void aBatchFlushedWhileReadAgainLeavesTheRestToRead() {
    BatchStarts starts = new BatchStarts(store);
    starts.added(P, 100);
    starts.leftOut(P, 101);
    starts.leftOut(P, 102);
    starts.added(P, 103);
    starts.leftOut(P, 104);
    starts.added(P, 105);
    starts.deferred(P, 110);
    starts.restartAt(P, 102);
    BatchStarts.Start rest = new BatchStarts(store).load().get(P);
    assertThat(rest.first).isEqualTo(102);
    assertThat(rest.end).isEqualTo(111);
    assertThat(rest.checked).isEqualTo(106);
    assertThat(rest.leftOut).hasSize(2);
    assertThat(rest.leftOut.get(0)).containsExactly(102, 102);
    assertThat(rest.leftOut.get(1)).containsExactly(104, 104);
    starts.restartAt(P, 111);
    assertThat(store.get(P)).as("read to its end: nothing left open").isNull();
  }

  /**
   * Offsets the task never consumed before its first record of a partition after a start (the
   * application's offsets moved forward while it was stopped) are left out, and reading goes past
   * them; a first record at the end, or below it, skips nothing.
   */
  @Test
  void offsetsSkippedBeforeTheFirstRecordAfterAStartAreLeftOut() {
    BatchStarts starts = new BatchStarts(store);
    starts.added(P, 10);
    starts.added(P, 11);
    BatchStarts again = new BatchStarts(store);
    again.load();
    again.firstConsumed(P, 11); // consumed again below the end: nothing skipped
    again.firstConsumed(P, 15);
    again.added(P, 15);
    again.firstConsumed(P, 16); // at the end: nothing skipped
    BatchStarts.Start start = new BatchStarts(store).load().get(P);
    for (long o = 10; o <= 16; o++) {
      assertThat(start.leftOut(o)).as("offset %d left out", o).isEqualTo(o >= 12 && o <= 14);
    }
    assertThat(start.end).isEqualTo(16);
    assertThat(start.rangeOf(11)).isNull();
    assertThat(start.rangeOf(12)).as("the skipped run").containsExactly(12, 14);
  }

  /** An entry an earlier version wrote (format 2, no checked offset): all up to its end decided. */
  @Test
  void anEntryWithoutACheckedOffsetWasDecidedToItsEnd() {
    ByteBuffer v2 = ByteBuffer.allocate(1 + 8 + 8 + 4 + 16);
    v2.put((byte) 2).putLong(40).putLong(50).putInt(1).putLong(44).putLong(45);
    BatchStarts.Start start = BatchStarts.decode(v2.array());
    assertThat(start.first).isEqualTo(40);
    assertThat(start.end).isEqualTo(50);
    assertThat(start.checked).isEqualTo(50);
    assertThat(start.leftOut(45)).isTrue();
  }

  private static KeyValueStore<String, byte[]> store() {
    KeyValueStore<String, byte[]> store = Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore("batch-starts"), Serdes.String(), Serdes.ByteArray())
        .withLoggingDisabled()
        .build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
    return store;
  }
}
