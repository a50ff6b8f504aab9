package dev.lakestream.embedded;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * A real single-node Kafka broker (KRaft, combined broker and controller) in the test JVM, on
 * loopback ports, with the settings transactions need on one node. Its log directory is a fresh
 * folder under {@code java.io.tmpdir}. Close it to stop the broker.
 */
public final class EmbeddedKafka implements AutoCloseable {

  private final KafkaRaftServer server;
  private final String bootstrapServers;
  private final Path logDir;

  private EmbeddedKafka(KafkaRaftServer server, String bootstrapServers, Path logDir) {
    this.server = server;
    this.bootstrapServers = bootstrapServers;
    this.logDir = logDir;
  }

  public static EmbeddedKafka start() throws Exception {
    Path logDir = Files.createTempDirectory("kafka-");
    // Both sockets open at once: two ports asked for one after the other can be the same one.
    int[] ports = freePorts(2);
    int brokerPort = ports[0];
    int controllerPort = ports[1];
    Properties props = new Properties();
    props.put("process.roles", "broker,controller");
    props.put("node.id", "1");
    props.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    props.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
    props.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
    props.put("controller.listener.names", "CONTROLLER");
    props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    props.put("inter.broker.listener.name", "PLAINTEXT");
    props.put("log.dirs", logDir.toString());
    props.put("num.partitions", "1");
    props.put("auto.create.topics.enable", "false");
    props.put("offsets.topic.replication.factor", "1");
    props.put("offsets.topic.num.partitions", "1");
    props.put("transaction.state.log.replication.factor", "1");
    props.put("transaction.state.log.min.isr", "1");
    props.put("transaction.state.log.num.partitions", "1");
    props.put("share.coordinator.state.topic.replication.factor", "1");
    props.put("share.coordinator.state.topic.min.isr", "1");
    props.put("group.initial.rebalance.delay.ms", "0");
    // Kafka's floor is 6 s: a test that replaces a crashed stream thread waits out its session.
    props.put("group.min.session.timeout.ms", "1000");
    // Kafka checks for timed-out transactions every 10 s: a killed producer's open transaction
    // would hold back read-committed consumers up to 10 s past its timeout.
    props.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
    props.put("log.flush.interval.messages", Long.toString(Long.MAX_VALUE));

    new Formatter()
        .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
        .setNodeId(1)
        .setClusterId(Uuid.randomUuid().toString())
        .addDirectory(logDir.toString())
        .setMetadataLogDirectory(logDir.toString())
        .setReleaseVersion(MetadataVersion.latestProduction())
        .setSupportedFeatures(Feature.PRODUCTION_FEATURES)
        .setControllerListenerName("CONTROLLER")
        .run();

    KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(props, false), Time.SYSTEM);
    server.startup();
    EmbeddedKafka kafka = new EmbeddedKafka(server, "127.0.0.1:" + brokerPort, logDir);
    kafka.awaitReady();
    return kafka;
  }

  public String bootstrapServers() {
    return bootstrapServers;
  }

  public Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
  }

  public void createTopic(String name, int partitions)
      throws InterruptedException, ExecutionException {
    try (Admin admin = admin()) {
      admin
          .createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
          .all()
          .get();
    }
  }

  private void awaitReady() throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    Exception last = null;
    while (System.currentTimeMillis() < deadline) {
      try (Admin admin = admin()) {
        admin.describeCluster().nodes().get();
        return;
      } catch (ExecutionException e) {
        last = e;
        Thread.sleep(100);
      }
    }
    throw new IllegalStateException(
        "broker at " + bootstrapServers + " did not become ready", last);
  }

  /** {@code count} distinct free ports. */
  private static int[] freePorts(int count) throws IOException {
    ServerSocket[] sockets = new ServerSocket[count];
    try {
      int[] ports = new int[count];
      for (int i = 0; i < count; i++) {
        sockets[i] = new ServerSocket(0);
        sockets[i].setReuseAddress(true);
        ports[i] = sockets[i].getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket socket : sockets) {
        if (socket != null) {
          socket.close();
        }
      }
    }
  }

  @Override
  public void close() {
    server.shutdown();
    server.awaitShutdown();
    Folders.delete(logDir);
  }
}
