package dev.lakestream.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineConfigTest {

  @TempDir
  Path dir;

  @Test
  void environmentVariablesOverrideTheFile() throws Exception {
    Path file = dir.resolve("ingest.properties");
    Files.writeString(
        file,
        "bootstrap.servers=file:9092\napplication.id=ingest\niceberg.catalog.type=rest\niceberg.catalog.uri=http://a\n");
    PipelineConfig config = PipelineConfig.load(
        file,
        Map.of(
            "LAKESTREAM_BOOTSTRAP_SERVERS", "env:9092",
            "LAKESTREAM_ICEBERG_CATALOG_IO___IMPL", "org.apache.iceberg.aws.s3.S3FileIO",
            "LAKESTREAM_INGEST_FLUSH_MAX__ROWS", "5",
            "PATH", "/usr/bin"));
    assertThat(config.get("bootstrap.servers")).isEqualTo("env:9092");
    assertThat(config.get("iceberg.catalog.io-impl"))
        .isEqualTo("org.apache.iceberg.aws.s3.S3FileIO");
    assertThat(config.get("ingest.flush.max_rows")).isEqualTo("5");
    assertThat(config.asMap()).doesNotContainKey("path");
  }

  @Test
  void envNameAndKeyAreInverse() {
    for (String key : new String[] {
      "bootstrap.servers", "iceberg.catalog.io-impl", "iceberg.catalog.s3.access-key-id", "a_b.c"
    }) {
      String env = PipelineConfig.envNameOf(key);
      assertThat(PipelineConfig.keyOf(env.substring(PipelineConfig.ENV_PREFIX.length())))
          .isEqualTo(key);
    }
  }

  @Test
  void splitsKafkaPropertiesFromCatalogAndPipelineSettings() {
    PipelineConfig config = new PipelineConfig(Map.of(
        "bootstrap.servers", "b:9092",
        "processing.guarantee", "exactly_once_v2",
        "iceberg.catalog.type", "rest",
        "iceberg.catalog.uri", "http://catalog",
        "iceberg.catalog", "prod",
        "ingest.topics", "a.b.c",
        "lakestream.topic.prefix", "cdc"));
    assertThat(config.kafkaProperties())
        .containsOnlyKeys("bootstrap.servers", "processing.guarantee");
    assertThat(config.catalogProperties())
        .isEqualTo(Map.of("type", "rest", "uri", "http://catalog"));
    assertThat(config.catalogName()).isEqualTo("prod");
    assertThat(config.topicPrefix()).isEqualTo("cdc");
  }

  @Test
  void toStringHidesSecrets() {
    PipelineConfig config = new PipelineConfig(Map.of(
        "sasl.jaas.config",
            "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"p4ss\";",
        "iceberg.catalog.s3.secret-access-key", "s3cr3t",
        "iceberg.catalog.credential", "id:secret",
        "iceberg.catalog.token", "t0k3n",
        "ssl.truststore.password", "tp",
        "bootstrap.servers", "b:9092"));
    String shown = config.toString();
    assertThat(shown).contains("bootstrap.servers=b:9092");
    assertThat(shown).doesNotContain("p4ss", "s3cr3t", "id:secret", "t0k3n", "=tp");
  }

  @Test
  void toStringHidesKeysHeadersBasicAuthAndPasswordsInUris() {
    PipelineConfig config = new PipelineConfig(Map.of(
        "ssl.key", "-----BEGIN PRIVATE KEY-----abc",
        "iceberg.catalog.gcs.oauth2.refresh-key", "rk",
        "iceberg.catalog.header.Authorization", "Bearer eyJhbGci",
        "iceberg.catalog.header.X-Api-Key", "api-k",
        "basic.auth.user.info", "user:pw1",
        "iceberg.catalog.uri", "jdbc:postgresql://catalog:pw2@db:5432/iceberg?ssl=true",
        "iceberg.catalog.warehouse", "s3://bucket/wh?password=pw3&x=1",
        "iceberg.catalog.rest.auth.type", "oauth2",
        "bootstrap.servers", "b:9092"));
    String shown = config.toString();
    assertThat(shown)
        .doesNotContain("BEGIN PRIVATE", "rk", "eyJhbGci", "api-k", "pw1", "pw2", "pw3");
    assertThat(shown)
        .contains(
            "iceberg.catalog.uri=jdbc:postgresql://catalog:[hidden]@db:5432/iceberg?ssl=true",
            "iceberg.catalog.warehouse=s3://bucket/wh?password=[hidden]&x=1",
            "iceberg.catalog.rest.auth.type=oauth2",
            "bootstrap.servers=b:9092");
  }

  @Test
  void missingRequiredSettingNamesFileKeyAndEnvironmentVariable() {
    assertThatThrownBy(() -> new PipelineConfig(Map.of()).require("application.id"))
        .hasMessageContaining("application.id")
        .hasMessageContaining("LAKESTREAM_APPLICATION_ID");
  }

  @Test
  void rejectsNonNumericNumber() {
    assertThatThrownBy(() -> new PipelineConfig(Map.of("ingest.flush.max.rows", "lots"))
            .getLong("ingest.flush.max.rows", 1))
        .hasMessageContaining("must be a whole number");
  }
}
