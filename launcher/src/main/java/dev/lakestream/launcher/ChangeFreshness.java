package dev.lakestream.launcher;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.launcher.Freshness.Covered;
import dev.lakestream.launcher.Freshness.SourceChange;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Freshness per change of a table, from what Kafka and the table hold: every change in the source
 * topic (its partition, offset and {@code source.ts_ms}; snapshot reads left out), and the source
 * offsets each realtime snapshot records (and each main snapshot through the realtime snapshot it
 * mirrors), with the snapshots' commit times.
 */
final class ChangeFreshness {

  private static final ObjectMapper JSON = new ObjectMapper();

  private ChangeFreshness() {}

  /** Per change, ms to on realtime and to on main, each sorted. */
  static List<List<Long>> measure(String bootstrapServers, String topic, Table table)
      throws IOException {
    List<SourceChange> changes = changes(bootstrapServers, topic);
    table.refresh();
    return List.of(
        Freshness.perChange(changes, realtime(table, topic)),
        Freshness.perChange(changes, main(table, topic)));
  }

  /** The changes in {@code topic}, read from the start to its end now. */
  static List<SourceChange> changes(String bootstrapServers, String topic) throws IOException {
    Map<String, Object> props = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrapServers,
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
        "false",
        ConsumerConfig.ISOLATION_LEVEL_CONFIG,
        "read_committed");
    List<SourceChange> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
          .map(p -> new TopicPartition(topic, p.partition()))
          .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
          if (r.value() == null) {
            continue; // a tombstone
          }
          JsonNode root = JSON.readTree(r.value());
          JsonNode payload = root.has("payload") ? root.get("payload") : root;
          String op = payload.path("op").asText();
          long ts = payload.path("source").path("ts_ms").asLong(-1);
          if (!op.equals("r") && ts > 0) {
            out.add(new SourceChange(r.partition(), r.offset(), ts));
          }
        }
      }
    }
    return out;
  }

  /** Each realtime snapshot that records source offsets: the offsets of {@code topic}, and its time. */
  static List<Covered> realtime(Table table, String topic) throws IOException {
    List<Covered> out = new ArrayList<>();
    Snapshot head = table.snapshot(Branches.REALTIME);
    if (head == null) {
      return out;
    }
    for (Snapshot s : SnapshotUtil.ancestorsOf(head.snapshotId(), table::snapshot)) {
      Map<Integer, Long> offsets = offsets(s, topic);
      if (offsets != null) {
        out.add(new Covered(offsets, s.timestampMillis()));
      }
    }
    return out;
  }

  /** Each main snapshot of a sync cycle: the offsets of the realtime snapshot it mirrors, and its time. */
  static List<Covered> main(Table table, String topic) throws IOException {
    List<Covered> out = new ArrayList<>();
    Snapshot head = table.snapshot(Branches.MAIN);
    if (head == null) {
      return out;
    }
    for (Snapshot s : SnapshotUtil.ancestorsOf(head.snapshotId(), table::snapshot)) {
      String mirrored = s.summary().get(SummaryKeys.REALTIME_SNAPSHOT_ID);
      Snapshot realtime = mirrored == null ? null : table.snapshot(Long.parseLong(mirrored));
      Map<Integer, Long> offsets = null;
      for (Snapshot r = realtime;
          r != null && offsets == null;
          r = r.parentId() == null ? null : table.snapshot(r.parentId())) {
        offsets = offsets(r, topic);
      }
      if (offsets != null) {
        out.add(new Covered(offsets, s.timestampMillis()));
      }
    }
    return out;
  }

  /** The source offsets of {@code topic} a snapshot records, by partition; null when it records none. */
  private static Map<Integer, Long> offsets(Snapshot snapshot, String topic) throws IOException {
    String json = snapshot.summary().get(SummaryKeys.SOURCE_OFFSETS);
    if (json == null) {
      return null;
    }
    Map<Integer, Long> out = new HashMap<>();
    String prefix = topic + ":";
    JSON.readValue(json, new TypeReference<Map<String, Long>>() {}).forEach((key, last) -> {
      if (key.startsWith(prefix)) {
        out.put(Integer.parseInt(key.substring(prefix.length())), last);
      }
    });
    return out;
  }
}
