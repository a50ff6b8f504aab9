package dev.lakestream.launcher.source;

import java.util.List;
import java.util.Map;

/**
 * What a connector's converter settings do to the values ingest receives. Connect's JSON converter
 * replaces a null a column holds with the column's default unless told not to ({@code
 * value.converter.replace.null.with.default=false}, Kafka 3.5+): a NULL in a column declared {@code
 * DEFAULT 'x'} would reach the table as {@code 'x'}.
 */
final class ConverterCheck {

  static final String KEEP_NULLS = "value.converter.replace.null.with.default";

  private ConverterCheck() {}

  /** Adds what the connector's converter settings call for to {@code out} (nothing without a connector). */
  static void check(Map<String, String> connector, List<Finding> out) {
    if (connector.isEmpty()) {
      return;
    }
    if (!"false".equalsIgnoreCase(connector.getOrDefault(KEEP_NULLS, "true").trim())) {
      out.add(new Finding(
          Finding.Level.WARNING,
          KEEP_NULLS,
          "Connect's JSON converter replaces a null a column holds with the column's default:"
              + " a NULL in a column declared with a DEFAULT reaches the table as the default."
              + " Set \"value.converter\": \"org.apache.kafka.connect.json.JsonConverter\" and \""
              + KEEP_NULLS + "\": \"false\" in the connector (the shipped connectors do)"));
    }
  }
}
