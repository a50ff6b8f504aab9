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
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * The last source offset committed to a branch for every source partition (topic:partition), kept
 * in the snapshot summary under {@link #SUMMARY_KEY}, and the source position of the table's latest
 * TRUNCATE ({@link SummaryKeys#TRUNCATED_AT}). Each ingest commit writes both whole, so the newest
 * snapshot that carries the offsets is the truth; snapshots that do not (maintenance) are looked
 * through.
 */
public final class SourceOffsets {

  public static final String SUMMARY_KEY = SummaryKeys.SOURCE_OFFSETS;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Map<String, Long> offsets;
  private final String truncatedAt;

  private SourceOffsets(Map<String, Long> offsets, String truncatedAt) {
    this.offsets = Collections.unmodifiableMap(new TreeMap<>(offsets));
    this.truncatedAt = truncatedAt;
  }

  public static SourceOffsets empty() {
    return new SourceOffsets(Map.of(), null);
  }

  /** The offsets committed to {@code branch}, from its newest snapshot that records them. */
  public static SourceOffsets of(Table table, String branch) {
    return at(table, table.snapshot(branch));
  }

  /** The offsets committed up to {@code snapshot}: its own, or its nearest ancestor's that records them. */
  public static SourceOffsets at(Table table, Snapshot snapshot) {
    if (snapshot == null) {
      return empty();
    }
    for (Snapshot s : SnapshotUtil.ancestorsOf(snapshot.snapshotId(), table::snapshot)) {
      Optional<SourceOffsets> offsets = recordedBy(s);
      if (offsets.isPresent()) {
        return offsets.get();
      }
    }
    return empty();
  }

  /** The offsets {@code snapshot} itself records; empty for a snapshot that records none (a compaction). */
  public static Optional<SourceOffsets> recordedBy(Snapshot snapshot) {
    String json = snapshot.summary().get(SUMMARY_KEY);
    return json == null
        ? Optional.empty()
        : Optional.of(parse(json).truncatedAt(snapshot.summary().get(SummaryKeys.TRUNCATED_AT)));
  }

  static SourceOffsets parse(String json) {
    try {
      return new SourceOffsets(
          JSON.readValue(json, new TypeReference<Map<String, Long>>() {}), null);
    } catch (IOException e) {
      throw new IllegalStateException(
          "unreadable " + SUMMARY_KEY + " in a snapshot summary: " + json, e);
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
    return new SourceOffsets(copy, truncatedAt);
  }

  /** The source position (hex) of the latest TRUNCATE committed, or null when there was none. */
  public String truncatedAt() {
    return truncatedAt;
  }

  public SourceOffsets truncatedAt(String position) {
    return new SourceOffsets(offsets, position);
  }

  public Map<String, Long> asMap() {
    return offsets;
  }

  public String toJson() {
    try {
      return JSON.writeValueAsString(offsets);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
