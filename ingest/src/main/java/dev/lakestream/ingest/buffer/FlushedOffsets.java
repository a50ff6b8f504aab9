package dev.lakestream.ingest.buffer;

import dev.lakestream.ingest.commit.SourceOffsets;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The task's flushed-offsets store: per source partition, the last offset it flushed, and which
 * topic the partition's state in the task is of (a fingerprint of the topic's Kafka ID, beside it
 * under {@code topic:partition NUL topic-id}), its last flush and its open batch. A topic deleted
 * and created again under its name starts its offsets at 0 again: what the task kept of the old one
 * (a flushed offset to wait for, an open batch to read again) does not apply to the new one.
 *
 * <p>Beside the offset, a fingerprint of the UUID of the table it was flushed to ({@code
 * topic:partition NUL table}). A table dropped and made again (the README's way to take a table
 * again) records none of the old one's offsets: a flush waiting for them on the new table would
 * wait forever, so a flush to another table than the one recorded has nothing to wait for.
 */
final class FlushedOffsets {

  static final String STORE = "flushed-offsets";

  private static final String TOPIC_SUFFIX = "\u0000topic-id";
  private static final String TABLE_SUFFIX = "\u0000table";
  private static final String AT_SUFFIX = "\u0000at";

  private final KeyValueStore<String, Long> store;

  FlushedOffsets(KeyValueStore<String, Long> store) {
    this.store = store;
  }

  /**
   * The last offset the partition flushed from the topic of ID {@code topicId} to the table of UUID
   * {@code tableUuid}; null when nothing was, it was from an earlier topic of that name, or to
   * another table (one since dropped). A flush recorded before topic IDs were counts as this topic's
   * unless the table's offsets ({@code committed}) are another topic's; one recorded before table
   * UUIDs were, as this table's.
   */
  Long lastFlushed(
      String topic, int partition, String topicId, SourceOffsets committed, UUID tableUuid) {
    String key = SourceOffsets.partitionKey(topic, partition);
    Long last = store.get(key);
    if (last == null) {
      return null;
    }
    Long table = store.get(key + TABLE_SUFFIX);
    if (table != null && tableUuid != null && table != fingerprint(tableUuid.toString())) {
      return null;
    }
    if (topicId == null) {
      return last;
    }
    Long of = store.get(key + TOPIC_SUFFIX);
    boolean sameTopic = of == null ? committed.follows(topic, topicId) : of == fingerprint(topicId);
    return sameTopic ? last : null;
  }

  /**
   * The partition flushed up to {@code lastOffset}, from the topic of ID {@code topicId}, to the
   * table of UUID {@code tableUuid}.
   */
  void flushed(
      String topic, int partition, long lastOffset, String topicId, UUID tableUuid, long nowMs) {
    String key = SourceOffsets.partitionKey(topic, partition);
    store.put(key, lastOffset);
    store.put(key + AT_SUFFIX, nowMs);
    store.put(key + TOPIC_SUFFIX, topicId == null ? null : fingerprint(topicId));
    store.put(key + TABLE_SUFFIX, tableUuid == null ? null : fingerprint(tableUuid.toString()));
  }

  /**
   * When the partition's last flush was handed to the committer (null when recorded before this
   * was kept): a flush waiting for it to reach realtime has waited since then at least, whatever
   * restarts came between.
   */
  Long lastFlushedAtMs(String topic, int partition) {
    return store.get(SourceOffsets.partitionKey(topic, partition) + AT_SUFFIX);
  }

  /**
   * The task reads the partition from the topic of ID {@code topicId}: its state is that topic's
   * from now on, and a flush recorded for another topic is forgotten.
   */
  void reading(String topic, int partition, String topicId) {
    if (topicId == null) {
      return;
    }
    String key = SourceOffsets.partitionKey(topic, partition);
    Long of = store.get(key + TOPIC_SUFFIX);
    long now = fingerprint(topicId);
    if (of == null || of != now) {
      if (of != null) {
        store.delete(key);
      }
      store.put(key + TOPIC_SUFFIX, now);
    }
  }

  /** Whether the partition's state is of a topic other than the one of ID {@code topicId}. */
  boolean ofAnotherTopic(String topic, int partition, String topicId) {
    if (topicId == null) {
      return false;
    }
    Long of = store.get(SourceOffsets.partitionKey(topic, partition) + TOPIC_SUFFIX);
    return of != null && of != fingerprint(topicId);
  }

  /** 64 bits of a topic ID or a table UUID, to tell them apart in a store of longs. */
  static long fingerprint(String id) {
    return UUID.nameUUIDFromBytes(id.getBytes(StandardCharsets.UTF_8)).getMostSignificantBits();
  }
}
