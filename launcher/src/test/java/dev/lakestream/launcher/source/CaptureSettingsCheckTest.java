package dev.lakestream.launcher.source;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@link CaptureSettingsCheck} says of each connector setting that loses changes silently. */
class CaptureSettingsCheckTest {

  private static final int POSTGRES_15 = 150000;
  private static final int MYSQL = 0;

  @Test
  void theShippedConnectorsAreNotReported() throws Exception {
    assertThat(findings(shipped("postgres-inventory.json"))).isEmpty();
    assertThat(findings(shipped("examples/postgres-inventory-exactly-once.json")))
        .isEmpty();
    assertThat(findings(shipped("mariadb-inventory.json"), MYSQL)).isEmpty();
    assertThat(findings(shipped("mysql-inventory.json"), MYSQL)).isEmpty();
    assertThat(findings(Map.of())).as("no connector given").isEmpty();
  }

  @Test
  void aMySqlConnectorThatSendsNullForAValueItCannotConvertIsWarnedOf() throws Exception {
    Map<String, String> byDefault = shipped("mariadb-inventory.json");
    byDefault.remove("event.converting.failure.handling.mode");
    assertThat(findings(byDefault, MYSQL))
        .singleElement()
        .asString()
        .startsWith("WARNING  event.converting.failure.handling.mode: warn (Debezium's default): a"
            + " value Debezium cannot convert to the type its schema gives the column is sent as"
            + " null in a nullable column");
    Map<String, String> skip = shipped("mysql-inventory.json");
    skip.put("event.converting.failure.handling.mode", "skip");
    assertThat(findings(skip, MYSQL)).singleElement().asString().startsWith("WARNING  event.conv");
    // PostgreSQL's connector reads each table's columns from the server, not from DDL it parses.
    Map<String, String> postgres = postgres();
    postgres.put("event.converting.failure.handling.mode", "warn");
    assertThat(findings(postgres)).isEmpty();
  }

