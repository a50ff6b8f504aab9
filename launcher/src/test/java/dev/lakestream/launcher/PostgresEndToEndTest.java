package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/**
 * The whole path on real parts: PostgreSQL with logical replication → the Debezium Postgres
 * connector in a Kafka Connect worker (registered over its REST API with {@code
 * connectors/postgres-inventory.json}) → Kafka → the ingest app → the sync app, all with
 * exactly-once. A random workload over two tables (one with a composite key) with inserts,
 * updates, deletes and primary-key updates; at the end main equals {@code SELECT *} value for value
 * and Verify passes. Prints freshness (source commit → on main) percentiles.
 */
class PostgresEndToEndTest {

  private static final int CHANGES = 10_000;

  @Test
  void postgresThroughDebeziumIngestAndSyncEqualsSelectStar() throws Exception {
    long started = System.currentTimeMillis();
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      InventoryDatabase db = new InventoryDatabase(postgres::connect, 42);
      db.create(200);
      PipelineConfig shared = shared(kafka, warehouse);
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(app(shared, "sync"));
          KafkaChangeFeed feed =
              new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel())) {
        Catalog reader = warehouse.catalog();
        ingest.start();
        sync.start();
        registerConnector(connect, postgres);
        // The snapshot arrives first; then the workload, one change at a time as users make them.
        Eventually.noDifference(Duration.ofSeconds(120), () -> db.mainDiffers(reader));
        long workloadStart = System.currentTimeMillis();
        List<Long> txids = new ArrayList<>();
        int changes = db.runWorkload(CHANGES, 10, txids, () -> false);
        long workloadMs = System.currentTimeMillis() - workloadStart;
        Eventually.noDifference(Duration.ofSeconds(180), () -> db.mainDiffers(reader));
        long convergedMs = System.currentTimeMillis() - workloadStart;

        assertInvariants(reader);
        // Main can equal the source before it mirrors the last changes that changed nothing (a
        // delete of a key that never existed): wait until its snapshots hold every change.
        int inTopics = InventoryDatabase.changesInTopics(kafka.bootstrapServers());
        Eventually.until(
            Duration.ofSeconds(120),
            "main's snapshots hold all " + inTopics + " changes in the topics",
            () -> db.freshness(kafka.bootstrapServers(), reader).size() == inTopics);
        List<Long> freshness = db.freshness(kafka.bootstrapServers(), reader);
        System.out.printf(
            "E2E: %d changes in %d transactions in %.1f s (%.0f changes/s); main == SELECT * %.1f s after the workload began;"
                + " freshness source commit -> main (ms, %d changes): p50=%d p95=%d p99=%d max=%d; whole test %.1f s%n",
            changes,
            txids.size(),
            workloadMs / 1000.0,
            changes * 1000.0 / workloadMs,
            convergedMs / 1000.0,
            freshness.size(),
            pct(freshness, 50),
            pct(freshness, 95),
            pct(freshness, 99),
            freshness.get(freshness.size() - 1),
            (System.currentTimeMillis() - started) / 1000.0);
        assertThat(changes).isGreaterThanOrEqualTo(CHANGES);
        assertThat(freshness)
            .as("changes timed to main (a primary-key update is two)")
            .hasSizeGreaterThanOrEqualTo(changes);
      }
    }
  }

  /** Settings both apps share: the broker, the warehouse, short timeouts for a test. */
  static PipelineConfig shared(EmbeddedKafka kafka, TemporaryWarehouse warehouse) {
    return LocalPipeline.settings(kafka.bootstrapServers(), warehouse.catalogProperties())
        .with(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "3")
        .with(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000")
        // A stream thread hears of a rebalance with its next heartbeat, and ingest of the
        // connector's new topics with its next metadata refresh: every test starts with both.
        .with(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "250")
        .with("metadata.max.age.ms", "500");
  }

  static PipelineConfig app(PipelineConfig shared, String id) throws Exception {
    return shared
        .with(StreamsConfig.APPLICATION_ID_CONFIG, id)
        .with(
            StreamsConfig.STATE_DIR_CONFIG,
            Files.createTempDirectory("streams-").toString());
  }

  static void registerConnector(EmbeddedConnect connect, EmbeddedPostgres postgres)
      throws Exception {
    registerConnector(connect, postgres, Map.of());
  }

  /** Registers the shipped connector for {@code postgres}, with {@code settings} added to it. */
  static void registerConnector(
      EmbeddedConnect connect, EmbeddedPostgres postgres, Map<String, String> settings)
      throws Exception {
    Map<String, String> config = new HashMap<>(settings);
    config.put("database.hostname", "127.0.0.1");
    config.put("database.port", Integer.toString(postgres.port()));
    config.put("database.password", "");
    connect.createConnector(
        Files.readString(connectorsDir().resolve("postgres-inventory.json")), config);
  }

  static void assertInvariants(Catalog reader) {
    assertInvariants(reader, List.of("customers", "orders"));
  }

  static void assertInvariants(Catalog reader, List<String> tables) {
    for (String table : tables) {
      TableIdentifier id = TableIdentifier.of("inventory", table);
      Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
      assertThat(report.passed()).as(report.toString()).isTrue();
    }
  }

  static Path connectorsDir() {
    Path here = Path.of("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("connectors"))) {
        return p.resolve("connectors");
      }
    }
    throw new IllegalStateException("no connectors/ folder above " + here);
  }

  private static long pct(List<Long> sorted, int p) {
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
  }
}
