package dev.lakestream.testkit;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/** Reads a record's headers in tests: a dead letter's reason, topic and offset. */
public final class KafkaHeaders {

  private KafkaHeaders() {}

  /** The last value of header {@code name} as UTF-8 text, or null when the record has none. */
  public static String text(Headers headers, String name) {
    Header header = headers.lastHeader(name);
    return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
  }
}
