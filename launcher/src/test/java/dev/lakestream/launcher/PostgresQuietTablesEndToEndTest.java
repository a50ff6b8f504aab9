package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.Eventually;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;

/**
 * Captured tables that do not change while the server writes to others, on real PostgreSQL 15,
 * Debezium 3.6.1 and Kafka. pgoutput sends nothing of a transaction that changes no published
 * table, so the connector has no event to confirm a newer position with, and its replication slot
 * keeps all the WAL written since the captured tables' last change: on a busy server that fills its
 * disk. Debezium's heartbeat alone carries no newer position either; the shipped connector's
 * heartbeat query emits a logical decoding message (kept out of Kafka by its prefix), which gives
 * it one every 10 s, and the slot follows the server.
 */
class PostgresQuietTablesEndToEndTest {

  private static final TableIdentifier ITEMS = TableIdentifier.of("inventory", "items");
  private static final long MIB = 1024 * 1024;

  @Test
  void theShippedHeartbeatKeepsTheSlotFollowingTheServerWhileTheCapturedTablesAreQuiet()
      throws Exception {
    // Debezium's heartbeat every second, without the shipped query.
    Map<String, String> heartbeatAlone =
        Map.of("heartbeat.interval.ms", "1000", "heartbeat.action.query", "");
    try (PostgresPipeline p = PostgresPipeline.start(
        heartbeatAlone,
        "CREATE TABLE inventory.items (id int PRIMARY KEY, v text)",
        "INSERT INTO inventory.items SELECT g, 'v' || g FROM generate_series(1, 10) g",
        "CREATE TABLE public.busy (id serial PRIMARY KEY, v text)")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));

      // A heartbeat alone: the slot keeps what other tables' writes put in the WAL.
      long written = writeToAnotherTable(p);
      Thread.sleep(5_000); // five heartbeats, had they carried a newer position
      assertThat(confirmedBehind(p))
          .as("WAL the slot keeps behind the server, with a heartbeat but no event")
          .isGreaterThanOrEqualTo(written);

      // The shipped connector (its heartbeat), registered again under its name: it goes on from
      // its offsets, and the slot follows the server.
      Map<String, String> shipped = new HashMap<>();
      shipped.put("signal.data.collection", PostgresPipeline.SIGNAL_TABLE);
      // Its action query as shipped, every second rather than every 10 s (the slot followed on the
      // second heartbeat).
      shipped.put("heartbeat.interval.ms", "1000");
      p.connect.deleteConnector("inventory-postgres");
      PostgresEndToEndTest.registerConnector(p.connect, p.postgres, shipped);
      writeToAnotherTable(p);
      Eventually.until(
          Duration.ofSeconds(120),
          "the slot's confirmed position within 1 MiB of the server's",
          () -> confirmedBehind(p) < MIB);
      Eventually.until(
          Duration.ofSeconds(120),
          "the slot's restart position within 8 MiB of the server's (its WAL freed)",
          () -> slotBehind(p, "restart_lsn") < 8 * MIB);

      // The captured table's changes still arrive, and the heartbeat's messages stay out of Kafka
      // (only Debezium's heartbeat topic, which ingest does not read).
      p.postgres.execute("UPDATE inventory.items SET v = 'after' WHERE id = 1");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      try (Admin admin = p.kafka.admin()) {
        assertThat(admin.listTopics().names().get())
            .contains("__debezium-heartbeat.dbserver1")
            .noneMatch(topic -> topic.startsWith("dbserver1.") && topic.endsWith("message"));
      }
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("items"));
    }
  }

  /** Writes about 24 MiB of WAL for a table the connector does not capture; returns how much. */
  private static long writeToAnotherTable(PostgresPipeline p) throws Exception {
    long before = walPosition(p);
    for (int i = 0; i < 40; i++) {
      p.postgres.execute(
          "INSERT INTO public.busy (v) SELECT repeat('x', 500) FROM generate_series(1, 1000)");
    }
    return walPosition(p) - before;
  }

  private static long walPosition(PostgresPipeline p) throws Exception {
    try (var c = p.postgres.connect();
        var rs = c.createStatement()
            .executeQuery("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long confirmedBehind(PostgresPipeline p) throws Exception {
    return slotBehind(p, "confirmed_flush_lsn");
  }

  /** How far the connector's slot's {@code column} is behind the server's WAL, in bytes. */
  private static long slotBehind(PostgresPipeline p, String column) throws Exception {
    try (var c = p.postgres.connect();
        var rs = c.createStatement()
            .executeQuery("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), " + column
                + ")::bigint FROM pg_replication_slots WHERE slot_name = 'lakestream'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String differs(PostgresPipeline p) throws Exception {
    return p.differs("SELECT * FROM inventory.items", ITEMS, List.of("id"));
  }
}
