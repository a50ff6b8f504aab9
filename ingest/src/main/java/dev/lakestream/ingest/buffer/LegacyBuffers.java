package dev.lakestream.ingest.buffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The change buffer's stores as earlier versions kept them, with a changelog each: after an
 * upgrade, Kafka Streams restores the batches that were open into them. Their entries are copied
 * into the buffer (its batches on the heap, its change-log store) when a task starts and stay where
 * they are, durable, until their batch is flushed; then they are removed. Batches opened since are
 * read again from the source topics instead ({@link SourceReplay}); these stores get no new
 * entries.
 */
final class LegacyBuffers {

  private final List<KeyValueStore<String, BufferedChange>> legacy;
  private final List<BiConsumer<String, BufferedChange>> current;
  /** The legacy entries still in place, by batch prefix: which store, which key. */
  private final Map<String, List<Map.Entry<Integer, String>>> left = new HashMap<>();

  /** {@code legacy.get(i)}'s entries (store key, stored value) go to {@code current.get(i)}. */
  LegacyBuffers(
      List<KeyValueStore<String, BufferedChange>> legacy,
      List<BiConsumer<String, BufferedChange>> current) {
    this.legacy = legacy;
    this.current = current;
  }

  /** Copies every legacy entry to where it goes now; returns how many there were. */
  int migrate() {
    int copied = 0;
    for (int i = 0; i < legacy.size(); i++) {
      try (KeyValueIterator<String, BufferedChange> it = legacy.get(i).all()) {
        while (it.hasNext()) {
          KeyValue<String, BufferedChange> entry = it.next();
          current.get(i).accept(entry.key, entry.value);
          left.computeIfAbsent(prefixOf(entry.key), p -> new ArrayList<>())
              .add(Map.entry(i, entry.key));
          copied++;
        }
      }
    }
    return copied;
  }

  /** The batch with this prefix is flushed: its legacy entries go. */
  void cleared(String prefix) {
    if (left.isEmpty()) {
      return;
    }
    List<Map.Entry<Integer, String>> entries = left.remove(prefix);
    if (entries != null) {
      entries.forEach(e -> legacy.get(e.getKey()).put(e.getValue(), null));
    }
  }

  private static String prefixOf(String storeKey) {
    int first = storeKey.indexOf('\u0000');
    int second = storeKey.indexOf('\u0000', first + 1);
    return storeKey.substring(0, second + 1);
  }
}