  @Test
  void withoutAHeartbeatAQuietConnectorKeepsTheSourcesLogAndSoIsWarnedOf() throws Exception {
    Map<String, String> noHeartbeat = postgres();
    noHeartbeat.remove("heartbeat.interval.ms");
    noHeartbeat.remove("heartbeat.action.query");
    assertThat(findings(noHeartbeat))
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.interval.ms: not set: while the captured tables do not"
            + " change, the replication slot keeps every byte of WAL the server writes for other"
            + " tables");
    assertThat(findings(noHeartbeat, 140000))
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.interval.ms: not set: while");
    Map<String, String> mysqlWithout = shipped("mariadb-inventory.json");
    mysqlWithout.remove("heartbeat.interval.ms");
    assertThat(findings(mysqlWithout, MYSQL))
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.interval.ms: not set: while the captured tables do not"
            + " change, the connector's stored binary-log position stays at their last change");
    assertThat(findings(with("heartbeat.interval.ms", "0")))
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.interval.ms: 0: while");

    Map<String, String> beatsWithoutAnEvent = postgres();
    beatsWithoutAnEvent.remove("heartbeat.action.query");
    assertThat(findings(beatsWithoutAnEvent))
        .as("PostgreSQL 15: a heartbeat alone carries no newer position")
        .singleElement()
        .asString()
        .startsWith("WARNING  heartbeat.action.query: not set: while");
    assertThat(findings(beatsWithoutAnEvent, 140000))
        .as("PostgreSQL 14: other tables' transactions reach the connector, empty")
        .isEmpty();
  }

  @Test
  void skippedOperationsAreABlockerForRowsAndAWarningForTruncatesDebeziumsDefaultIncluded()
      throws Exception {
    Map<String, String> unset = postgres();
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
  void settingsThatSkipFailedEventsOrTheSnapshotOrDropTheSlotAreReported() throws Exception {
    assertThat(findings(with("event.processing.failure.handling.mode", "warn")))
        .singleElement()
        .asString()
        .startsWith("WARNING  event.processing.failure.handling.mode: warn: a change event"
            + " Debezium fails to make is skipped (at most a log line)");
    assertThat(findings(with("event.processing.failure.handling.mode", "fail"))).isEmpty();
    assertThat(findings(with("errors.tolerance", "all")))
        .singleElement()
        .asString()
        .startsWith("WARNING  errors.tolerance: all: Kafka Connect drops a record its converter"
            + " or transforms fail on, or its producer cannot send");
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
  void transformsThatReshapeOrFilterTheEventsAndConvertersOtherThanJsonAreReported()
      throws Exception {
    Map<String, String> connector = postgres();
    connector.put("transforms", "unwrap, keep ,route,flat,only");
    connector.put("transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState");
    connector.put("transforms.keep.type", "io.debezium.transforms.Filter");
    connector.put("transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter");
    connector.put("transforms.flat.type", "org.apache.kafka.connect.transforms.Flatten$Value");
    connector.put("transforms.only.type", "io.confluent.connect.transforms.Filter$Value");
    connector.put("value.converter", "io.confluent.connect.avro.AvroConverter");
    connector.remove("key.converter");
    assertThat(findings(connector))
        .satisfiesExactly(
            f -> assertThat(f)
                .startsWith("BLOCKER  transforms.unwrap:"
                    + " io.debezium.transforms.ExtractNewRecordState reshapes each change event"),
            f -> assertThat(f)
                .startsWith("WARNING  transforms.keep: io.debezium.transforms.Filter drops the"
                    + " records its condition selects"),
            f -> assertThat(f)
                .startsWith("INFO     transforms.route:"
                    + " org.apache.kafka.connect.transforms.RegexRouter changes each record"),
            f -> assertThat(f)
                .startsWith("BLOCKER  transforms.flat:"
                    + " org.apache.kafka.connect.transforms.Flatten$Value reshapes each change"
                    + " event"),
            f -> assertThat(f)
                .startsWith("WARNING  transforms.only:"
                    + " io.confluent.connect.transforms.Filter$Value drops the records"),
            f -> assertThat(f)
                .startsWith("INFO     key.converter: not set: the worker's own applies"),
            f -> assertThat(f)
                .startsWith("BLOCKER  value.converter: io.confluent.connect.avro.AvroConverter:"
                    + " ingest reads the records Connect's JSON converter writes"));
  }

  /** The shipped PostgreSQL connector's settings, to change. */
  private static Map<String, String> postgres() throws Exception {
    return shipped("postgres-inventory.json");
  }

  private static Map<String, String> with(String name, String value) throws Exception {
    Map<String, String> connector = postgres();
    connector.put(name, value);
    return connector;
  }

  /** The {@code config} of a connector JSON in the repository's {@code connectors/} folder. */
  private static Map<String, String> shipped(String file) throws Exception {
    Path here = Path.of("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      Path json = p.resolve("connectors").resolve(file);
      if (Files.exists(json)) {
        Map<String, String> config = new HashMap<>();
        new ObjectMapper()
            .readTree(json.toFile())
            .get("config")
            .fields()
            .forEachRemaining(e -> config.put(e.getKey(), e.getValue().asText()));
        return config;
      }
    }
    throw new IllegalStateException("no connectors/" + file + " above " + here);
  }

  private static List<String> findings(Map<String, String> connector) {
    return findings(connector, POSTGRES_15);
  }

  /** {@code postgresVersion}: the PostgreSQL server's version, {@link #MYSQL} for MySQL or MariaDB. */
  private static List<String> findings(Map<String, String> connector, int postgresVersion) {
    List<Finding> out = new ArrayList<>();
    if (postgresVersion > 0) {
      CaptureSettingsCheck.checkPostgres(connector, out, postgresVersion);
    } else {
      CaptureSettingsCheck.checkMySql(connector, out);
    }
    return out.stream().map(Finding::toString).toList();
  }
}
