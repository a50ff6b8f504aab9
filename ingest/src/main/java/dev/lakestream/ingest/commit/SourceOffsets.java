package dev.lakestream.ingest.commit;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.iceberg.SummaryKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * The last source offset committed to a branch for every source partition (topic:partition), kept
 * in the snapshot summary under {@link #SUMMARY_KEY}, the ID of the topic those offsets belong to
 * ({@link SummaryKeys#SOURCE_TOPIC_IDS}), and the source position of the table's latest TRUNCATE
 * ({@link SummaryKeys#TRUNCATED_AT}). Each ingest commit writes all three whole, so the newest
 * snapshot that carries the offsets is the truth; snapshots that do not (maintenance) are looked
 * through.
 *
 * <p>A topic deleted and created again under the same name (an operator starting the connector
 * over, or a move to another Kafka cluster) has another ID and offsets from 0 again: the offsets of
 * the old topic say nothing of it, and {@link #following} forgets them. Offsets recorded before IDs
 * were (no ID for the topic) are taken to be of the topic as it is.
 */
public final class SourceOffsets {

  public static final String SUMMARY_KEY = SummaryKeys.SOURCE_OFFSETS;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Map<String, Long> offsets;
  private final Map<String, String> topicIds;
  private final String truncatedAt;
  private final Long truncatedAtTsMs;

  private SourceOffsets(
      Map<String, Long> offsets,
      Map<String, String> topicIds,
      String truncatedAt,
      Long truncatedAtTsMs) {
    this.offsets = Collections.unmodifiableMap(new TreeMap<>(offsets));
    this.topicIds = Collections.unmodifiableMap(new TreeMap<>(topicIds));
    this.truncatedAt = truncatedAt;
    this.truncatedAtTsMs = truncatedAtTsMs;
  }

  public static SourceOffsets empty() {
    return new SourceOffsets(Map.of(), Map.of(), null, null);
  }

  /** The offsets committed to {@code branch}, from its newest snapshot that records them. */
  public static SourceOffsets of(Table table, String branch) {
    return at(table, table.snapshot(branch));
  }

  /** The offsets committed up to {@code snapshot}: its own, or its nearest ancestor's that records them. */
  public static SourceOffsets at(Table table, Snapshot snapshot) {
    return recordingSnapshot(table, snapshot).flatMap(SourceOffsets::recordedBy).orElse(empty());
  }

  /** {@code snapshot}, or its nearest ancestor, that records offsets; empty when none does. */
  public static Optional<Snapshot> recordingSnapshot(Table table, Snapshot snapshot) {
    return recordingSnapshot(snapshot, table::snapshot);
  }

  /** {@code snapshot}, or its nearest ancestor by {@code lookup}, that records offsets. */
  static Optional<Snapshot> recordingSnapshot(Snapshot snapshot, Function<Long, Snapshot> lookup) {
    if (snapshot == null) {
      return Optional.empty();
    }
    for (Snapshot s : SnapshotUtil.ancestorsOf(snapshot.snapshotId(), lookup)) {
      if (s.summary() != null && s.summary().containsKey(SUMMARY_KEY)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /** The offsets {@code snapshot} itself records; empty for a snapshot that records none (a compaction). */
  public static Optional<SourceOffsets> recordedBy(Snapshot snapshot) {
    Map<String, String> summary = snapshot.summary();
    String json = summary.get(SUMMARY_KEY);
    return json == null
        ? Optional.empty()
        : Optional.of(parse(json, summary.get(SummaryKeys.SOURCE_TOPIC_IDS))
            .truncatedAt(
                summary.get(SummaryKeys.TRUNCATED_AT),
                longOrNull(summary.get(SummaryKeys.TRUNCATED_AT_TS_MS))));
  }

  static SourceOffsets parse(String json) {
    return parse(json, null);
  }

  static SourceOffsets parse(String json, String topicIdsJson) {
    return new SourceOffsets(
        read(SUMMARY_KEY, json, new TypeReference<Map<String, Long>>() {}),
        topicIdsJson == null
            ? Map.of()
            : read(
                SummaryKeys.SOURCE_TOPIC_IDS,
                topicIdsJson,
                new TypeReference<Map<String, String>>() {}),
        null,
        null);
  }

  private static Long longOrNull(String text) {
    if (text == null) {
      return null;
    }
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static <T> T read(String key, String json, TypeReference<T> type) {
    try {
      return JSON.readValue(json, type);
    } catch (IOException e) {
      throw new IllegalStateException("unreadable " + key + " in a snapshot summary: " + json, e);
    }
  }

  public static String partitionKey(String topic, int partition) {
    return topic + ":" + partition;
  }

  /** The last committed offset of the partition, or -1 when nothing of it was committed. */
  public long last(String topic, int partition) {
    return offsets.getOrDefault(partitionKey(topic, partition), -1L);
  }

  public SourceOffsets with(String topic, int partition, long lastOffset) {
    Map<String, Long> copy = new TreeMap<>(offsets);
    copy.merge(partitionKey(topic, partition), lastOffset, Math::max);
    return new SourceOffsets(copy, topicIds, truncatedAt, truncatedAtTsMs);
  }

  /** The ID of the topic whose offsets these are, or null when none was recorded. */
  public String topicId(String topic) {
    return topicIds.get(topic);
  }

  /**
   * True unless the offsets of {@code topic} were recorded for a topic of another ID: one deleted
   * since, or the one that replaced it. An unknown ID (null) on either side counts as the same.
   */
  public boolean follows(String topic, String topicId) {
    String recorded = topicIds.get(topic);
    return topicId == null || recorded == null || recorded.equals(topicId);
  }

  /**
   * These offsets as the topic {@code topic} of ID {@code topicId} sees them: without the offsets
   * of an earlier topic of that name when the recorded ID is another, and with the ID recorded. The
   * same offsets when the ID is unknown (null).
   */
  public SourceOffsets following(String topic, String topicId) {
    if (topicId == null || topicId.equals(topicIds.get(topic))) {
      return this;
    }
    Map<String, Long> kept = new TreeMap<>(offsets);
    if (topicIds.containsKey(topic)) {
      kept.keySet().removeIf(k -> topicOf(k).equals(topic));
    }
    Map<String, String> ids = new TreeMap<>(topicIds);
    ids.put(topic, topicId);
    return new SourceOffsets(kept, ids, truncatedAt, truncatedAtTsMs);
  }

  /** The topic of a {@link #partitionKey} (Kafka's topic names hold no ':'). */
  private static String topicOf(String partitionKey) {
    return partitionKey.substring(0, partitionKey.lastIndexOf(':'));
  }

  /** The source position (hex) of the latest TRUNCATE committed, or null when there was none. */
  public String truncatedAt() {
    return truncatedAt;
  }

  /** The source commit time of the latest TRUNCATE committed, or null when none is known. */
  public Long truncatedAtTsMs() {
    return truncatedAtTsMs;
  }

  public SourceOffsets truncatedAt(String position) {
    return truncatedAt(position, null);
  }

  public SourceOffsets truncatedAt(String position, Long tsMs) {
    return new SourceOffsets(offsets, topicIds, position, tsMs);
  }

  public Map<String, Long> asMap() {
    return offsets;
  }

  public String toJson() {
    return write(offsets);
  }

  /** {@link SummaryKeys#SOURCE_TOPIC_IDS}'s value, or null when no ID is known. */
  public String topicIdsJson() {
    return topicIds.isEmpty() ? null : write(topicIds);
  }

  /** Sets the offsets and the topic IDs on a commit's summary through {@code set}. */
  public void recordIn(BiConsumer<String, String> set) {
    set.accept(SUMMARY_KEY, toJson());
    String ids = topicIdsJson();
    if (ids != null) {
      set.accept(SummaryKeys.SOURCE_TOPIC_IDS, ids);
    }
  }

  private static String write(Map<String, ?> map) {
    try {
      return JSON.writeValueAsString(map);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
