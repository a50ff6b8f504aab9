package dev.lakestream.common.config;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/**
 * The project's own settings ({@code lakestream.*}, {@code ingest.*}, {@code sync.*}), each with its
 * type, default and meaning: the one list the apps read their defaults from, the README's settings
 * tables are checked against (a test), and a configuration is checked with at start, so a misspelt
 * key is reported (with the key it probably meant) and a value of the wrong type fails with the key
 * named. Kafka's and Iceberg's settings keep their own names and are not listed here.
 *
 * <p>A default of null is computed by the code from other settings (named in the doc).
 */
public final class Settings {

  /** One setting. */
  public record Setting(String name, ConfigDef.Type type, String defaultValue, String doc) {}

  private static final Map<String, Setting> ALL = new LinkedHashMap<>();
  /** Settings whose name carries a table: {@code sync.resolver.<namespace>.<table>}. */
  private static final List<Pattern> PER_TABLE =
      List.of(Pattern.compile("sync\\.resolver\\.[^.]+\\..+"));

  private static final Pattern OURS = Pattern.compile("(lakestream|ingest|sync)\\..*");

  static {
    // Both apps
    define(
        "lakestream.topic.prefix",
        ConfigDef.Type.STRING,
        "lakestream",
        "prefix of the topics the apps share: <prefix>.realtime-commits, <prefix>.main-commits, <prefix>.dlq");
    define(
        "lakestream.dlq.topic",
        ConfigDef.Type.STRING,
        null,
        "the dead-letter topic of both apps; <prefix>.dlq unless set");
    define(
        "lakestream.max.stall.ms",
        ConfigDef.Type.LONG,
        Long.toString(PipelineConfig.DEFAULT_MAX_STALL_MS),
        "the longest stall the pipeline resumes from without loss: retention of the files-written topic, bound of the orphan age");
    define(
        "lakestream.commit.on.handoff",
        ConfigDef.Type.BOOLEAN,
        "true",
        "commit the stream thread's transaction as soon as a stage hands work to the next, not at the next commit.interval.ms");
    define(
        "lakestream.metrics.port",
        ConfigDef.Type.INT,
        null,
        "port of /metrics and /health (ingest 9400, sync 9401); 0 picks a free port, -1 serves nothing");
    define(
        "lakestream.metrics.bind.address",
        ConfigDef.Type.STRING,
        "0.0.0.0",
        "the address the metrics server listens on");
    define(
        "lakestream.manifest.cache.max.bytes",
        ConfigDef.Type.LONG,
        null,
        "heap kept for decoded manifests, per process; a sixteenth of the JVM's heap unless set, 0 keeps none");
    // ingest
    define(
        "ingest.topics",
        ConfigDef.Type.LIST,
        null,
        "the Debezium topics to read (this or ingest.topics.regex)");
    define(
        "ingest.topics.regex",
        ConfigDef.Type.STRING,
        null,
        "a pattern of the Debezium topics to read");
    define(
        "ingest.table.name.regex",
        ConfigDef.Type.STRING,
        null,
        "topic to table: a pattern over the topic name (default maps <prefix>.<schema>.<table>)");
    define(
        "ingest.table.name.replacement",
        ConfigDef.Type.STRING,
        null,
        "topic to table: the replacement, namespace.table");
    define(
        "ingest.flush.interval.ms",
        ConfigDef.Type.LONG,
        "1000",
        "a source partition's batch is written this often");
    define(
        "ingest.flush.max.rows",
        ConfigDef.Type.LONG,
        "100000",
        "or when it holds this many changes");
    define(
        "ingest.flush.max.bytes",
        ConfigDef.Type.LONG,
        Long.toString(64L * 1024 * 1024),
        "or this many bytes");
    define(
        "ingest.buffer.max.bytes",
        ConfigDef.Type.LONG,
        Long.toString(256L * 1024 * 1024),
        "a task's open batches held on the heap at most; past it, its largest batch is written");
    define(
        "ingest.commit.interval.ms",
        ConfigDef.Type.LONG,
        "200",
        "how often written batches are committed to realtime");
    define(
        "ingest.commit.async",
        ConfigDef.Type.BOOLEAN,
        "true",
        "commit to realtime on a thread of the committer's own, so the stream thread reads on");
    define(
        "ingest.dlq.topic", ConfigDef.Type.STRING, null, "the older name of lakestream.dlq.topic");
    define(
        "ingest.internal.topic.partitions",
        ConfigDef.Type.INT,
        "6",
        "partitions of the topics ingest creates");
    define(
        "ingest.source.fence.enabled",
        ConfigDef.Type.BOOLEAN,
        "true",
        "drop changes the source connector publishes again, by source position");
    define(
        "ingest.changelog.tables",
        ConfigDef.Type.STRING,
        "",
        "tables (namespace.table, comma-separated, or *) that also keep a change log <table>_changelog");
    define(
        "ingest.deferrable.key.tables",
        ConfigDef.Type.STRING,
        "",
        "PostgreSQL tables (namespace.table, comma-separated) with a DEFERRABLE primary key and"
            + " REPLICA IDENTITY FULL, whose deletes are told apart from rows moved into their key");
    define(
        "ingest.unavailable.value.placeholder",
        ConfigDef.Type.STRING,
        "__debezium_unavailable_value",
        "the connector's unavailable.value.placeholder (unchanged TOAST values)");
    define(
        "ingest.flush.round.budget.ms",
        ConfigDef.Type.LONG,
        "10000",
        "how long one punctuation of a task may spend flushing its due batches; the rest, oldest"
            + " first, are flushed at the next");
    // sync
    define(
        "sync.cycle.backstop.ms",
        ConfigDef.Type.LONG,
        "10000",
        "every known table is checked this often");
    define(
        "sync.cycle.round.budget.ms",
        ConfigDef.Type.LONG,
        "10000",
        "how long one round of sync's coordinator may take on the stream thread: a periodic check"
            + " of the known tables, or cycles of a backlog committed one after another; the rest"
            + " waits for the next round");
    define(
        "sync.cycle.timeout.ms",
        ConfigDef.Type.LONG,
        "600000",
        "a cycle with no convert result for this long is abandoned and its table retried later");
    define(
        "sync.cycle.max.snapshots",
        ConfigDef.Type.INT,
        "200",
        "the most realtime snapshots one cycle mirrors; a backlog is mirrored in several cycles");
    define(
        "sync.convert.partitions",
        ConfigDef.Type.INT,
        "12",
        "partitions of the convert-tasks topic");
    define(
        "sync.convert.group.bytes",
        ConfigDef.Type.LONG,
        "134217728",
        "bytes of data files one converter reads for one group of a cycle's convert tasks; each group's deletion vectors go into one Puffin file");
    define(
        "sync.convert.group.max.files",
        ConfigDef.Type.INT,
        "32",
        "the most data files in one group of convert tasks (a group is converted within one Kafka transaction)");
    define(
        "sync.convert.read.threads",
        ConfigDef.Type.INT,
        "8",
        "how many data files (and their deletion vectors) of a group one sync app reads at once: on object storage each read waits for its requests' round trips");
    define(
        "sync.convert.vectors.kept.bytes",
        ConfigDef.Type.LONG,
        "67108864",
        "bytes of the deletion vectors a sync app wrote that it keeps in memory, so the next cycle merges them without reading them again; 0 keeps none");
    define(
        "sync.resolver",
        ConfigDef.Type.STRING,
        "scan",
        "scan or index: how converters find the rows a delete removes; sync.resolver.<namespace>.<table> per table");
    define("sync.index.partitions", ConfigDef.Type.INT, "6", "partitions of the key index");
    define(
        "sync.index.bootstrap.interval.ms",
        ConfigDef.Type.LONG,
        "1000",
        "how often the key index indexes files it lacks");
    define(
        "sync.index.bootstrap.budget.ms",
        ConfigDef.Type.LONG,
        "2000",
        "how long one bootstrap step may take");
    define(
        "sync.maintenance.enabled",
        ConfigDef.Type.BOOLEAN,
        "true",
        "run maintenance in the sync app");
    define(
        "sync.maintenance.check.interval.ms",
        ConfigDef.Type.LONG,
        "60000",
        "how often a table's policies are checked");
    define(
        "sync.maintenance.threads",
        ConfigDef.Type.INT,
        "1",
        "how many tables' maintenance runs may go at once (never two of one table)");
    define(
        "sync.maintenance.compaction.target-file-size-bytes",
        ConfigDef.Type.LONG,
        Long.toString(128L * 1024 * 1024),
        "compaction bin size; one output file per bin");
    define(
        "sync.maintenance.compaction.small-file-size-bytes",
        ConfigDef.Type.LONG,
        null,
        "files below this are small (3/4 of the target)");
    define(
        "sync.maintenance.compaction.min-small-files",
        ConfigDef.Type.INT,
        "10",
        "compact when this many small files are live");
    define(
        "sync.maintenance.compaction.min-small-bytes",
        ConfigDef.Type.LONG,
        null,
        "or when they hold this many bytes (the target)");
    define(
        "sync.maintenance.compaction.max-small-file-age-ms",
        ConfigDef.Type.LONG,
        "3600000",
        "or when 2+ are small and the oldest is this old");
    define(
        "sync.maintenance.compaction.max-delete-files",
        ConfigDef.Type.INT,
        "100",
        "rewrite every file an equality delete applies to when this many equality-delete files are live");
    define(
        "sync.maintenance.expire.realtime.max-snapshot-age-ms",
        ConfigDef.Type.LONG,
        "600000",
        "realtime keeps snapshots younger than this");
    define(
        "sync.maintenance.expire.realtime.min-snapshots-to-keep",
        ConfigDef.Type.INT,
        "10",
        "and at least this many");
    define(
        "sync.maintenance.expire.main.max-snapshot-age-ms",
        ConfigDef.Type.LONG,
        "3600000",
        "main keeps snapshots younger than this");
    define(
        "sync.maintenance.expire.main.min-snapshots-to-keep",
        ConfigDef.Type.INT,
        "100",
        "and at least this many");
    define(
        "sync.maintenance.orphans.enabled",
        ConfigDef.Type.BOOLEAN,
        "false",
        "remove orphan files automatically");
    define(
        "sync.maintenance.orphans.interval.ms",
        ConfigDef.Type.LONG,
        "3600000",
        "how often orphan files are looked for");
    define(
        "sync.maintenance.orphans.min-age-ms",
        ConfigDef.Type.LONG,
        null,
        "only older files can be orphans (lakestream.max.stall.ms plus a day); must exceed the stall");
  }

