package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The end-to-end scenario of {@link PostgresEndToEndTest} on the images users run (PostgreSQL,
 * Apache Kafka, Debezium's Kafka Connect), for machines with Docker; skipped without a Docker
 * engine. The ingest and sync apps run in the test JVM against the containers.
 */
@Testcontainers(disabledWithoutDocker = true)
class PostgresEndToEndContainersTest {

  private static final Network NETWORK = Network.newNetwork();

  @Container
  private static final PostgreSQLContainer POSTGRES = new PostgreSQLContainer("postgres:17")
      .withNetwork(NETWORK)
      .withNetworkAliases("postgres")
      .withCommand("postgres", "-c", "wal_level=logical", "-c", "track_commit_timestamp=on");

  @Container
  private static final KafkaContainer KAFKA =
      new KafkaContainer("apache/kafka:4.1.1").withNetwork(NETWORK).withListener("kafka:19092");

  @Container
  private static final GenericContainer<?> CONNECT = new GenericContainer<>(
          "quay.io/debezium/connect:3.6.1.Final")
      .withNetwork(NETWORK)
      .dependsOn(KAFKA, POSTGRES)
      .withEnv("BOOTSTRAP_SERVERS", "kafka:19092")
      .withEnv("GROUP_ID", "connect")
      .withEnv("CONFIG_STORAGE_TOPIC", "connect-configs")
      .withEnv("OFFSET_STORAGE_TOPIC", "connect-offsets")
      .withEnv("STATUS_STORAGE_TOPIC", "connect-status")
      .withExposedPorts(8083)
      .waitingFor(Wait.forHttp("/connectors").forPort(8083));

  @Test
  void postgresThroughDebeziumIngestAndSyncEqualsSelectStar() throws Exception {
    InventoryDatabase db = new InventoryDatabase(
        () -> DriverManager.getConnection(
            POSTGRES.getJdbcUrl(), POSTGRES.getUsername(), POSTGRES.getPassword()),
        44);
    db.create(200);
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      PipelineConfig shared =
          LocalPipeline.settings(KAFKA.getBootstrapServers(), warehouse.catalogProperties());
      try (StreamsApp ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        ingest.start();
        sync.start();
        register(Map.of(
            "database.hostname",
            "postgres",
            "database.port",
            "5432",
            "database.user",
            POSTGRES.getUsername(),
            "database.password",
            POSTGRES.getPassword(),
            "database.dbname",
            POSTGRES.getDatabaseName()));
        Eventually.noDifference(Duration.ofSeconds(180), () -> db.mainDiffers(warehouse.catalog()));
        List<Long> txids = new ArrayList<>();
        int changes = db.runWorkload(10_000, 0, txids, () -> false);
        Eventually.noDifference(Duration.ofSeconds(300), () -> db.mainDiffers(warehouse.catalog()));
        PostgresEndToEndTest.assertInvariants(warehouse.catalog());
        assertThat(changes).isGreaterThanOrEqualTo(10_000);
      }
    }
  }

  private static void register(Map<String, String> overrides) throws Exception {
    ObjectMapper json = new ObjectMapper();
    Path file = null;
    for (Path p = Path.of("").toAbsolutePath(); p != null && file == null; p = p.getParent()) {
      if (Files.exists(p.resolve("connectors/postgres-inventory.json"))) {
        file = p.resolve("connectors/postgres-inventory.json");
      }
    }
    ObjectNode connector = (ObjectNode) json.readTree(file.toFile());
    overrides.forEach(((ObjectNode) connector.get("config"))::put);
    URI url = URI.create(
        "http://" + CONNECT.getHost() + ":" + CONNECT.getMappedPort(8083) + "/connectors");
    HttpResponse<String> response = HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(url)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(connector)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isBetween(200, 299);
  }
}
