package dev.lakestream.benchmarks;

import dev.lakestream.embedded.EmbeddedKafka;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * What the broker holds in the topics an app writes (its internal topics, named from its
 * application id and topic prefix, and Kafka's own offsets and transaction-state topics): records
 * (end offsets, transaction markers included) and bytes on disk, by topic. Taken before and after a
 * run, the difference is what the run wrote to Kafka, a measure of work that does not drift with
 * the machine's load the way a rate does.
 *
 * @param byTopic per topic: records, bytes
 */
record KafkaWrites(Map<String, long[]> byTopic) {

  private static final List<String> KAFKA_TOPICS =
      List.of("__consumer_offsets", "__transaction_state");

  /** The records and bytes now in every topic whose name starts with {@code prefix}. */
  static KafkaWrites of(EmbeddedKafka kafka, String prefix) throws Exception {
    Map<String, long[]> byTopic = new TreeMap<>();
    try (Admin admin = kafka.admin()) {
      List<String> topics =
          admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get().stream()
              .filter(t -> t.startsWith(prefix) || KAFKA_TOPICS.contains(t))
              .toList();
      if (topics.isEmpty()) {
        return new KafkaWrites(byTopic);
      }
      Map<TopicPartition, OffsetSpec> query = new HashMap<>();
      admin.describeTopics(topics).allTopicNames().get().forEach((name, description) -> description
          .partitions()
          .forEach(p -> query.put(new TopicPartition(name, p.partition()), OffsetSpec.latest())));
      admin
          .listOffsets(query)
          .all()
          .get()
          .forEach((tp, info) ->
              byTopic.computeIfAbsent(tp.topic(), t -> new long[2])[0] += info.offset());
      List<Integer> brokers =
          admin.describeCluster().nodes().get().stream().map(Node::id).toList();
      for (var dirs : admin.describeLogDirs(brokers).allDescriptions().get().values()) {
        for (var dir : dirs.values()) {
          for (Map.Entry<TopicPartition, ReplicaInfo> e : dir.replicaInfos().entrySet()) {
            if (query.containsKey(e.getKey())) {
              byTopic.get(e.getKey().topic())[1] += e.getValue().size();
            }
          }
        }
      }
      return new KafkaWrites(byTopic);
    }
  }

  KafkaWrites minus(KafkaWrites before) {
    Map<String, long[]> out = new TreeMap<>();
    byTopic.forEach((topic, now) -> {
      long[] then = before.byTopic.getOrDefault(topic, new long[2]);
      out.put(topic, new long[] {now[0] - then[0], now[1] - then[1]});
    });
    return new KafkaWrites(out);
  }

  long records() {
    return byTopic.values().stream().mapToLong(v -> v[0]).sum();
  }

  long bytes() {
    return byTopic.values().stream().mapToLong(v -> v[1]).sum();
  }

  /** One line per topic written to: records and bytes per change of {@code changes}. */
  String perChange(long changes) {
    StringBuilder out = new StringBuilder();
    byTopic.forEach((topic, v) -> {
      if (v[0] > 0) {
        out.append(String.format(
            "    %s: %.3f records, %.0f bytes per change%n",
            topic, (double) v[0] / changes, (double) v[1] / changes));
      }
    });
    return out.toString();
  }
}
