package dev.lakestream.ingest.commit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.SummaryKeys;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SourceOffsetsTest {

  @Test
  void offsetsOfATopicCreatedAgainAreForgottenAndThoseOfOtherTopicsKept() {
    SourceOffsets recorded = SourceOffsets.parse(
        "{\"orders:0\":500,\"orders:1\":700,\"orders.archive:0\":90}",
        "{\"orders\":\"A\",\"orders.archive\":\"C\"}");

    assertThat(recorded.follows("orders", "A")).isTrue();
    assertThat(recorded.following("orders", "A")).isSameAs(recorded);
    assertThat(recorded.follows("orders", null)).as("an unknown ID").isTrue();
    assertThat(recorded.following("orders", null).last("orders", 0)).isEqualTo(500);

    assertThat(recorded.follows("orders", "B")).isFalse();
    SourceOffsets reborn = recorded.following("orders", "B");
    assertThat(reborn.last("orders", 0)).isEqualTo(-1);
    assertThat(reborn.last("orders", 1)).isEqualTo(-1);
    assertThat(reborn.topicId("orders")).isEqualTo("B");
    assertThat(reborn.last("orders.archive", 0))
        .as("a topic whose name starts like it")
        .isEqualTo(90);
    assertThat(reborn.topicId("orders.archive")).isEqualTo("C");
    assertThat(reborn.with("orders", 0, 20).last("orders", 0)).isEqualTo(20);
  }

  @Test
  void offsetsRecordedWithoutIdsAreTakenAsTheTopicsAsItIsAndGetItsId() {
    SourceOffsets legacy = SourceOffsets.parse("{\"orders:0\":500}", null);
    assertThat(legacy.follows("orders", "A")).isTrue();
    SourceOffsets adopted = legacy.following("orders", "A");
    assertThat(adopted.last("orders", 0)).isEqualTo(500);
    assertThat(adopted.topicId("orders")).isEqualTo("A");
    assertThat(legacy.topicIdsJson()).isNull();
  }

  @Test
  void theIdsAreWrittenBesideTheOffsetsAndReadBack() {
    SourceOffsets offsets =
        SourceOffsets.empty().following("orders", "A").with("orders", 2, 41).truncatedAt("0a");
    Map<String, String> summary = new HashMap<>();
    offsets.recordIn(summary::put);
    assertThat(summary)
        .containsEntry(SummaryKeys.SOURCE_OFFSETS, "{\"orders:2\":41}")
        .containsEntry(SummaryKeys.SOURCE_TOPIC_IDS, "{\"orders\":\"A\"}");
    SourceOffsets read = SourceOffsets.parse(
        summary.get(SummaryKeys.SOURCE_OFFSETS), summary.get(SummaryKeys.SOURCE_TOPIC_IDS));
    assertThat(read.last("orders", 2)).isEqualTo(41);
    assertThat(read.topicId("orders")).isEqualTo("A");
    assertThat(read.follows("orders", "B")).isFalse();
  }
}
