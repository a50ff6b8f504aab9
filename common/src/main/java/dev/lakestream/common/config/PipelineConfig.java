package dev.lakestream.common.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The configuration of an app: one properties file whose keys are each overridable by an
 * environment variable, for containers.
 *
 * <p>Keys keep the names their owners give them: Kafka Streams and client properties as Kafka
 * names them ({@code bootstrap.servers}, {@code application.id}, ...), Iceberg catalog properties
 * as Iceberg names them under {@code iceberg.catalog.} ({@code iceberg.catalog.type=rest}, {@code
 * iceberg.catalog.uri}, ...), and this pipeline's settings under {@code lakestream.}, {@code
 * ingest.} and {@code sync.}.
 *
 * <p>An environment variable {@code LAKESTREAM_<KEY>} overrides {@code <key>}: the key upper-cased,
 * with {@code .} written {@code _}, {@code _} written {@code __} and {@code -} written {@code ___}
 * (so {@code LAKESTREAM_BOOTSTRAP_SERVERS} sets {@code bootstrap.servers} and {@code
 * LAKESTREAM_ICEBERG_CATALOG_IO___IMPL} sets {@code iceberg.catalog.io-impl}).
 *
 * <p>{@link #toString()} masks the values of secret-looking keys; log only that.
 */
public final class PipelineConfig {

  private static final Logger LOG = LoggerFactory.getLogger(PipelineConfig.class);

  public static final String ENV_PREFIX = "LAKESTREAM_";
  public static final String CATALOG_PREFIX = "iceberg.catalog.";
  public static final String CATALOG_NAME = "iceberg.catalog";
  public static final String TOPIC_PREFIX = "lakestream.topic.prefix";
  public static final String METRICS_PORT = "lakestream.metrics.port";
  public static final String METRICS_BIND_ADDRESS = "lakestream.metrics.bind.address";
  public static final String DLQ_TOPIC = "lakestream.dlq.topic";
  /**
   * The longest the pipeline may stall (an app down, a table parked) and still resume without loss:
   * the internal topics keep records this long, and no file younger than it is an orphan.
   */
  public static final String MAX_STALL_MS = "lakestream.max.stall.ms";

  public static final String COMMIT_ON_HANDOFF = "lakestream.commit.on.handoff";

  public static final long DEFAULT_MAX_STALL_MS = 7L * 24 * 3_600_000;

  private static final String[] PIPELINE_PREFIXES = {"iceberg.", "lakestream.", "ingest.", "sync."};
  /**
   * Keys whose values are secrets: passwords, secrets, tokens, credentials, JAAS configs, private
   * and access keys, signatures; any key ending in {@code key} ({@code ssl.key}, {@code
   * s3.access-key}); headers a client sends ({@code iceberg.catalog.header.Authorization}); basic
   * auth user info; anything with {@code auth} in its last part.
   */
  private static final Pattern SECRET = Pattern.compile(
      "(?i).*(password|secret|token|credential|jaas|private"
          + "|access-key|access\\.key|sas|signature|key$|(^|\\.)header\\.|basic\\.auth|\\.auth[^.]*$).*");
  /** The password in a URI's user info ({@code scheme://user:password@host}) or a {@code password=} parameter. */
  private static final Pattern URI_PASSWORD =
      Pattern.compile("(?i)(://[^/:@\\s]+:)[^@/\\s]+@|((?:^|[?&;])password=)[^&;\\s]+");

  private final Map<String, String> values;

  public PipelineConfig(Map<String, String> values) {
    this.values = Collections.unmodifiableSortedMap(new TreeMap<>(values));
  }

  /** Reads {@code file} (when not null) and applies the overrides found in {@code env}. */
  public static PipelineConfig load(Path file, Map<String, String> env) throws IOException {
    Map<String, String> values = new TreeMap<>();
    if (file != null) {
      Properties props = new Properties();
      try (InputStream in = Files.newInputStream(file)) {
        props.load(in);
      }
      props
          .stringPropertyNames()
          .forEach(k -> values.put(k, props.getProperty(k).trim()));
    }
    env.forEach((name, value) -> {
      if (name.startsWith(ENV_PREFIX) && name.length() > ENV_PREFIX.length()) {
        values.put(keyOf(name.substring(ENV_PREFIX.length())), value);
      }
    });
    return new PipelineConfig(values);
  }

  /** The property key an environment variable name (without the prefix) stands for. */
  static String keyOf(String envName) {
    return envName
        .toLowerCase(Locale.ROOT)
        .replace("___", "\u0001")
        .replace("__", "\u0002")
        .replace('_', '.')
        .replace('\u0001', '-')
        .replace('\u0002', '_');
  }

  public PipelineConfig with(String key, String value) {
    Map<String, String> copy = new TreeMap<>(values);
    copy.put(key, value);
    return new PipelineConfig(copy);
  }

  public String get(String key) {
    return values.get(key);
  }

  public String get(String key, String defaultValue) {
    return values.getOrDefault(key, defaultValue);
  }

  public String require(String key) {
    String value = values.get(key);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("missing required setting " + key
          + " (in the properties file, or as environment variable " + envNameOf(key) + ")");
    }
    return value;
  }

  public long getLong(String key, long defaultValue) {
    String value = values.get(key);
    try {
      return value == null ? defaultValue : Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "setting " + key + " must be a whole number, found \"" + value + "\"");
    }
  }

  public int getInt(String key, int defaultValue) {
    return Math.toIntExact(getLong(key, defaultValue));
  }

  /** {@code key}, a listed {@link Settings setting}, as a number; its listed default when unset. */
  public long getLong(String key) {
    return getLong(key, Long.parseLong(Settings.defaultOf(key)));
  }

  public int getInt(String key) {
    return Math.toIntExact(getLong(key));
  }

  /** {@code key}, a listed {@link Settings setting}; its listed default when unset. */
  public String getString(String key) {
    return get(key, Settings.defaultOf(key));
  }

  public boolean getBoolean(String key) {
    String value = getString(key).trim();
    if (!"true".equalsIgnoreCase(value) && !"false".equalsIgnoreCase(value)) {
      throw new IllegalArgumentException(
          "setting " + key + " must be true or false, found \"" + value + "\"");
    }
    return Boolean.parseBoolean(value);
  }

  /**
   * Checks the project's settings ({@link Settings#problems}): a value of the wrong type fails,
   * naming the key; an unknown key is logged (a misspelling would otherwise go unnoticed).
   */
  public void check() {
    List<String> problems = Settings.problems(values);
    List<String> wrong =
        problems.stream().filter(p -> !p.startsWith("unknown setting")).toList();
    problems.stream()
        .filter(p -> p.startsWith("unknown setting"))
        .forEach(p -> LOG.warn("{}: ignored", p));
    if (!wrong.isEmpty()) {
      throw new IllegalArgumentException("invalid settings: " + String.join("; ", wrong));
    }
  }

  public String topicPrefix() {
    return getString(TOPIC_PREFIX);
  }

  /**
   * Where ingest announces its realtime commits, the triggers of sync's cycles: {@code
   * <prefix>.realtime-commits}. The one definition of the topic both apps share.
   */
  public String realtimeCommitsTopic() {
    return topicPrefix() + ".realtime-commits";
  }

  /** Where sync announces its main commits: {@code <prefix>.main-commits}. */
  public String mainCommitsTopic() {
    return topicPrefix() + ".main-commits";
  }

  /**
   * {@link #COMMIT_ON_HANDOFF}, on unless set: a processor that hands work to the next stage through
   * a topic (a batch written, a realtime commit announced, a cycle's key lookups or tasks sent,
   * their results) asks Kafka Streams to commit its transaction at once. Under exactly-once the next stage reads
   * the records only once the transaction commits; without the request they wait for the next
   * {@code commit.interval.ms}, at every hand-off on a change's way to main.
   */
  public boolean commitOnHandoff() {
    return getBoolean(COMMIT_ON_HANDOFF);
  }

  /** {@link #MAX_STALL_MS}, 7 days unless set. */
  public long maxStallMs() {
    long value = getLong(MAX_STALL_MS);
    if (value <= 0) {
      throw new IllegalArgumentException(MAX_STALL_MS + " must be positive");
    }
    return value;
  }

  /** Where records no stage can apply go, with the reason: {@code <prefix>.dlq} unless set. */
  public String deadLetterTopic() {
    return get(DLQ_TOPIC, get("ingest.dlq.topic", topicPrefix() + ".dlq"));
  }

  /** The address the metrics and health endpoint listens on: every interface unless set. */
  public String metricsBindAddress() {
    return getString(METRICS_BIND_ADDRESS);
  }

  public String catalogName() {
    return get(CATALOG_NAME, "lakestream");
  }

  /** Iceberg catalog properties, under Iceberg's own names (the {@code iceberg.catalog.} prefix removed). */
  public Map<String, String> catalogProperties() {
    Map<String, String> out = new TreeMap<>();
    values.forEach((k, v) -> {
      if (k.startsWith(CATALOG_PREFIX)) {
        out.put(k.substring(CATALOG_PREFIX.length()), v);
      }
    });
    return out;
  }

  /** Kafka Streams and client properties: every key outside this pipeline's own prefixes. */
  public Properties kafkaProperties() {
    Properties props = new Properties();
    values.forEach((k, v) -> {
      for (String prefix : PIPELINE_PREFIXES) {
        if (k.startsWith(prefix)) {
          return;
        }
      }
      props.put(k, v);
    });
    return props;
  }

  public Map<String, String> asMap() {
    return values;
  }

  /** {@code value} with the passwords it carries in URIs hidden. */
  static String masked(String value) {
    return URI_PASSWORD
        .matcher(value)
        .replaceAll(m -> Matcher.quoteReplacement(
            m.group(1) != null ? m.group(1) + "[hidden]@" : m.group(2) + "[hidden]"));
  }

  static boolean isSecret(String key) {
    return SECRET.matcher(key).matches();
  }

  public static String envNameOf(String key) {
    return ENV_PREFIX
        + key.replace("_", "__").replace("-", "___").replace('.', '_').toUpperCase(Locale.ROOT);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    values.forEach((k, v) ->
        sb.append("\n  ").append(k).append('=').append(isSecret(k) ? "[hidden]" : masked(v)));
    return sb.toString();
  }
}
