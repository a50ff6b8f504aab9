package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.config.PipelineConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class IngestAppTest {

  private static Properties props(Map<String, String> extra) {
    Map<String, String> settings =
        new HashMap<>(Map.of("bootstrap.servers", "localhost:9092", "application.id", "ingest"));
    settings.putAll(extra);
    if (!settings.containsKey(IngestConfig.TOPICS_REGEX)) {
      settings.put(IngestConfig.TOPICS, "dbserver1.inventory.customers");
    }
    return IngestApp.streamsProperties(new PipelineConfig(settings));
  }

  @Test
  void theChangelogProducerBatchesLargerThanKafkasDefault() {
    assertThat(props(Map.of()).getProperty("producer.batch.size"))
        .isEqualTo(IngestApp.PRODUCER_BATCH_SIZE);
  }

  @Test
  void aBatchSizeTheUserSetsWinsUnderEitherName() {
    Properties plain = props(Map.of("batch.size", "32768"));
    assertThat(plain.getProperty("batch.size")).isEqualTo("32768");
    assertThat(plain).doesNotContainKey("producer.batch.size");
    assertThat(props(Map.of("producer.batch.size", "65536")).getProperty("producer.batch.size"))
        .isEqualTo("65536");
  }

  @Test
  void tasksDoNotIdleUnlessTheUserSaysSo() {
    assertThat(props(Map.of()).getProperty("max.task.idle.ms")).isEqualTo("-1");
    assertThat(props(Map.of("max.task.idle.ms", "0")).getProperty("max.task.idle.ms"))
        .isEqualTo("0");
  }

  @Test
  void onlyAPatternSubscriptionRefreshesMetadataEveryTenSeconds() {
    assertThat(props(Map.of())).doesNotContainKey("metadata.max.age.ms");
    Properties pattern = props(Map.of(IngestConfig.TOPICS_REGEX, "dbserver1\\.inventory\\..*"));
    assertThat(pattern.getProperty("metadata.max.age.ms"))
        .isEqualTo(IngestApp.PATTERN_METADATA_MAX_AGE_MS);
  }

  /**
   * Topics to read that take in the pipeline's own (its dead letters read back would be
   * dead-lettered again, without end) are refused at start, naming the topic.
   */
  @Test
  void topicsToReadThatTakeInThePipelinesOwnAreRefusedNamingTheTopic() {
    assertThatThrownBy(() -> config(Map.of(IngestConfig.TOPICS_REGEX, ".*")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("takes in lakestream.realtime-commits");
    assertThatThrownBy(() -> config(Map.of(
            IngestConfig.TOPICS_REGEX, "dbserver1\\..*", PipelineConfig.TOPIC_PREFIX, "dbserver1")))
        .hasMessageContaining("takes in dbserver1.realtime-commits");
    assertThatThrownBy(() ->
            config(Map.of(IngestConfig.TOPICS, "dbserver1.inventory.customers, lakestream.dlq")))
        .hasMessageContaining("ingest.topics takes in lakestream.dlq");
    assertThatThrownBy(() -> config(Map.of(IngestConfig.TOPICS_REGEX, "ingest-.*")))
        .hasMessageContaining("takes in ingest-files-written");
    assertThatThrownBy(() -> config(Map.of(IngestConfig.TOPICS_REGEX, ".*-source-fence-.*")))
        .hasMessageContaining("takes in ingest-source-fence-changelog");
    assertThat(config(Map.of(IngestConfig.TOPICS_REGEX, "dbserver1\\.inventory\\..*"))
            .topicsPattern()
            .pattern())
        .isEqualTo("dbserver1\\.inventory\\..*");
  }

  private static IngestConfig config(Map<String, String> extra) {
    Map<String, String> settings = new HashMap<>(Map.of("application.id", "ingest"));
    settings.putAll(extra);
    return new IngestConfig(new PipelineConfig(settings));
  }
}
