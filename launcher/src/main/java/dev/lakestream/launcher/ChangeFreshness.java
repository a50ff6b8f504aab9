package dev.lakestream.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.launcher.Freshness.Covered;
import dev.lakestream.launcher.Freshness.SourceChange;
import dev.lakestream.launcher.Freshness.Window;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
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

  /**
   * A branch's commits that record source offsets, and below which offset per partition a change's
   * visibility is unknown (the snapshots that held it first were expired): such changes are left out.
   */
  record Commits(List<Covered> covered, Map<Integer, Long> unknownUpTo) {
    List<SourceChange> known(List<SourceChange> changes) {
      return changes.stream()
          .filter(c -> c.offset() > unknownUpTo.getOrDefault(c.partition(), -1L))
          .toList();
    }
  }

  /**
   * What {@link #measure} found: per change, ms to its record in Kafka (the source's part), to on
   * realtime and to on main, each sorted; the same in Kafka and on main of the changes after the
   * warm-up; and main's freshness over the run, in windows of {@link #WINDOW_MS} by source commit
   * time.
   */
  record Measured(
      List<Long> kafka,
      List<Long> realtime,
      List<Long> main,
      List<Long> kafkaAfterWarmUp,
      List<Long> mainAfterWarmUp,
      List<Window> mainOverTime) {}

  /** The width of {@link Measured#mainOverTime}'s windows. */
  static final long WINDOW_MS = 5_000;

  /**
   * Freshness per change of {@code topic}'s changes to realtime and to main; {@code warmUpMs}: how
   * long after the first change the changes of {@link Measured#mainAfterWarmUp} begin.
   */
  static Measured measure(String bootstrapServers, String topic, Table table, long warmUpMs)
      throws IOException {
    List<SourceChange> changes = changes(bootstrapServers, topic);
    table.refresh();
    Commits realtime = realtime(table, topic);
    Commits main = main(table, topic);
    long first = changes.stream().mapToLong(SourceChange::sourceTsMs).min().orElse(0);
    List<SourceChange> afterWarmUp =
        changes.stream().filter(c -> c.sourceTsMs() >= first + warmUpMs).toList();
    return new Measured(
        Freshness.toKafka(changes),
        Freshness.perChange(realtime.known(changes), realtime.covered()),
        Freshness.perChange(main.known(changes), main.covered()),
        Freshness.toKafka(afterWarmUp),
        Freshness.perChange(main.known(afterWarmUp), main.covered()),
        Freshness.overTime(main.known(changes), main.covered(), WINDOW_MS));
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
            out.add(new SourceChange(r.partition(), r.offset(), ts, r.timestamp()));
          }
        }
      }
    }
    return out;
  }

  /** Each realtime snapshot that records source offsets: the offsets of {@code topic}, and its time. */
  static Commits realtime(Table table, String topic) throws IOException {
    List<Covered> out = new ArrayList<>();
    Snapshot head = table.snapshot(Branches.REALTIME);
    if (head == null) {
      return new Commits(out, Map.of());
    }
    Snapshot oldest = head;
    for (Snapshot s : SnapshotUtil.ancestorsOf(head.snapshotId(), table::snapshot)) {
      oldest = s;
      Map<Integer, Long> offsets = offsets(s, topic);
      if (offsets != null) {
        out.add(new Covered(offsets, s.timestampMillis()));
      }
    }
    return withHistory(out, expired(table, oldest));
  }

  /** Each main snapshot of a sync cycle: the offsets of the realtime snapshot it mirrors, and its time. */
  static Commits main(Table table, String topic) throws IOException {
    List<Covered> out = new ArrayList<>();
    Snapshot head = table.snapshot(Branches.MAIN);
    if (head == null) {
      return new Commits(out, Map.of());
    }
    Snapshot oldest = head;
    boolean lost = false;
    for (Snapshot s : SnapshotUtil.ancestorsOf(head.snapshotId(), table::snapshot)) {
      oldest = s;
      String mirrored = s.summary().get(SummaryKeys.REALTIME_SNAPSHOT_ID);
      if (mirrored == null) {
        continue; // not a sync cycle (maintenance, the table's creation)
      }
      Map<Integer, Long> offsets = null;
      Snapshot r = table.snapshot(Long.parseLong(mirrored));
      boolean gone = r == null;
      while (r != null && offsets == null) {
        offsets = offsets(r, topic);
        gone = offsets == null && expired(table, r);
        r = r.parentId() == null ? null : table.snapshot(r.parentId());
      }
      if (offsets != null) {
        out.add(new Covered(offsets, s.timestampMillis()));
      } else if (gone) {
        lost = true; // the realtime snapshots it mirrored were expired
      }
    }
    return withHistory(out, lost || expired(table, oldest));
  }

  /** Whether the snapshots before {@code oldest} were expired. */
  private static boolean expired(Table table, Snapshot oldest) {
    return oldest.parentId() != null && table.snapshot(oldest.parentId()) == null;
  }

  /**
   * With part of the history expired, a change at or below the oldest kept commit's offsets may
   * have been visible earlier than any commit still known: its time is unknown.
   */
  private static Commits withHistory(List<Covered> covered, boolean incomplete) {
    if (!incomplete || covered.isEmpty()) {
      return new Commits(covered, Map.of());
    }
    Covered oldest =
        covered.stream().min(Comparator.comparingLong(Covered::atMs)).orElseThrow();
    return new Commits(covered, oldest.lastOffsets());
  }

  /** The source offsets of {@code topic} a snapshot records, by partition; null when it records none. */
  private static Map<Integer, Long> offsets(Snapshot snapshot, String topic) {
    return SourceOffsets.recordedBy(snapshot)
        .map(recorded -> {
          Map<Integer, Long> out = new HashMap<>();
          String prefix = topic + ":";
          recorded.asMap().forEach((key, last) -> {
            if (key.startsWith(prefix)) {
              out.put(Integer.parseInt(key.substring(prefix.length())), last);
            }
          });
          return out;
        })
        .orElse(null);
  }
}
