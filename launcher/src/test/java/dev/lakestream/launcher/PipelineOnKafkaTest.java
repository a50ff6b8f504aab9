package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.SpillingSerde;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.Topics;
import dev.lakestream.common.metrics.Hops;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.SyncTopology;
import dev.lakestream.sync.maintenance.Maintenance;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import dev.lakestream.testkit.TestTable;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ingest and sync apps against a real Kafka broker in the test JVM, both with {@code
 * exactly_once_v2}: Debezium-shaped records in, main read back equal to the model, invariants hold.
 */
class PipelineOnKafkaTest {

  private static final Duration CONVERGE = Duration.ofSeconds(120);
  private static EmbeddedKafka kafka;

  private TemporaryWarehouse warehouse;
  private Catalog reader;
  private final SourceTableModel model = new SourceTableModel();

  @BeforeAll
  static void startKafka() throws Exception {
    kafka = EmbeddedKafka.start();
  }

  @AfterAll
  static void stopKafka() {
    kafka.close();
  }

  @BeforeEach
  void setUp() throws Exception {
    warehouse = new TemporaryWarehouse();
    reader = warehouse.openCatalog();
  }

  @AfterEach
  void tearDown() throws Exception {
    ((AutoCloseable) reader).close();
    warehouse.close();
  }

