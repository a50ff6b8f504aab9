package dev.lakestream.common.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Dead-letter records: the original key and value bytes, the original headers, and headers that
 * say where the record came from and why it was not applied.
 *
 * <p>A dead letter must fit its topic, or its send fails the task, which reads the same record
 * again and fails again: a record whose key and value together exceed {@link #MAX_RECORD_BYTES}
 * goes without its value, and without its key too when that alone is too large ({@link #OMITTED}
 * says how many bytes were left out; the original stays at its topic, partition and offset). A
 * reason longer than {@link #MAX_REASON_CHARS} is cut.
 */
public final class DeadLetters {

  public static final String REASON = "lakestream.error.reason";
  public static final String TOPIC = "lakestream.error.topic";
  public static final String PARTITION = "lakestream.error.partition";
  public static final String OFFSET = "lakestream.error.offset";
  public static final String STAGE = "lakestream.error.stage";
  /** Set when the original value (and a key too large alone) was left out: the bytes left out. */
  public static final String OMITTED = "lakestream.error.omitted";

  /**
   * The most bytes of the original key and value a dead letter carries: half of Kafka's default
   * {@code max.request.size} and {@code max.message.bytes} (1 MiB), leaving room for the headers.
   */
  public static final int MAX_RECORD_BYTES = 512 * 1024;

  /** The longest reason a dead letter carries (an error's message can quote a whole value). */
  public static final int MAX_REASON_CHARS = 8 * 1024;

  private DeadLetters() {}

  public static Record<byte[], byte[]> of(
      Record<byte[], byte[]> original,
      String topic,
      int partition,
      long offset,
      String stage,
      String reason) {
    Headers headers = headers(original.headers(), topic, partition, offset, stage, reason);
    int keyBytes = original.key() == null ? 0 : original.key().length;
    int valueBytes = original.value() == null ? 0 : original.value().length;
    if ((long) keyBytes + valueBytes <= MAX_RECORD_BYTES) {
      return new Record<>(original.key(), original.value(), original.timestamp(), headers);
    }
    // The key (a row's primary key) is kept when it fits alone.
    boolean keepKey = keyBytes <= MAX_RECORD_BYTES;
    headers.add(
        OMITTED,
        utf8((keepKey ? "" : "key " + keyBytes + " bytes, ") + "value " + valueBytes + " bytes"));
    return new Record<>(keepKey ? original.key() : null, null, original.timestamp(), headers);
  }

  /**
   * {@code values}, for a sink that writes to {@code deadLetterTopic} among others: a value bound
   * for that topic larger than {@link #MAX_RECORD_BYTES} is left out (null, with {@link #OMITTED}),
   * as {@link #of} leaves it out. For dead letters forwarded as the events they were (an unreadable
   * one as its bytes), whose size is known only once serialized.
   */
  public static <T> Serializer<T> capped(Serializer<T> values, String deadLetterTopic) {
    return new Serializer<>() {
      @Override
      public byte[] serialize(String topic, T data) {
        return serialize(topic, new RecordHeaders(), data);
      }

      @Override
      public byte[] serialize(String topic, Headers headers, T data) {
        byte[] bytes = values.serialize(topic, headers, data);
        if (bytes == null || bytes.length <= MAX_RECORD_BYTES || !topic.equals(deadLetterTopic)) {
          return bytes;
        }
        headers.add(OMITTED, utf8("value " + bytes.length + " bytes"));
        return null;
      }
    };
  }

  /** {@code original} and the headers that say where a record came from and why it was not applied. */
  public static Headers headers(
      Headers original, String topic, int partition, long offset, String stage, String reason) {
    Headers headers = new RecordHeaders(original.toArray());
    headers.add(
        REASON,
        utf8(
            reason.length() <= MAX_REASON_CHARS
                ? reason
                : reason.substring(0, MAX_REASON_CHARS) + "... (" + reason.length()
                    + " characters)"));
    headers.add(TOPIC, utf8(topic));
    headers.add(PARTITION, utf8(Integer.toString(partition)));
    headers.add(OFFSET, utf8(Long.toString(offset)));
    headers.add(STAGE, utf8(stage));
    return headers;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
