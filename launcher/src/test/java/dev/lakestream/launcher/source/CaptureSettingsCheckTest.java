package dev.lakestream.launcher.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@link CaptureSettingsCheck} says of each connector setting that loses changes silently. */
class CaptureSettingsCheckTest {

  private static final Map<String, String> SHIPPED = Map.of(
      "skipped.operations",
      "none",
      "snapshot.mode",
      "initial",
      "key.converter",
      CaptureSettingsCheck.JSON_CONVERTER,
      "value.converter",
      CaptureSettingsCheck.JSON_CONVERTER,
      "heartbeat.interval.ms",
      "10000",
      "heartbeat.action.query",
      "SELECT pg_logical_emit_message(false, 'lakestream_heartbeat', now()::varchar)");

  @Test
  void theShippedSettingsAreNotReported() {
    assertThat(findings(SHIPPED)).isEmpty();
    assertThat(findings(SHIPPED, false)).as("MySQL and MariaDB").isEmpty();
    assertThat(findings(Map.of())).as("no connector given").isEmpty();
  }

  @Test
  void withoutAHeartbeatAQuietConnectorKeepsTheSourcesLogAndSoIsWarnedOf() {
    Map<String, String> noHeartbeat = new HashMap<>(SHIPPED);
    noHeartbeat.remove("heartbeat.interval.ms");
    noHeartbeat.remove("heartbeat.action.query");
    assertThat(findings(noHeartbeat))
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.interval.ms: not set: while the captured tables do not"
            + " change, the replication slot keeps every byte of WAL the server writes for other"
            + " tables");
    assertThat(findings(noHeartbeat, false))
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.interval.ms: not set: while the captured tables do not"
            + " change, the connector's stored binary-log position stays at their last change");
    assertThat(findings(with("heartbeat.interval.ms", "0")))
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.interval.ms: 0: while");
    Map<String, String> beatsWithoutAnEvent = new HashMap<>(SHIPPED);
    beatsWithoutAnEvent.remove("heartbeat.action.query");
    assertThat(findings(beatsWithoutAnEvent))
        .as("PostgreSQL: a heartbeat alone carries no newer position")
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.action.query: not set: while");
    assertThat(findings(beatsWithoutAnEvent, false))
        .as("MySQL: the heartbeat alone does")
        .isEmpty();
  }

  @Test
  void skippedOperationsAreABlockerForRowsAndAWarningForTruncatesDebeziumsDefaultIncluded() {
    Map<String, String> unset = new HashMap<>(SHIPPED);
    unset.remove("skipped.operations");
    assertThat(findings(unset))
        .containsExactly("WARNING  skipped.operations: not set, so Debezium's default t: Debezium"
            + " publishes no TRUNCATE, and main keeps every row a TRUNCATE removes. Set"
            + " \"skipped.operations\": \"none\" (the shipped connectors do)");
    assertThat(findings(with("skipped.operations", " t ")))
        .singleElement()
        .asString()
        .startsWith("WARNING  skipped.operations: t: Debezium publishes no TRUNCATE");
    assertThat(findings(with("skipped.operations", "d,t")))
        .singleElement()
        .asString()
        .startsWith("BLOCKER  skipped.operations: d,t: Debezium publishes no deletes, so main"
            + " never equals the source.");
    assertThat(findings(with("skipped.operations", "c, u")))
        .singleElement()
        .asString()
        .startsWith("BLOCKER  skipped.operations: c, u: Debezium publishes no inserts, updates,");
  }

  @Test
  void settingsThatSkipFailedEventsOrTheSnapshotOrDropTheSlotAreReported() {
    assertThat(findings(with("event.processing.failure.handling.mode", "warn")))
        .singleElement()
        .asString()
        .startsWith("WARNING  event.processing.failure.handling.mode: warn: a change event"
            + " Debezium fails to make is logged and skipped");
    assertThat(findings(with("event.processing.failure.handling.mode", "fail"))).isEmpty();
    assertThat(findings(with("errors.tolerance", "all")))
        .singleElement()
        .asString()
        .startsWith("WARNING  errors.tolerance: all: Kafka Connect drops a record");
    assertThat(findings(with("snapshot.mode", "no_data")))
        .singleElement()
        .asString()
        .startsWith("WARNING  snapshot.mode: no_data: the rows a table holds when the connector"
            + " starts are never read");
    assertThat(findings(with("snapshot.mode", "initial_only")))
        .singleElement()
        .asString()
        .startsWith("WARNING  snapshot.mode: initial_only: the connector stops after its snapshot");
    assertThat(findings(with("snapshot.mode", "when_needed"))).isEmpty();
    assertThat(findings(with("slot.drop.on.stop", "true")))
        .singleElement()
        .asString()
        .startsWith("BLOCKER  slot.drop.on.stop: true: the replication slot is dropped whenever");
  }

  @Test
  void transformsThatFlattenOrFilterTheEventsAndConvertersOtherThanJsonAreReported() {
    Map<String, String> connector = new HashMap<>(SHIPPED);
    connector.put("transforms", "unwrap, keep ,route");
    connector.put("transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState");
    connector.put("transforms.keep.type", "io.debezium.transforms.Filter");
    connector.put("transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter");
    connector.put("value.converter", "io.confluent.connect.avro.AvroConverter");
    connector.remove("key.converter");
    assertThat(findings(connector))
        .satisfiesExactly(
            f -> assertThat(f)
                .startsWith(
                    "BLOCKER  transforms.unwrap: io.debezium.transforms.ExtractNewRecordState"
                        + " flattens each change event to its row"),
            f -> assertThat(f)
                .startsWith("WARNING  transforms.keep: io.debezium.transforms.Filter drops the"
                    + " records its condition selects"),
            f -> assertThat(f)
                .startsWith(
                    "INFO     transforms.route: org.apache.kafka.connect.transforms.RegexRouter"
                        + " changes each record"),
            f -> assertThat(f)
                .startsWith("INFO     key.converter: not set: the worker's own applies"),
            f -> assertThat(f)
                .startsWith("BLOCKER  value.converter: io.confluent.connect.avro.AvroConverter:"
                    + " ingest reads the records Connect's JSON converter writes"));
  }

  private static Map<String, String> with(String name, String value) {
    Map<String, String> connector = new HashMap<>(SHIPPED);
    connector.put(name, value);
    return connector;
  }

  private static List<String> findings(Map<String, String> connector) {
    return findings(connector, true);
  }

  private static List<String> findings(Map<String, String> connector, boolean postgres) {
    List<Finding> out = new ArrayList<>();
    CaptureSettingsCheck.check(connector, out, postgres);
    return out.stream().map(Finding::toString).toList();
  }
}
