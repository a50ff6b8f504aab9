package dev.lakestream.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Settings a benchmark run adds to the apps: {@code -Dbench.set="KEY=VALUE;..."} (Kafka Streams and
 * client properties as Kafka names them, or the apps' own), to compare a setting against the
 * defaults on the same machine and hour.
 */
final class BenchSettings {

  private BenchSettings() {}

  /** The settings of {@code -Dbench.set}, none when it is not given. */
  static Map<String, String> given() {
    Map<String, String> out = new LinkedHashMap<>();
    for (String pair : System.getProperty("bench.set", "").split(";")) {
      if (pair.isBlank()) {
        continue;
      }
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("bench.set wants KEY=VALUE pairs, not " + pair);
      }
      out.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
    }
    return out;
  }
}
