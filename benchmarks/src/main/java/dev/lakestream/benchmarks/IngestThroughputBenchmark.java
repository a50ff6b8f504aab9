package dev.lakestream.benchmarks;

import com.sun.management.OperatingSystemMXBean;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TemporaryWarehouse;
import dev.lakestream.testkit.TestTable;
import io.micrometer.core.instrument.Counter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Benchmark 2, ingest throughput: a backlog of Debezium changes (a wide 12-column table: snapshot
 * reads, inserts, updates, deletes, key updates) waits on a real broker; the ingest app (exactly
 * once, real Kafka Streams) drains it into {@code realtime}. The drain rate is the largest change
 * rate it sustains on this machine, per flush interval and stream-thread count.
 *
 * <p>{@code -Dbench.set="KEY=VALUE;..."} adds settings to the app (Kafka Streams and client
 * properties as Kafka names them, or ingest's own), to compare a setting against the defaults on
 * the same backlog and hour.
 */
public final class IngestThroughputBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx8g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.IngestThroughputBenchmark"
      + " [-Dexec.args=CHANGES]";

  private static final int PARTITIONS = 4;

  private IngestThroughputBenchmark() {}

  public static void main(String[] args) throws Exception {
    int changes = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    // Which build runs: the first jar on the classpath that holds ingest (the launcher's fat jar,
    // when installed, comes before ingest's own), so that an A/B installs what it means to compare.
    System.out.println("ingest's classes: " + codeSource(IngestApp.class));
    Report report = new Report(
        "2. Ingest throughput: draining a backlog into realtime",
        COMMAND,
        "flush interval",
        "stream threads",
        "changes",
        "realtime commits",
        "drain time (s)",
        "changes/s",
        "of the floor",
        "changes/s from the first change in",
        "CPU ms per 1,000 changes: JVM",
        "of it ingest's threads",
        "kB allocated per change by ingest's threads",
        "Kafka records per change",
        "Kafka bytes per change");
    TestTable table = TestTable.wide("bench", "customers");
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      kafka.createTopic(table.topic(), PARTITIONS);
      long started = System.nanoTime();
      try (KafkaChangeFeed feed =
          new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel())) {
        ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 7);
        int snapshot = changes / 4;
        for (int sent = 0; sent < snapshot; sent += 10_000) {
          feed.send(gen.snapshot(Math.min(10_000, snapshot - sent)));
        }
        for (int sent = snapshot; sent < changes; sent += 10_000) {
          feed.send(gen.next(10_000));
        }
      }
      Map<Integer, Long> ends = EndOffsets.of(kafka, table.topic());
      long events = ends.values().stream().mapToLong(Long::longValue).sum();
      // Tombstones carry no change, so realtime's offsets end at each partition's last change.
      Map<Integer, Long> lastChanges = lastChangeOffsets(kafka, table.topic(), ends);
      System.out.printf(
          "backlog: %,d events on %d partitions, produced in %.1f s; extra settings %s%n",
          events, PARTITIONS, (System.nanoTime() - started) / 1e9, BenchSettings.given());
      warmUp(kafka, table.topic(), lastChanges);
      // The floor: a bare consumer that only reads the backlog and decodes every record.
      Floor floor = floor(kafka, table.topic(), ends);
      double floorSeconds = floor.seconds();
      double floorRate = events / floorSeconds;
      report.row(
          "floor: read + decode only",
          1,
          String.format("%,d", events),
          "-",
          String.format("%.1f", floorSeconds),
          String.format("%,.0f", floorRate),
          "100%",
          "-",
          "-",
          "-",
          String.format("%.2f", floor.allocatedBytes() / 1024.0 / events),
          "-",
          "-");

      int run = 0;
      for (int flushMs : new int[] {500, 5_000}) {
        for (int threads : new int[] {1, 2}) {
          run++;
          try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
            PipelineConfig config =
                config(kafka, warehouse, "bench-ingest-" + run, flushMs, threads);
            Catalog catalog = warehouse.catalog();
            TableIdentifier id = TableIdentifier.of("bench", "customers");
            String prefix = "bench-ingest-" + run;
            KafkaWrites writesBefore = KafkaWrites.of(kafka, prefix);
            Predicate<String> ingestThreads = name -> name.contains(prefix)
                || name.startsWith("lakestream-realtime-commit")
                || name.startsWith("iceberg-worker-pool");
            ThreadCpu threadCpu0 = ThreadCpu.of(ingestThreads);
            ThreadCpu allCpu0 = ThreadCpu.of(name -> true);
            JvmWork jvm0 = JvmWork.now();
            long cpu0 = processCpuNanos();
            long t0 = System.nanoTime();
            try (StreamsApp app = IngestApp.create(config)) {
              long created = System.nanoTime();
              app.start();
              long lastLog = t0;
              // When ingest took in its first change: what came before is the app starting, of
              // which Kafka Streams reaching RUNNING (its group joined, its tasks assigned).
              long firstIn = -1;
              long running = -1;
              while (!drained(catalog, id, table.topic(), lastChanges)) {
                Thread.sleep(firstIn < 0 ? 20 : 200);
                if (running < 0 && app.streams().state() == KafkaStreams.State.RUNNING) {
                  running = System.nanoTime();
                }
                if (firstIn < 0 && changesIn(app) > 0) {
                  firstIn = System.nanoTime();
                  System.out.printf(
                      "  flush %d ms, %d threads: the app's start: created in %.2f s, RUNNING at %s,"
                          + " first change in at %.2f s%n",
                      flushMs,
                      threads,
                      (created - t0) / 1e9,
                      running < 0 ? "(not yet)" : String.format("%.2f s", (running - t0) / 1e9),
                      (firstIn - t0) / 1e9);
                }
                if (System.nanoTime() - lastLog > 5e9) {
                  lastLog = System.nanoTime();
                  System.out.printf(
                      "  flush %d ms, %d threads: %,d of %,d events committed, %.0f s%n",
                      flushMs,
                      threads,
                      committed(catalog, id, table.topic()),
                      events,
                      (lastLog - t0) / 1e9);
                }
              }
              long end = System.nanoTime();
              double seconds = (end - t0) / 1e9;
              double drainSeconds = (end - (firstIn < 0 ? t0 : firstIn)) / 1e9;
              double cpuMs = (processCpuNanos() - cpu0) / 1e6;
              ThreadCpu threadCpu1 = ThreadCpu.of(ingestThreads);
              double threadCpuMs = threadCpu1.nanosSince(threadCpu0) / 1e6;
              double allocatedKb = threadCpu1.bytesAllocatedSince(threadCpu0) / 1024.0;
              System.out.printf(
                  "  flush %d ms, %d threads: CPU s by thread %s; %s%n",
                  flushMs,
                  threads,
                  cpuByThread(ThreadCpu.of(name -> true)
                      .nanosSinceByGroup(allCpu0, name -> threadGroup(name, prefix))),
                  JvmWork.now().since(jvm0));
              KafkaWrites written = KafkaWrites.of(kafka, prefix).minus(writesBefore);
              System.out.printf(
                  "  flush %d ms, %d threads: Kafka writes by topic%n%s",
                  flushMs, threads, written.perChange(events));
              Table t = catalog.loadTable(id);
              // What the drain wrote to the table: the same backlog should give the same bytes,
              // whatever the code's speed.
              Map<String, String> summary = t.snapshot(Branches.REALTIME).summary();
              long fileBytes = Long.parseLong(summary.getOrDefault("total-files-size", "0"));
              System.out.printf(
                  "  flush %d ms, %d threads: realtime holds %s data files and %s delete files,"
                      + " %,d bytes (%.1f per change)%n",
                  flushMs,
                  threads,
                  summary.get("total-data-files"),
                  summary.get("total-delete-files"),
                  fileBytes,
                  (double) fileBytes / events);
              long commits = 0;
              for (var s : SnapshotUtil.ancestorsOf(
                  t.snapshot(Branches.REALTIME).snapshotId(), t::snapshot)) {
                commits++;
              }
              report.row(
                  flushMs + " ms",
                  threads,
                  String.format("%,d", events),
                  commits,
                  String.format("%.1f", seconds),
                  String.format("%,.0f", events / seconds),
                  String.format("%.0f%%", 100 * events / seconds / floorRate),
                  String.format("%,.0f", events / drainSeconds),
                  String.format("%.1f", cpuMs * 1000 / events),
                  String.format("%.1f", threadCpuMs * 1000 / events),
                  String.format("%.2f", allocatedKb / events),
                  String.format("%.2f", (double) written.records() / events),
                  String.format("%.0f", (double) written.bytes() / events));
            }
          }
        }
      }
    }
    report.note("The backlog is " + changes
        + " changes (a quarter snapshot reads, then the generator's mix of inserts,"
        + " updates, deletes, key updates and re-inserts, with tombstones) on " + PARTITIONS
        + " partitions, produced"
        + " before ingest starts. One drain of it by ingest, not measured, comes first, so that the JIT"
        + " compiler has compiled ingest's code and the decoder's (before it, the first row measured mostly the"
        + " compiler). The time runs from the app's start (about 2 s of it is Kafka Streams starting) to"
        + " the realtime commit that holds the last offset of every partition; \"from the first change in\" is the"
        + " same drain timed from the moment ingest's counter of changes taken in (lakestream.ingest.changes,"
        + " checked every 20 ms) first moved, leaving out the app's start. Broker, producer-side data and the app"
        + " share the machine; the warehouse is the local file system. The floor is a plain consumer on one thread"
        + " that reads the same backlog (read committed) and decodes every record with ingest's decoder, writing"
        + " nothing; \"of the floor\" is each run's rate as a share of it, which drifts less than absolute rates on"
        + " a shared machine. CPU is the whole JVM's (broker and app; the producer had finished) from the app's"
        + " start to the drain's end, per 1,000 changes of the backlog, and of it the app's own threads (stream"
        + " threads, their Kafka clients, the realtime committer, Iceberg's worker pool), which leaves out the broker,"
        + " the garbage collector and the JIT compiler; the bytes those threads allocated (the floor's: its"
        + " thread's, reading and decoding); Kafka records and bytes are those the run"
        + " added to the app's own topics (changelogs, files written, commits) and to Kafka's offsets and"
        + " transaction-state topics, transaction markers included, per change of the backlog. CPU,"
        + " allocation and Kafka writes measure work, not speed; allocation and Kafka writes vary far less"
        + " between runs than the rates and the CPU do.");
    report.publish();
    System.exit(0);
  }

  private static PipelineConfig config(
      EmbeddedKafka kafka, TemporaryWarehouse warehouse, String id, int flushMs, int threads)
      throws Exception {
    Map<String, String> s = new HashMap<>();
    s.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    s.put(StreamsConfig.APPLICATION_ID_CONFIG, id);
    s.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams-").toString());
    s.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, "1");
    s.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, Integer.toString(threads));
    s.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
    s.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    s.put(IngestConfig.TOPICS, "dbserver1.bench.customers");
    s.put(IngestConfig.FLUSH_INTERVAL_MS, Integer.toString(flushMs));
    s.put(IngestConfig.COMMIT_INTERVAL_MS, "100");
    s.put(PipelineConfig.METRICS_PORT, "0");
    s.put(PipelineConfig.TOPIC_PREFIX, id);
    warehouse.catalogProperties().forEach((k, v) -> s.put(PipelineConfig.CATALOG_PREFIX + k, v));
    s.putAll(BenchSettings.given());
    return new PipelineConfig(s);
  }

  /** Where a class was loaded from, and when that file was last written. */
  private static String codeSource(Class<?> type) {
    try {
      Path where =
          Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
      return where + " (written " + Files.getLastModifiedTime(where) + ")";
    } catch (Exception e) {
      return "unknown (" + e + ")";
    }
  }

  /** The changes the app has taken in so far (its counter, read between the drain's checks). */
  private static double changesIn(StreamsApp app) {
    return app.meters().find("lakestream.ingest.changes").counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  /**
   * Drains the backlog once, unmeasured, so that the measured runs find ingest's code compiled: in
   * the first drain of a JVM the JIT compiler spent 17 to 30 s of its time (on two cores, beside
   * the stream threads), and the first row measured mostly that.
   */
  private static void warmUp(EmbeddedKafka kafka, String topic, Map<Integer, Long> lastChanges)
      throws Exception {
    JvmWork jvm0 = JvmWork.now();
    long t0 = System.nanoTime();
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      PipelineConfig config = config(kafka, warehouse, "bench-ingest-warm-up", 500, 2);
      Catalog catalog = warehouse.catalog();
      TableIdentifier id = TableIdentifier.of("bench", "customers");
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        while (!drained(catalog, id, topic, lastChanges)) {
          Thread.sleep(200);
        }
      }
    }
    System.out.printf(
        "warm-up drain (500 ms, 2 threads, not measured): %.1f s; %s%n",
        (System.nanoTime() - t0) / 1e9, JvmWork.now().since(jvm0));
  }

  /** A thread's group for the CPU breakdown: the app's kinds of threads, the broker's, the rest. */
  private static String threadGroup(String name, String appPrefix) {
    // The app's Kafka clients' own threads (a producer's sender, a consumer's heartbeat) carry the
    // app's client ids after a "kafka-..." name.
    if (name.contains(appPrefix)) {
      if (name.contains("-producer")) {
        return "stream threads' producers";
      }
      if (name.contains("-consumer") || name.contains("heartbeat")) {
        return "stream threads' consumers";
      }
      return name.contains("StreamThread") ? "stream threads" : "app, other";
    }
    if (name.startsWith("lakestream-realtime-commit")) {
      return "realtime committer";
    }
    if (name.startsWith("iceberg-worker-pool")) {
      return "iceberg workers";
    }
    if (name.startsWith("data-plane-kafka")
        || name.startsWith("kafka-")
        || name.contains("Txn")
        || name.startsWith("group-coordinator")
        || name.startsWith("quorum-controller")
        || name.startsWith("ExpirationReaper")) {
      return "broker";
    }
    if (name.contains("CompilerThread")) {
      return "JIT compiler";
    }
    return "other";
  }

  private static String cpuByThread(Map<String, Long> nanos) {
    StringBuilder out = new StringBuilder();
    nanos.entrySet().stream()
        .filter(e -> e.getValue() >= 50_000_000L)
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .forEach(e -> out.append(out.length() == 0 ? "" : ", ")
            .append(e.getKey())
            .append(' ')
            .append(String.format("%.1f", e.getValue() / 1e9)));
    return out.toString();
  }

  /** The collectors' and the JIT compiler's accumulated time, as the JVM reports them. */
  private record JvmWork(long gcMs, long gcCount, long compileMs) {
    static JvmWork now() {
      long ms = 0;
      long count = 0;
      for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
        ms += Math.max(0, gc.getCollectionTime());
        count += Math.max(0, gc.getCollectionCount());
      }
      var jit = ManagementFactory.getCompilationMXBean();
      return new JvmWork(ms, count, jit == null ? 0 : jit.getTotalCompilationTime());
    }

    String since(JvmWork before) {
      return String.format(
          "GC %d collections, %.1f s; JIT %.1f s",
          gcCount - before.gcCount,
          (gcMs - before.gcMs) / 1e3,
          (compileMs - before.compileMs) / 1e3);
    }
  }

  private static long processCpuNanos() {
    return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /**
   * Seconds a plain consumer (one thread, read committed) takes to read the whole backlog and decode
   * every record with ingest's decoder: the least work per change here, nothing written.
   */
  /** The floor's time, and the bytes its thread allocated reading and decoding. */
  private record Floor(double seconds, long allocatedBytes) {}

  private static Floor floor(EmbeddedKafka kafka, String topic, Map<Integer, Long> ends) {
    Map<String, Object> props = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
        kafka.bootstrapServers(),
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
        "false",
        ConsumerConfig.ISOLATION_LEVEL_CONFIG,
        "read_committed");
    DebeziumDecoder decoder = new DebeziumDecoder();
    long decoded = 0;
    long t0 = System.nanoTime();
    long allocated0 = ThreadCpu.allocatedByThisThread();
    try (var consumer = new KafkaConsumer<byte[], byte[]>(
        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          ends.keySet().stream().map(p -> new TopicPartition(topic, p)).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp.partition()))) {
        for (var r : consumer.poll(Duration.ofMillis(500))) {
          if (r.value() != null && decoder.decode(r.key(), r.value()).isPresent()) {
            decoded++;
          }
        }
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    long allocated = ThreadCpu.allocatedByThisThread() - allocated0;
    System.out.printf(
        "floor: %,d changes read and decoded by a bare consumer in %.1f s%n", decoded, seconds);
    return new Floor(seconds, allocated);
  }

  /** Per partition, the offset of the last record that is not a tombstone. */
  private static Map<Integer, Long> lastChangeOffsets(
      EmbeddedKafka kafka, String topic, Map<Integer, Long> ends) {
    Map<String, Object> props = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
        kafka.bootstrapServers(),
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
        "false");
    Map<Integer, Long> out = new HashMap<>();
    try (var consumer = new KafkaConsumer<byte[], byte[]>(
        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      for (var e : ends.entrySet()) {
        var tp = new TopicPartition(topic, e.getKey());
        consumer.assign(List.of(tp));
        consumer.seek(tp, Math.max(0, e.getValue() - 10));
        long last = -1;
        while (consumer.position(tp) < e.getValue()) {
          for (var r : consumer.poll(Duration.ofMillis(500))) {
            if (r.value() != null) {
              last = r.offset();
            }
          }
        }
        out.put(e.getKey(), last);
      }
    }
    return out;
  }

  private static boolean drained(
      Catalog catalog, TableIdentifier id, String topic, Map<Integer, Long> ends) {
    if (!catalog.tableExists(id)) {
      return false;
    }
    SourceOffsets offsets = SourceOffsets.of(catalog.loadTable(id), Branches.REALTIME);
    for (var e : ends.entrySet()) {
      if (offsets.last(topic, e.getKey()) < e.getValue()) {
        return false;
      }
    }
    return true;
  }

  private static long committed(Catalog catalog, TableIdentifier id, String topic) {
    if (!catalog.tableExists(id)) {
      return 0;
    }
    SourceOffsets offsets = SourceOffsets.of(catalog.loadTable(id), Branches.REALTIME);
    long n = 0;
    for (int p = 0; p < PARTITIONS; p++) {
      n += offsets.last(topic, p) + 1;
    }
    return n;
  }
}
