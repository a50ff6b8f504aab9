package dev.lakestream.common.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Dead-letter records: the original key and value bytes, the original headers, and headers that
 * say where the record came from and why it was not applied.
 */
public final class DeadLetters {

  public static final String REASON = "lakestream.error.reason";
  public static final String TOPIC = "lakestream.error.topic";
  public static final String PARTITION = "lakestream.error.partition";
  public static final String OFFSET = "lakestream.error.offset";
  public static final String STAGE = "lakestream.error.stage";

  private DeadLetters() {}

  public static Record<byte[], byte[]> of(
      Record<byte[], byte[]> original,
      String topic,
      int partition,
      long offset,
      String stage,
      String reason) {
    return new Record<>(
        original.key(),
        original.value(),
        original.timestamp(),
        headers(original.headers(), topic, partition, offset, stage, reason));
  }

  /** {@code original} and the headers that say where a record came from and why it was not applied. */
  public static Headers headers(
      Headers original, String topic, int partition, long offset, String stage, String reason) {
    Headers headers = new RecordHeaders(original.toArray());
    headers.add(REASON, utf8(reason));
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
