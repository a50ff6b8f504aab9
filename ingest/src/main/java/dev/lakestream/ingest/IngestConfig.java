package dev.lakestream.ingest;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.TableNaming;
import dev.lakestream.ingest.buffer.ChangeBuffer;
import dev.lakestream.ingest.commit.RealtimeCommitter;
import dev.lakestream.ingest.fence.SourceFence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The ingest app's settings, read from a {@link PipelineConfig}. Every setting has a default except
 * the topics to read ({@code ingest.topics} or {@code ingest.topics.regex}) and {@code
 * application.id}.
 */
public final class IngestConfig {

  public static final String TOPICS = "ingest.topics";
  public static final String TOPICS_REGEX = "ingest.topics.regex";
  public static final String TABLE_NAME_REGEX = "ingest.table.name.regex";
  public static final String TABLE_NAME_REPLACEMENT = "ingest.table.name.replacement";
  public static final String FLUSH_INTERVAL_MS = "ingest.flush.interval.ms";
  public static final String FLUSH_MAX_ROWS = "ingest.flush.max.rows";
  public static final String FLUSH_MAX_BYTES = "ingest.flush.max.bytes";
  public static final String BUFFER_MAX_BYTES = "ingest.buffer.max.bytes";
  public static final String COMMIT_INTERVAL_MS = "ingest.commit.interval.ms";
  public static final String COMMIT_ASYNC = "ingest.commit.async";
  public static final String DLQ_TOPIC = "ingest.dlq.topic";
  public static final String INTERNAL_TOPIC_PARTITIONS = "ingest.internal.topic.partitions";
  public static final String CHANGELOG_TABLES = "ingest.changelog.tables";
  public static final String SOURCE_FENCE = "ingest.source.fence.enabled";
  public static final String UNAVAILABLE_VALUE_PLACEHOLDER = "ingest.unavailable.value.placeholder";
  public static final String FLUSH_ROUND_BUDGET_MS = "ingest.flush.round.budget.ms";
  public static final String DEFERRABLE_KEY_TABLES = "ingest.deferrable.key.tables";

  private final PipelineConfig config;
  // Read for every change: looked up once (a lookup parses the setting each time).
  private final boolean sourceFence;
  private final long flushMaxRows;
  private final long flushMaxBytes;
  private final long bufferMaxBytes;

  public IngestConfig(PipelineConfig config) {
    this.config = config;
    this.sourceFence = config.getBoolean(SOURCE_FENCE);
    this.flushMaxRows = config.getLong(FLUSH_MAX_ROWS);
    this.flushMaxBytes = config.getLong(FLUSH_MAX_BYTES);
    this.bufferMaxBytes = config.getLong(BUFFER_MAX_BYTES);
    if (config.get(TOPICS) == null && config.get(TOPICS_REGEX) == null) {
      throw new IllegalArgumentException("set " + TOPICS + " (comma-separated change topics) or "
          + TOPICS_REGEX + " (a pattern, e.g. dbserver1\\.inventory\\..*)");
    }
    String own = ownTopicRead();
    if (own != null) {
      throw new IllegalArgumentException((config.get(TOPICS) != null ? TOPICS : TOPICS_REGEX)
          + " takes in " + own + ", a topic of the pipeline's own: ingest would read what it writes"
          + " (a dead letter read back is dead-lettered again, without end). Name Debezium's topics"
          + " only (e.g. dbserver1\\.inventory\\..*), or give the pipeline's topics another "
          + PipelineConfig.TOPIC_PREFIX);
    }
    if (flushIntervalMs() <= 0
        || flushMaxRows() <= 0
        || flushMaxBytes() <= 0
        || bufferMaxBytes() <= 0
        || commitIntervalMs() <= 0) {
      throw new IllegalArgumentException(FLUSH_INTERVAL_MS + ", " + FLUSH_MAX_ROWS + ", "
          + FLUSH_MAX_BYTES + ", " + BUFFER_MAX_BYTES + " and " + COMMIT_INTERVAL_MS
          + " must be positive");
    }
  }

  /**
   * The first of the pipeline's own topics (the shared ones, ingest's hand-off to its committer and
   * the changelogs of its state) that the topics to read take in, or null.
   */
  private String ownTopicRead() {
    List<String> own = new ArrayList<>(List.of(
        config.realtimeCommitsTopic(), config.mainCommitsTopic(), config.deadLetterTopic()));
    String app = config.get(StreamsConfig.APPLICATION_ID_CONFIG);
    if (app != null) {
      own.add(filesWrittenTopic());
      for (String store : List.of(
          ChangeBuffer.STARTS_STORE,
          SourceFence.STORE,
          ChangeBuffer.SCHEMA_STORE,
          ChangeBuffer.FLUSHED_STORE,
          RealtimeCommitter.STORE)) {
        own.add(app + "-" + store + "-changelog");
      }
    }
    List<String> listed = topics();
    Pattern pattern = listed == null ? topicsPattern() : null;
    for (String topic : own) {
      if (listed != null ? listed.contains(topic) : pattern.matcher(topic).matches()) {
        return topic;
      }
    }
    return null;
  }

