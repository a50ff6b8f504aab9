package dev.lakestream.common.kafka;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.streams.StreamsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the topics an app writes, when absent. The replication factor is the app's {@code
 * replication.factor} (Kafka Streams' own setting; -1, the default, takes the broker's).
 */
public final class Topics {

  private static final Logger LOG = LoggerFactory.getLogger(Topics.class);

  /** A topic, its partition count, and the configs it is created with. */
  public record Spec(String name, int partitions, Map<String, String> configs) {
    public Spec(String name, int partitions) {
      this(name, partitions, Map.of());
    }

    /** A topic whose records are kept at least {@code retentionMs} (the longest stall the pipeline tolerates). */
    public static Spec retaining(String name, int partitions, long retentionMs) {
      return new Spec(
          name, partitions, Map.of(TopicConfig.RETENTION_MS_CONFIG, Long.toString(retentionMs)));
    }
  }

  private Topics() {}

  /** The partition count of an existing topic (a topic just created may take a moment to be known). */
  public static int partitions(Properties appProps, String topic) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 15_000;
    try (Admin admin = Admin.create(adminProperties(appProps))) {
      while (true) {
        try {
          return admin
              .describeTopics(List.of(topic))
              .allTopicNames()
              .get()
              .get(topic)
              .partitions()
              .size();
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof UnknownTopicOrPartitionException)
              || System.currentTimeMillis() > deadline) {
            throw new IllegalStateException(
                "cannot describe topic " + topic + ": " + e.getCause().getMessage(), e);
          }
          Thread.sleep(200);
        }
      }
    }
  }

  /** The Admin client settings among an app's properties (brokers, security, timeouts). */
  public static Properties adminProperties(Properties appProps) {
    Properties adminProps = new Properties();
    for (String key : appProps.stringPropertyNames()) {
      if (AdminClientConfig.configNames().contains(key)) {
        adminProps.put(key, appProps.getProperty(key));
      }
    }
    return adminProps;
  }

  /**
   * Fails when {@code topic} keeps its records for less than {@code minMs}: records a stalled app
   * has not read yet would be dropped, silently. {@code setting} names what asks for it.
   */
  public static void requireRetention(Properties appProps, String topic, long minMs, String setting)
      throws InterruptedException {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    long deadline = System.currentTimeMillis() + 15_000;
    try (Admin admin = Admin.create(adminProperties(appProps))) {
      Config config;
      while (true) {
        try {
          config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
          break;
        } catch (ExecutionException e) {
          // A topic just created may take a moment to be known.
          if (!(e.getCause() instanceof UnknownTopicOrPartitionException)
              || System.currentTimeMillis() > deadline) {
            throw e;
          }
          Thread.sleep(200);
        }
      }
      ConfigEntry entry = config.get(TopicConfig.RETENTION_MS_CONFIG);
      long retention = entry == null || entry.value() == null ? -1 : Long.parseLong(entry.value());
      if (retention >= 0 && retention < minMs) {
        throw new IllegalStateException(
            "topic " + topic + " keeps records for " + retention + " ms (retention.ms), less"
                + " than " + setting + " = " + minMs
                + " ms: after a stall that long its unread records would be lost."
                + " Raise its retention.ms (kafka-configs --alter --entity-type topics --entity-name "
                + topic
                + " --add-config retention.ms=" + minMs + ") or lower " + setting);
      }
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "cannot describe topic " + topic + ": " + e.getCause().getMessage(), e);
    }
  }

  /**
   * The topics among those named, or matching {@code pattern} when {@code names} is null, whose
   * {@code cleanup.policy} includes {@code compact}. Topics that do not exist yet are left out.
   */
  public static Set<String> compacted(
      Properties appProps, Collection<String> names, Pattern pattern) throws InterruptedException {
    try (Admin admin = Admin.create(adminProperties(appProps))) {
      Set<String> existing = admin.listTopics().names().get();
      List<ConfigResource> resources = existing.stream()
          .filter(t -> names != null ? names.contains(t) : pattern.matcher(t).matches())
          .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t))
          .toList();
      Set<String> out = new TreeSet<>();
      if (resources.isEmpty()) {
        return out;
      }
      admin.describeConfigs(resources).all().get().forEach((resource, config) -> {
        ConfigEntry policy = config.get(TopicConfig.CLEANUP_POLICY_CONFIG);
        if (policy != null
            && policy.value() != null
            && policy.value().contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
          out.add(resource.name());
        }
      });
      return out;
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "cannot describe the source topics: " + e.getCause().getMessage(), e);
    }
  }

  public static void ensure(Properties appProps, List<Spec> topics) throws InterruptedException {
    Properties adminProps = adminProperties(appProps);
    short replication =
        Short.parseShort(appProps.getProperty(StreamsConfig.REPLICATION_FACTOR_CONFIG, "-1"));
    try (Admin admin = Admin.create(adminProps)) {
      Set<String> existing = admin.listTopics().names().get();
      List<NewTopic> missing = new ArrayList<>();
      for (Spec spec : topics) {
        if (!existing.contains(spec.name())) {
          missing.add(
              new NewTopic(spec.name(), Optional.of(spec.partitions()), Optional.of(replication))
                  .configs(spec.configs()));
        }
      }
      if (missing.isEmpty()) {
        return;
      }
      for (var entry : admin.createTopics(missing).values().entrySet()) {
        try {
          entry.getValue().get();
          LOG.info("Created topic {}", entry.getKey());
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof TopicExistsException)) {
            throw new IllegalStateException(
                "cannot create topic " + entry.getKey() + ": " + e.getCause().getMessage(), e);
          }
        }
      }
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot list topics: " + e.getCause().getMessage(), e);
    }
  }
}
