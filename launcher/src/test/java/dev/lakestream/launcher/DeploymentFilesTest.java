package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.ingest.IngestConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What can be checked of the deployment files without a Docker engine: the compose file parses,
 * has the stack's services, and its {@code LAKESTREAM_*} variables become the settings the apps
 * read; the connector config is valid JSON for Kafka Connect's REST API.
 */
class DeploymentFilesTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void composeFileHasTheStackAndItsVariablesBecomeTheAppsSettings() throws Exception {
    JsonNode compose = YAML.readTree(root().resolve("docker-compose.yml").toFile());
    JsonNode services = compose.get("services");
    for (String service :
        new String[] {"postgres", "kafka", "connect", "minio", "iceberg-rest", "ingest", "sync"}) {
      assertThat(services.has(service)).as("service " + service).isTrue();
    }
    assertThat(services.get("sync").path("deploy").path("replicas").asInt()).isEqualTo(2);
    assertThat(services.get("ingest").path("command").get(0).asText()).isEqualTo("ingest");

    PipelineConfig ingest = PipelineConfig.load(null, env(services.get("ingest")));
    assertThat(ingest.get("application.id")).isEqualTo("lakestream-ingest");
    assertThat(ingest.kafkaProperties()).containsEntry("bootstrap.servers", "kafka:9092");
    assertThat(ingest.catalogProperties())
        .containsEntry("type", "rest")
        .containsEntry("uri", "http://iceberg-rest:8181")
        .containsEntry("io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        .containsEntry("s3.path-style-access", "true")
        .containsEntry("s3.endpoint", "http://minio:9000");
    assertThat(new IngestConfig(ingest)
            .topicsPattern()
            .matcher("dbserver1.inventory.customers")
            .matches())
        .isTrue();
    PipelineConfig sync = PipelineConfig.load(null, env(services.get("sync")));
    assertThat(sync.get("application.id")).isEqualTo("lakestream-sync");
    assertThat(sync.catalogProperties()).isEqualTo(ingest.catalogProperties());
  }

  @Test
  void connectorConfigIsKafkaConnectRestJson() throws Exception {
    JsonNode connector =
        JSON.readTree(root().resolve("connectors/postgres-inventory.json").toFile());
    assertThat(connector.path("name").asText()).isNotEmpty();
    JsonNode config = connector.get("config");
    assertThat(config.path("connector.class").asText())
        .isEqualTo("io.debezium.connector.postgresql.PostgresConnector");
    assertThat(config.path("plugin.name").asText()).isEqualTo("pgoutput");
    assertThat(config.path("decimal.handling.mode").asText()).isEqualTo("precise");
  }

  @Test
  void theComposePostgresInstallsTheEventTriggerForTablesCreatedLater() throws Exception {
    JsonNode postgres = YAML.readTree(root().resolve("docker-compose.yml").toFile())
        .get("services")
        .get("postgres");
    List<String> mounts = new ArrayList<>();
    postgres.path("volumes").forEach(v -> mounts.add(v.asText()));
    String file = "connectors/postgres-publish-new-tables.sql";
    assertThat(mounts)
        .contains(
            "./" + file + ":/docker-entrypoint-initdb.d/lakestream-publish-new-tables.sql:ro");
    assertThat(root().resolve(file)).isRegularFile();
  }

  @Test
  void grafanaIsProvisionedWithPrometheusAndTheDashboard() throws Exception {
    JsonNode services =
        YAML.readTree(root().resolve("docker-compose.yml").toFile()).get("services");
    assertThat(services.has("prometheus")).isTrue();
    List<String> mounts = new ArrayList<>();
    services.get("grafana").path("volumes").forEach(v -> mounts.add(v.asText()));
    assertThat(mounts)
        .contains(
            "./config/grafana/provisioning:/etc/grafana/provisioning:ro",
            "./config/grafana/dashboards:/var/lib/grafana/dashboards:ro");
    JsonNode source = YAML.readTree(root()
            .resolve("config/grafana/provisioning/datasources/prometheus.yml")
            .toFile())
        .path("datasources")
        .get(0);
    assertThat(source.path("url").asText()).isEqualTo("http://prometheus:9090");
    JsonNode scrape = YAML.readTree(root().resolve("config/prometheus.yml").toFile());
    List<String> jobs = new ArrayList<>();
    scrape.path("scrape_configs").forEach(job -> job.path("dns_sd_configs")
        .forEach(sd ->
            jobs.add(sd.path("names").get(0).asText() + ":" + sd.path("port").asInt())));
    assertThat(jobs).containsExactlyInAnyOrder("ingest:9400", "sync:9401");
    JsonNode dashboard = JSON.readTree(DASHBOARD.apply(root()).toFile());
    for (JsonNode panel : dashboard.path("panels")) {
      assertThat(panel.path("datasource").path("uid").asText())
          .as("panel %s", panel.path("title"))
          .isEqualTo(source.path("uid").asText());
    }
    assertThat(dashboardMetrics()).contains("lakestream_hop_latency_seconds");
  }

  /** Where the Grafana dashboard is, under the project root. */
  static final Function<Path, Path> DASHBOARD =
      r -> r.resolve("config/grafana/dashboards/lakestream.json");

  /** The metric names the dashboard's queries read (a histogram's series by its base name). */
  static Set<String> dashboardMetrics() throws Exception {
    Set<String> names = new TreeSet<>();
    JsonNode dashboard = JSON.readTree(DASHBOARD.apply(root()).toFile());
    Pattern metric = Pattern.compile("lakestream_[a-z0-9_]+");
    for (JsonNode panel : dashboard.path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        Matcher m = metric.matcher(target.path("expr").asText());
        while (m.find()) {
          names.add(m.group());
        }
      }
    }
    return names;
  }

  /** The service's environment as Compose builds it: its env files, then its own variables. */
  private static Map<String, String> env(JsonNode service) throws Exception {
    Map<String, String> env = new HashMap<>();
    for (JsonNode file : service.path("env_file")) {
      for (String line : Files.readAllLines(root().resolve(file.asText()))) {
        int eq = line.indexOf('=');
        if (!line.isBlank() && !line.startsWith("#") && eq > 0) {
          env.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
        }
      }
    }
    service
        .path("environment")
        .fields()
        .forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
    return env;
  }

  static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("docker-compose.yml"))) {
        return p;
      }
    }
    throw new IllegalStateException("no docker-compose.yml above " + Path.of("").toAbsolutePath());
  }
}