  public PipelineConfig pipeline() {
    return config;
  }

  /** The listed topics, or null when a pattern selects them. */
  public List<String> topics() {
    String topics = config.get(TOPICS);
    return topics == null
        ? null
        : Arrays.stream(topics.split(","))
            .map(String::trim)
            .filter(t -> !t.isEmpty())
            .toList();
  }

  public Pattern topicsPattern() {
    String regex = config.get(TOPICS_REGEX);
    return regex == null ? null : Pattern.compile(regex);
  }

  /**
   * The topic-to-table mapping: the user's pattern, else Debezium's naming ({@link
   * TableNaming#debeziumDefault}, which also names topics of dotted prefixes or names by their
   * records' source).
   */
  public TableNaming tableNaming() {
    if (config.get(TABLE_NAME_REGEX) == null && config.get(TABLE_NAME_REPLACEMENT) == null) {
      return TableNaming.debeziumDefault();
    }
    return new TableNaming(
        config.get(TABLE_NAME_REGEX, TableNaming.DEFAULT_REGEX),
        config.get(TABLE_NAME_REPLACEMENT, TableNaming.DEFAULT_REPLACEMENT));
  }

  /**
   * Whether {@code table} keeps a bronze change log ({@code <table>_changelog}): {@code
   * ingest.changelog.tables} lists tables as {@code namespace.name}, or is {@code *} for all.
   */
  public boolean changelogFor(TableIdentifier table) {
    String tables = config.getString(CHANGELOG_TABLES);
    for (String t : tables.split(",")) {
      String name = t.trim();
      if (name.equals("*") || name.equals(table.toString())) {
        return true;
      }
    }
    return false;
  }

  /**
   * The tables ({@code namespace.name}) listed in {@code ingest.deferrable.key.tables}: PostgreSQL
   * tables with a DEFERRABLE primary key and REPLICA IDENTITY FULL, whose deletes ingest tells
   * apart from the rows their transaction moved into the key.
   */
  public Set<String> deferrableKeyTables() {
    return Arrays.stream(config.getString(DEFERRABLE_KEY_TABLES).split(","))
        .map(String::trim)
        .filter(t -> !t.isEmpty())
        .collect(Collectors.toUnmodifiableSet());
  }

  /**
   * Whether replays from the source connector are fenced by source position (default true). A
   * source whose positions went back is told from a replay by its later commit times ({@link
   * dev.lakestream.ingest.fence.SourceFence}); turn the fence off for a move whose first changes
   * commit within a second of the last ones applied, until they are on realtime.
   */
  public boolean sourceFence() {
    return sourceFence;
  }

  /**
   * The text Debezium writes for a value the source did not send (an unchanged TOAST value): the
   * connector's {@code unavailable.value.placeholder}, whose default this is too.
   */
  public String unavailableValuePlaceholder() {
    return config.getString(UNAVAILABLE_VALUE_PLACEHOLDER);
  }

  /**
   * How long one punctuation of a task may spend flushing its due batches (it holds the task's
   * transaction open meanwhile): a task with a batch due on each of hundreds of tables, against a
   * slow object store, would otherwise outlast the transaction's timeout at every attempt. The
   * first due batch is always flushed.
   */
  public long flushRoundBudgetMs() {
    return config.getLong(FLUSH_ROUND_BUDGET_MS);
  }

  /** A batch is flushed at the latest this long after its first change. */
  public long flushIntervalMs() {
    return config.getLong(FLUSH_INTERVAL_MS);
  }

  public long flushMaxRows() {
    return flushMaxRows;
  }

  public long flushMaxBytes() {
    return flushMaxBytes;
  }

  /**
   * The most bytes a task's open batches hold (they are on the heap): past it, the task's largest
   * batch is written before its time.
   */
  public long bufferMaxBytes() {
    return bufferMaxBytes;
  }

  /** How often the realtime committer commits the batches that have arrived. */
  public long commitIntervalMs() {
    return config.getLong(COMMIT_INTERVAL_MS);
  }

  /**
   * Whether realtime commits run on a thread of each committer's own (default true): the source
   * partitions that share a stream thread with the committer are read on while a commit runs.
   */
  public boolean commitAsync() {
    return config.getBoolean(COMMIT_ASYNC);
  }

  public String applicationId() {
    return config.require(StreamsConfig.APPLICATION_ID_CONFIG);
  }

  /** Batches on their way from the change buffers to the committers; internal to this app. */
  public String filesWrittenTopic() {
    return applicationId() + "-files-written";
  }

  /** Where realtime commits are announced to sync. */
  public String realtimeCommitsTopic() {
    return config.realtimeCommitsTopic();
  }

  /** {@code lakestream.dlq.topic} ({@code ingest.dlq.topic}, its older name, still counts), else {@code <prefix>.dlq}. */
  public String deadLetterTopic() {
    return config.deadLetterTopic();
  }

  public int internalTopicPartitions() {
    return config.getInt(INTERNAL_TOPIC_PARTITIONS);
  }
}
