package dev.lakestream.ingest.buffer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.ingest.commit.SourceOffsets;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * What a task keeps of its partitions' last flushes, as a task started again (on the same store)
 * reads it: the offset a waiting flush waits for, and since when it has waited.
 */
class FlushedOffsetsTest {

  private static final String TOPIC = "dbserver1.inventory.documents";
  private static final String TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";
  private static final UUID TABLE = UUID.randomUUID();

  @Test
  void aTaskStartedAgainKnowsWhenThePartitionsLastFlushWasHandedOff() {
    KeyValueStore<String, Long> store = store();
    new FlushedOffsets(store).flushed(TOPIC, 2, 41, TOPIC_ID, TABLE, 1_000);

    FlushedOffsets again = new FlushedOffsets(store);
    SourceOffsets none = SourceOffsets.empty();
    assertThat(again.lastFlushed(TOPIC, 2, TOPIC_ID, none, TABLE)).isEqualTo(41);
    assertThat(again.lastFlushedAtMs(TOPIC, 2))
        .as("the wait for offset 41 to reach realtime began at its hand-off, not at the restart")
        .isEqualTo(1_000);
    assertThat(again.lastFlushedAtMs(TOPIC, 3)).isNull();
  }

  @Test
  void aFlushRecordedBeforeItsTimeWasKeptHasNone() {
    KeyValueStore<String, Long> store = store();
    store.put(SourceOffsets.partitionKey(TOPIC, 2), 41L); // as earlier versions wrote it
    assertThat(new FlushedOffsets(store).lastFlushedAtMs(TOPIC, 2)).isNull();
  }

  private static KeyValueStore<String, Long> store() {
    KeyValueStore<String, Long> store = Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore(FlushedOffsets.STORE), Serdes.String(), Serdes.Long())
        .withLoggingDisabled()
        .build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
    return store;
  }
}
