package dev.lakestream.benchmarks;

import dev.lakestream.embedded.EmbeddedKafka;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/** A topic's end offsets, by partition, from the broker's admin client. */
final class EndOffsets {

  private EndOffsets() {}

  /** The end offsets of every partition; empty while the topic does not exist. */
  static Map<Integer, Long> of(EmbeddedKafka kafka, String topic) throws Exception {
    try (Admin admin = kafka.admin()) {
      if (!admin.listTopics().names().get().contains(topic)) {
        return Map.of();
      }
      int partitions = admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get()
          .get(topic)
          .partitions()
          .size();
      Map<TopicPartition, OffsetSpec> query = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        query.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      Map<Integer, Long> ends = new HashMap<>();
      admin
          .listOffsets(query)
          .all()
          .get()
          .forEach((tp, info) -> ends.put(tp.partition(), info.offset()));
      return ends;
    }
  }
}