  @Test
  void ingestAndSyncAppsKeepMainEqualToTheSource() throws Exception {
    TestTable table = new TestTable(
        "dbserver1", "inventory", "customers", TestTable.wide("x", "y").columns(), List.of("id"));
    kafka.createTopic(table.topic(), 3);
    Map<String, String> shared = shared("p1", table.topic());
    try (StreamsApp ingest = IngestApp.create(config(shared, "ingest-1"));
        StreamsApp sync = SyncApp.create(config(shared, "sync-1"));
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      ingest.start();
      sync.start();
      Eventually.until(
          Duration.ofSeconds(60),
          "both apps RUNNING",
          () -> ingest.streams().state() == KafkaStreams.State.RUNNING
              && sync.streams().state() == KafkaStreams.State.RUNNING);
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 31);
      feed.send(gen.snapshot(1000));
      for (int i = 0; i < 10; i++) {
        feed.send(gen.next(500));
        Thread.sleep(200);
      }
      TableIdentifier id = TableIdentifier.of("inventory", "customers");
      Eventually.noDifference(CONVERGE, () -> mainDiffers(id, table));
      Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
      assertThat(report.passed()).as(report.toString()).isTrue();

      String metrics = scrape(sync.metricsPort());
      assertThat(metrics)
          .contains("lakestream_sync_cycles_total", "lakestream_main_freshness_seconds");
      // Every metric the Grafana dashboard queries is one the apps export.
      String both = scrape(ingest.metricsPort()) + metrics;
      Set<String> exported = new TreeSet<>();
      Matcher names = Pattern.compile("(?m)^(lakestream_[a-z0-9_]+)[{ ]").matcher(both);
      while (names.find()) {
        exported.add(names.group(1));
      }
      assertThat(exported)
          .as("metrics the apps export")
          .containsAll(DeploymentFilesTest.dashboardMetrics());
      // Each hop of a change has been timed, in the app that makes it.
      for (Hops.Hop hop : Hops.Hop.values()) {
        assertThat(both)
            .as("hop %s timed", hop.tag())
            .containsPattern("lakestream_hop_latency_seconds_count\\{[^}]*hop=\"" + hop.tag()
                + "\"[^}]*\\} [1-9]");
      }
      Matcher m = Pattern.compile(
              "lakestream_sync_convert_task_files_total\\{task=\"([^\"]+)\"\\} ([0-9.]+)")
          .matcher(metrics);
      int tasksThatConverted = 0;
      while (m.find()) {
        if (Double.parseDouble(m.group(2)) > 0) {
          tasksThatConverted++;
        }
      }
      assertThat(tasksThatConverted)
          .as("convert tasks spread over the converter's partitions")
          .isGreaterThan(1);
    }
  }

  /**
   * Sync's producer may send records of 16 KiB only: every plan, task and result above 8 KiB is
   * spilled to a file of its table and referenced, so the cycles (dozens of files each) still fit.
   */
  @Test
  void cyclesLargerThanTheProducersRecordLimitAreSpilledAndMainKeepsUp() throws Exception {
    TestTable table = new TestTable(
        "dbserver1", "inventory", "bulky", TestTable.wide("x", "y").columns(), List.of("id"));
    kafka.createTopic(table.topic(), 3);
    Map<String, String> shared = shared("p4", table.topic());
    PipelineConfig syncConfig = config(shared, "sync-4").with("producer.max.request.size", "16384");
    try (StreamsApp ingest = IngestApp.create(config(shared, "ingest-4"));
        StreamsApp sync = SyncApp.create(syncConfig);
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      ingest.start();
      Eventually.until(
          Duration.ofSeconds(60),
          "ingest RUNNING",
          () -> ingest.streams().state() == KafkaStreams.State.RUNNING);
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 41);
      feed.send(gen.snapshot(2000));
      for (int i = 0; i < 10; i++) {
        feed.send(gen.next(400));
        Thread.sleep(300);
      }
      // Sync starts late: its first cycle takes everything ingest committed meanwhile.
      sync.start();
      TableIdentifier id = TableIdentifier.of("inventory", "bulky");
      Eventually.noDifference(CONVERGE, () -> mainDiffers(id, table));
      for (int i = 0; i < 5; i++) {
        feed.send(gen.next(400));
        Thread.sleep(300);
      }
      Eventually.noDifference(CONVERGE, () -> mainDiffers(id, table));
      Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
      assertThat(report.passed()).as(report.toString()).isTrue();
      Path spill =
          Path.of(reader.loadTable(id).location().replaceFirst("^file:", ""), SpillingSerde.FOLDER);
      try (var files = Files.list(spill)) {
        assertThat(files.count()).as("records spilled to files").isPositive();
      }
      assertThat(sync.meters().find("lakestream.app.thread.failures").counter().count())
          .as("sync threads that died")
          .isZero();
    }
  }

  @Test
  void syncSurvivesCrashesBetweenConvertAndCommitAndAfterCommitBeforeTheEvent() throws Exception {
    TestTable table = new TestTable(
        "dbserver1", "inventory", "crashy", TestTable.wide("x", "y").columns(), List.of("id"));
    kafka.createTopic(table.topic(), 3);
    Map<String, String> shared = shared("p2", table.topic());
    // The crashed threads' tasks move once their sessions expire: 3 s (the broker allows it).
    shared.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "3000");
    shared.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    // Cycles of several groups, so that a crash can leave a cycle partly converted.
    shared.put(SyncConfig.CONVERT_GROUP_MAX_FILES, "2");
    PipelineConfig syncPipeline = config(shared, "sync-crash");
    SyncConfig syncConfig = new SyncConfig(syncPipeline);
    Properties syncProps = SyncApp.streamsProperties(syncPipeline);
    Topics.ensure(syncProps, List.of(new Topics.Spec(syncConfig.realtimeCommitsTopic(), 6)));
    Topics.ensure(
        syncProps,
        List.of(
            new Topics.Spec(syncConfig.convertResultsTopic(), 6),
            new Topics.Spec(syncConfig.convertTasksTopic(), 4),
            new Topics.Spec(syncConfig.mainCommitsTopic(), 6)));
    Catalog syncCatalog =
        CatalogLoader.load(syncPipeline.catalogName(), syncPipeline.catalogProperties());
    TableIdentifier id = TableIdentifier.of("inventory", "crashy");
    SimpleMeterRegistry syncMeters = new SimpleMeterRegistry();
    Maintenance maintenance =
        new Maintenance(MaintenanceConfig.from(syncPipeline), syncCatalog, syncMeters, null);
    Topology topology = SyncTopology.build(
        syncConfig, new TableManager(syncCatalog), syncMeters, maintenance, new Health());
    // A convert group's vectors are written and its results sent within the transaction, then the
    // thread dies (every second group, twice).
    AtomicInteger groups = new AtomicInteger();
    AtomicInteger convertCrashes = new AtomicInteger();
    topology.addProcessor(
        "crash-after-convert",
        () -> new Processor<String, Object, Void, Void>() {
          @Override
          public void process(Record<String, Object> record) {
            if (groups.incrementAndGet() % 2 == 0 && convertCrashes.get() < 2) {
              convertCrashes.incrementAndGet();
              throw new IllegalStateException("simulated crash between convert and commit");
            }
          }
        },
        "convert-tasks-in");
    // The result that completes a cycle: main is committed, then the thread dies before the event
    // goes out.
    AtomicInteger commitCrashes = new AtomicInteger();
    Catalog watcher = warehouse.openCatalog();
    topology.addProcessor(
        "crash-after-main-commit",
        () -> new Processor<String, Object, Void, Void>() {
          private Long lastMain;

          @Override
          public void process(Record<String, Object> record) {
            if (!watcher.tableExists(id)) {
              return;
            }
            Table t = watcher.loadTable(id);
            long head = t.snapshot(Branches.MAIN).snapshotId();
            boolean committed = lastMain != null && head != lastMain;
            lastMain = head;
            if (committed && commitCrashes.get() < 2) {
              commitCrashes.incrementAndGet();
              throw new IllegalStateException(
                  "simulated crash after the main commit, before the event");
            }
          }
        },
        "convert-results-in");

    try (StreamsApp ingest = IngestApp.create(config(shared, "ingest-2"));
        KafkaStreams sync = new KafkaStreams(topology, syncProps);
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      sync.setUncaughtExceptionHandler(
          e -> StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD);
      ingest.start();
      sync.start();
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 32);
      feed.send(gen.snapshot(500));
      for (int i = 0; i < 12; i++) {
        feed.send(gen.next(400));
        Thread.sleep(400);
      }
      Eventually.noDifference(CONVERGE, () -> mainDiffers(id, table));
      assertThat(convertCrashes.get()).as("crashes between convert and commit").isEqualTo(2);
      assertThat(commitCrashes.get()).as("crashes after the main commit").isGreaterThanOrEqualTo(1);
      Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
      assertThat(report.passed()).as(report.toString()).isTrue();
      sync.close(Duration.ofSeconds(30));
    } finally {
      maintenance.close();
      ((AutoCloseable) syncCatalog).close();
      ((AutoCloseable) watcher).close();
    }
  }

  /**
   * Under exactly-once, a stage reads what the stage before it handed over (a batch written, a
   * realtime commit announced, a cycle's key lookups and their answers, its tasks and their
   * results) only once the transaction that wrote it commits. With {@code commit.interval.ms} at
   * ten minutes, changes still reach main within the usual wait: each hand-off commits its
   * transaction at once. Without that, the first batch would wait ten minutes for the committer
   * to see it. Sync resolves with the key index, whose cycles cross every hand-off there is.
   */
  @Test
  void everyHandOffCommitsWithoutWaitingForTheCommitInterval() throws Exception {
    TestTable table = new TestTable(
        "dbserver1", "inventory", "handoffs", TestTable.wide("x", "y").columns(), List.of("id"));
    kafka.createTopic(table.topic(), 3);
    Map<String, String> shared = shared("p4", table.topic());
    shared.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "600000");
    // A transaction may stay open until the interval or a hand-off; the broker allows 15 minutes.
    shared.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), "900000");
    shared.put(SyncConfig.RESOLVER, "index");
    TableIdentifier id = TableIdentifier.of("inventory", "handoffs");
    try (StreamsApp ingest = IngestApp.create(config(shared, "ingest-4"));
        StreamsApp sync = SyncApp.create(config(shared, "sync-4"));
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      ingest.start();
      sync.start();
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 34);
      feed.send(gen.snapshot(500));
      for (int i = 0; i < 5; i++) {
        feed.send(gen.next(200));
        Thread.sleep(300);
      }
      Eventually.noDifference(CONVERGE, () -> mainDiffers(id, table));
      Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
      assertThat(report.passed()).as(report.toString()).isTrue();
    }
  }

  @Test
  void syncRunsMaintenanceOnItsOwnThreadWhileIngestKeepsCommitting() throws Exception {
    TestTable table = new TestTable(
        "dbserver1", "inventory", "busy", TestTable.wide("x", "y").columns(), List.of("id"));
    kafka.createTopic(table.topic(), 3);
    Map<String, String> shared = shared("p3", table.topic());
    CheckedWorkload.maintainOften(shared);
    TableIdentifier id = TableIdentifier.of("inventory", "busy");
    try (StreamsApp ingest = IngestApp.create(config(shared, "ingest-3"));
        StreamsApp sync = SyncApp.create(config(shared, "sync-3"));
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      ingest.start();
      sync.start();
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 33);
      feed.send(gen.snapshot(1000));
      int maxRealtimeFiles = 0;
      for (int i = 0; i < 30; i++) {
        feed.send(gen.next(200));
        Thread.sleep(300);
        if (reader.tableExists(id)) {
          Table t = reader.loadTable(id);
          maxRealtimeFiles = Math.max(
              maxRealtimeFiles,
              BranchFiles.liveDataFiles(t, t.snapshot(Branches.REALTIME)).size());
        }
      }
      Eventually.noDifference(CONVERGE, () -> mainDiffers(id, table));
      Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
      assertThat(report.passed()).as(report.toString()).isTrue();

      // Maintenance runs on its own timer: on a loaded machine its first compaction and expiry may
      // come after main has caught up.
      Eventually.until(
          CONVERGE,
          "sync's maintenance to have compacted realtime and expired snapshots",
          () -> count(sync, "lakestream.maintenance.compactions") > 0
              && count(sync, "lakestream.maintenance.snapshots.expired") > 0);
      double compactions = count(sync, "lakestream.maintenance.compactions");
      double expired = count(sync, "lakestream.maintenance.snapshots.expired");
      double realtimeCommits = count(ingest, "lakestream.realtime.commits");
      System.out.printf(
          "maintenance on Kafka: %.0f realtime commits (%.0f retried), %.0f compactions (%.0f files in), "
              + "%.0f snapshots expired, %.0f delete files reconverted, max %d live data files on realtime%n",
          realtimeCommits,
          count(ingest, "lakestream.realtime.commit.retries"),
          compactions,
          count(sync, "lakestream.maintenance.compaction.files.in"),
          expired,
          count(sync, "lakestream.sync.reconverted.deletes"),
          maxRealtimeFiles);
      assertThat(compactions).isGreaterThan(0);
      assertThat(expired).isGreaterThan(0);
      assertThat(count(sync, "lakestream.maintenance.failures")).isZero();
      assertThat(count(ingest, "lakestream.app.thread.failures"))
          .as("ingest threads that died")
          .isZero();
      assertThat(count(sync, "lakestream.app.thread.failures"))
          .as("sync threads that died")
          .isZero();
      assertThat(realtimeCommits).as("ingest kept committing").isGreaterThan(10);
      assertThat(maxRealtimeFiles).as("live data files on realtime").isLessThan((int)
          realtimeCommits);
    }
  }

  private static double count(StreamsApp app, String name) {
    return app.meters().find(name).counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }

  private String mainDiffers(TableIdentifier id, TestTable table) {
    if (!reader.tableExists(id)) {
      return "table " + id + " does not exist yet";
    }
    Table t = reader.loadTable(id);
    return TableComparison.differences(
        model.rows(), TableRows.byKey(TableRows.read(t, Branches.MAIN), table.key()));
  }

  private Map<String, String> shared(String prefix, String topic) {
    return OnKafkaSettings.shared(kafka, warehouse, prefix, topic);
  }

  private static PipelineConfig config(Map<String, String> shared, String applicationId)
      throws Exception {
    return OnKafkaSettings.config(shared, applicationId);
  }

  private static String scrape(int port) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