  private Settings() {}

  private static void define(String name, ConfigDef.Type type, String defaultValue, String doc) {
    ALL.put(name, new Setting(name, type, defaultValue, doc));
  }

  public static Collection<Setting> all() {
    return ALL.values();
  }

  public static Optional<Setting> find(String name) {
    return Optional.ofNullable(ALL.get(name));
  }

  /** The default of {@code name}, which must be a listed setting with a fixed default. */
  static String defaultOf(String name) {
    Setting setting = ALL.get(name);
    if (setting == null || setting.defaultValue() == null) {
      throw new IllegalArgumentException(
          "no fixed default for " + name + " in " + Settings.class.getSimpleName());
    }
    return setting.defaultValue();
  }

  /**
   * What is wrong with the project's settings in {@code values}: keys no setting has (with the one
   * probably meant), and values of the wrong type. Other keys (Kafka's, Iceberg's) are not checked.
   */
  public static List<String> problems(Map<String, String> values) {
    List<String> problems = new ArrayList<>();
    for (var e : values.entrySet()) {
      String key = e.getKey();
      if (!OURS.matcher(key).matches()) {
        continue;
      }
      Setting setting = ALL.get(key);
      if (setting == null) {
        if (PER_TABLE.stream().noneMatch(p -> p.matcher(key).matches())) {
          problems.add("unknown setting " + key
              + closest(key).map(c -> " (did you mean " + c + "?)").orElse(""));
        }
        continue;
      }
      try {
        ConfigDef.parseType(key, e.getValue().trim(), setting.type());
      } catch (ConfigException ex) {
        problems.add(
            key + "=" + e.getValue() + ": not a " + setting.type().name().toLowerCase());
      }
    }
    return problems;
  }

  private static Optional<String> closest(String key) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String name : ALL.keySet()) {
      int d = distance(key, name);
      if (d < bestDistance) {
        bestDistance = d;
        best = name;
      }
    }
    return bestDistance <= Math.max(3, key.length() / 5) ? Optional.of(best) : Optional.empty();
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
