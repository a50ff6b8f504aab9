package dev.lakestream.sync;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.SpillingSerde;
import java.util.Locale;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;

/** The sync app's settings, read from a {@link PipelineConfig}. */
public final class SyncConfig {

  public static final String BACKSTOP_MS = "sync.cycle.backstop.ms";
  public static final String ROUND_BUDGET_MS = "sync.cycle.round.budget.ms";
  public static final String CYCLE_TIMEOUT_MS = "sync.cycle.timeout.ms";
  public static final String CYCLE_MAX_SNAPSHOTS = "sync.cycle.max.snapshots";
  public static final String CONVERT_PARTITIONS = "sync.convert.partitions";
  public static final String CONVERT_GROUP_BYTES = "sync.convert.group.bytes";
  public static final String CONVERT_GROUP_MAX_FILES = "sync.convert.group.max.files";
  public static final String CONVERT_READ_THREADS = "sync.convert.read.threads";
  public static final String CONVERT_VECTORS_KEPT_BYTES = "sync.convert.vectors.kept.bytes";
  /** {@code scan} (default) or {@code index}; {@code sync.resolver.<namespace>.<table>} overrides per table. */
  public static final String RESOLVER = "sync.resolver";

  public static final String INDEX_PARTITIONS = "sync.index.partitions";
  public static final String INDEX_BOOTSTRAP_INTERVAL_MS = "sync.index.bootstrap.interval.ms";
  public static final String INDEX_BOOTSTRAP_BUDGET_MS = "sync.index.bootstrap.budget.ms";

  /** How a cycle finds the rows its equality deletes remove. */
  public enum Resolver {
    /** Read the key column of every data file a delete may apply to (by sequence number and key bounds). */
    SCAN,
    /** Look the keys up in the key index; files it has not indexed are scanned. */
    INDEX
  }

  private final PipelineConfig config;

  public SyncConfig(PipelineConfig config) {
    this.config = config;
    if (backstopMs() <= 0) {
      throw new IllegalArgumentException(BACKSTOP_MS + " must be positive");
    }
    if (convertGroupBytes() <= 0 || convertGroupMaxFiles() <= 0 || convertReadThreads() <= 0) {
      throw new IllegalArgumentException(CONVERT_GROUP_BYTES + ", " + CONVERT_GROUP_MAX_FILES
          + " and " + CONVERT_READ_THREADS + " must be positive");
    }
    if (cycleMaxSnapshots() <= 0) {
      throw new IllegalArgumentException(CYCLE_MAX_SNAPSHOTS + " must be positive");
    }
    if (convertVectorsKeptBytes() < 0) {
      throw new IllegalArgumentException(CONVERT_VECTORS_KEPT_BYTES + " must not be negative");
    }
  }

  public PipelineConfig pipeline() {
    return config;
  }

  public String applicationId() {
    return config.require(StreamsConfig.APPLICATION_ID_CONFIG);
  }

  /** Realtime commits announced by ingest: the triggers of sync cycles. */
  public String realtimeCommitsTopic() {
    return config.realtimeCommitsTopic();
  }

  /** Main commits announced by sync. */
  public String mainCommitsTopic() {
    return config.mainCommitsTopic();
  }

  /** Convert tasks, keyed by data file (internal). */
  public String convertTasksTopic() {
    return applicationId() + "-convert-tasks";
  }

  /** Convert results, keyed by table (internal; as many partitions as the realtime-commits topic). */
  public String convertResultsTopic() {
    return applicationId() + "-convert-results";
  }

  /**
   * A cycle whose results have not all come back this long after it was planned is abandoned and
   * its table planned again after a backoff; at a fifth of it {@code /health} reports it stalled.
   */
  public long cycleTimeoutMs() {
    return config.getLong(CYCLE_TIMEOUT_MS);
  }

