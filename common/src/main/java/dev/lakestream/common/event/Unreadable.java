package dev.lakestream.common.event;

import org.apache.kafka.common.serialization.Deserializer;

/**
 * A record whose value is not the event its topic carries (malformed, forged, or of a newer format
 * version than this reader knows): what {@link #lenient} hands to the processor instead of failing,
 * so the processor dead-letters it with the reason and the records after it flow on.
 *
 * @param value the record's value as it was
 * @param error why it could not be read
 */
public record Unreadable(byte[] value, String error) implements CycleInput {

  /** {@code deserializer}, answering an {@link Unreadable} where it would throw. */
  public static Deserializer<Object> lenient(Deserializer<?> deserializer) {
    return (topic, bytes) -> {
      if (bytes == null) {
        return null;
      }
      try {
        return deserializer.deserialize(topic, bytes);
      } catch (RuntimeException e) {
        return new Unreadable(bytes, e.getMessage() == null ? e.toString() : e.getMessage());
      }
    };
  }
}
