package dev.lakestream.common.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
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

  /** A topic and its partition count. */
  public record Spec(String name, int partitions) {}

  private Topics() {}

  /** The partition count of an existing topic (a topic just created may take a moment to be known). */
  public static int partitions(Properties appProps, String topic) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 15_000;
    try (Admin admin = Admin.create(adminProperties(appProps))) {
      while (true) {
        try {
          return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.currentTimeMillis() > deadline) {
            throw new IllegalStateException("cannot describe topic " + topic + ": " + e.getCause().getMessage(), e);
          }
          Thread.sleep(200);
        }
      }
    }
  }

  private static Properties adminProperties(Properties appProps) {
    Properties adminProps = new Properties();
    for (String key : appProps.stringPropertyNames()) {
      if (AdminClientConfig.configNames().contains(key)) {
        adminProps.put(key, appProps.getProperty(key));
      }
    }
    return adminProps;
  }

  public static void ensure(Properties appProps, List<Spec> topics) throws InterruptedException {
    Properties adminProps = adminProperties(appProps);
    short replication = Short.parseShort(appProps.getProperty(StreamsConfig.REPLICATION_FACTOR_CONFIG, "-1"));
    try (Admin admin = Admin.create(adminProps)) {
      Set<String> existing = admin.listTopics().names().get();
      List<NewTopic> missing = new ArrayList<>();
      for (Spec spec : topics) {
        if (!existing.contains(spec.name())) {
          missing.add(new NewTopic(spec.name(), Optional.of(spec.partitions()), Optional.of(replication)).configs(Map.of()));
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
            throw new IllegalStateException("cannot create topic " + entry.getKey() + ": " + e.getCause().getMessage(), e);
          }
        }
      }
    } catch (ExecutionException e) {
      throw new IllegalStateException("cannot list topics: " + e.getCause().getMessage(), e);
    }
  }
}