  /**
   * The largest record sync writes ({@link SpillingSerde#limitFor}): larger plans, tasks and
   * results are written to a file in the table's metadata folder and referenced. Follows the
   * producer's {@code max.request.size} ({@code producer.max.request.size} counts first).
   */
  public int recordLimitBytes() {
    Properties kafka = config.kafkaProperties();
    String size = kafka.getProperty(
        StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG),
        kafka.getProperty(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "1048576"));
    return SpillingSerde.limitFor(Integer.parseInt(size.trim()));
  }

  /**
   * The most realtime snapshots one cycle mirrors: a backlog (sync stopped, a table parked) is
   * mirrored in several cycles, each planned and converted within the stream thread's limits
   * rather than one that reads every snapshot's manifests and pairs every delete at once.
   */
  public int cycleMaxSnapshots() {
    return config.getInt(CYCLE_MAX_SNAPSHOTS);
  }

  /** How often every known table is checked for realtime commits that no event announced. */
  public long backstopMs() {
    return config.getLong(BACKSTOP_MS);
  }

  /**
   * How long one round of the coordinator may take on the stream thread, whose transaction is open
   * meanwhile: a periodic check of the known tables (each a catalog call or two, a plan and a
   * maintenance check; the rest are checked in the next, from where it stopped), or the cycles of
   * a backlog that have nothing to convert and are committed one after another (the rest wait for
   * the next trigger or check).
   */
  public long roundBudgetMs() {
    return config.getLong(ROUND_BUDGET_MS);
  }

  /** The resolver of {@code table} ({@code namespace.name}). */
  public Resolver resolver(String table) {
    String value = config.get(RESOLVER + "." + table, config.getString(RESOLVER));
    try {
      return Resolver.valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          RESOLVER + " (or " + RESOLVER + "." + table + ") must be scan or index, not " + value);
    }
  }

  /** Whether any table may use the key index (then the app runs its processor and topics). */
  public boolean indexEnabled() {
    return config.asMap().entrySet().stream()
        .anyMatch(
            e -> e.getKey().startsWith(RESOLVER) && e.getValue().trim().equalsIgnoreCase("index"));
  }

  /** Partitions of the key index (and of its lookups topic); fixed once the index is built. */
  public int indexPartitions() {
    return config.getInt(INDEX_PARTITIONS);
  }

  public long indexBootstrapIntervalMs() {
    return config.getLong(INDEX_BOOTSTRAP_INTERVAL_MS);
  }

  /** How long one bootstrap step may hold the stream thread. */
  public long indexBootstrapBudgetMs() {
    return config.getLong(INDEX_BOOTSTRAP_BUDGET_MS);
  }

  /** Key-index lookups, one per index partition per cycle (internal). */
  public String indexLookupsTopic() {
    return applicationId() + "-index-lookups";
  }

  /** Key-index results, keyed by table (internal; as many partitions as the realtime-commits topic). */
  public String indexResultsTopic() {
    return applicationId() + "-index-results";
  }

  /** Partitions of the convert-tasks topic: how many converters can work on one cycle at once. */
  public int convertPartitions() {
    return config.getInt(CONVERT_PARTITIONS);
  }

  /**
   * How many bytes of data files one converter reads for one group of a cycle's convert tasks
   * (files the key index resolved count nothing): a cycle's tasks are packed into groups of about
   * this much, and each group's deletion vectors go into one Puffin file.
   */
  public long convertGroupBytes() {
    return config.getLong(CONVERT_GROUP_BYTES);
  }

  /** The most data files in one group of convert tasks. */
  public int convertGroupMaxFiles() {
    return config.getInt(CONVERT_GROUP_MAX_FILES);
  }

  /** How many of a group's data files a sync app's converter reads at once. */
  public int convertReadThreads() {
    return config.getInt(CONVERT_READ_THREADS);
  }

  public long convertVectorsKeptBytes() {
    return config.getLong(CONVERT_VECTORS_KEPT_BYTES);
  }
}
