package dev.lakestream.launcher.source;

import java.util.List;
import java.util.Map;

/**
 * What a connector's converter and value settings do to the values ingest receives. Connect's JSON
 * converter replaces a null a column holds with the column's default unless told not to ({@code
 * value.converter.replace.null.with.default=false}, Kafka 3.5+): a NULL in a column declared {@code
 * DEFAULT 'x'} would reach the table as {@code 'x'}. Debezium's {@code decimal.handling.mode},
 * {@code time.precision.mode} and {@code binary.handling.mode} other than the shipped connectors'
 * turn decimals into doubles, times into milliseconds, and binary values into text.
 */
final class ConverterCheck {

  static final String KEEP_NULLS = "value.converter.replace.null.with.default";
  static final String DECIMAL_MODE = "decimal.handling.mode";
  static final String TIME_MODE = "time.precision.mode";
  static final String BINARY_MODE = "binary.handling.mode";

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
    if (decimalsAsDoubles(connector)) {
      out.add(new Finding(
          Finding.Level.WARNING,
          DECIMAL_MODE,
          "double: Debezium sends decimal (numeric, money) values as doubles, so their digits"
              + " past the 15th to 17th are lost, and a table keyed by such a column cannot be"
              + " made (Iceberg takes no floating-point key): its changes are dead-lettered. Set"
              + " it to precise (the shipped connectors do), or string"));
    }
    if ("connect".equalsIgnoreCase(connector.getOrDefault(TIME_MODE, "").trim())) {
      out.add(new Finding(
          Finding.Level.WARNING,
          TIME_MODE,
          "connect: Debezium sends times and timestamps in milliseconds, so their microseconds"
              + " are lost on the table. Set it to adaptive (PostgreSQL) or"
              + " adaptive_time_microseconds (MySQL), as the shipped connectors do"));
    }
    String binary = connector.getOrDefault(BINARY_MODE, "bytes").trim();
    if (!binary.equalsIgnoreCase("bytes")) {
      out.add(new Finding(
          Finding.Level.INFO,
          BINARY_MODE,
          binary + ": Debezium sends binary values as " + binary + " text, so the table holds"
              + " them as strings; bytes (the shipped connectors' setting) keeps them binary"));
    }
  }

  /**
   * Whether the connector sends decimal columns as decimals ({@code decimal.handling.mode=precise},
   * Debezium's default), which hold no NaN.
   */
  static boolean decimalsPrecise(Map<String, String> connector) {
    return "precise"
        .equalsIgnoreCase(connector.getOrDefault(DECIMAL_MODE, "precise").trim());
  }

  /** Whether the connector sends decimal columns as doubles ({@code decimal.handling.mode=double}). */
  static boolean decimalsAsDoubles(Map<String, String> connector) {
    return "double".equalsIgnoreCase(connector.getOrDefault(DECIMAL_MODE, "").trim());
  }
}
