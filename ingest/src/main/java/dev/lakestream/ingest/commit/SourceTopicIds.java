package dev.lakestream.ingest.commit;

/**
 * The ID Kafka gave each source topic when it was created. A topic deleted and created again under
 * the same name has another, and its offsets start again at 0; {@link SourceOffsets} records the ID
 * beside the offsets, so offsets of the old topic are not taken for the new one's.
 */
@FunctionalInterface
public interface SourceTopicIds {

  /**
   * The ID of {@code topic} as the brokers know it at {@code notBeforeMs} (wall-clock ms) or later,
   * or null when it is not known (the topic does not exist now, or no broker gives IDs).
   */
  String current(String topic, long notBeforeMs);

  /** No ID known for any topic: offsets are taken as they are recorded. */
  static SourceTopicIds unknown() {
    return (topic, notBeforeMs) -> null;
  }
}
