package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.common.kafka.Topics;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.ingest.buffer.BufferedChange;
import dev.lakestream.ingest.buffer.ChangeBuffer;
import dev.lakestream.ingest.changelog.ChangeLog;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.ingest.fence.SourceFence;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.KafkaHeaders;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ingest app against a real Kafka broker in the test JVM, with {@code exactly_once_v2}: change
 * records produced to a three-partition topic as Debezium would, read back from the realtime branch.
 */
class IngestOnKafkaTest {

  private static final Duration CONVERGE = Duration.ofSeconds(90);
  private static EmbeddedKafka kafka;

  private TemporaryWarehouse warehouse;
  private Catalog reader;
  private final TestTable table = TestTable.wide("inventory", "customers");
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
  void ingestAppWritesRealtimeExactlyOnceFromARealBroker() throws Exception {
    TestTable source = table;
    kafka.createTopic(source.topic(), 3);
    PipelineConfig config = config(source.topic(), "ingest-app");
    try (StreamsApp app = IngestApp.create(config);
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      app.start();
      Eventually.until(
          Duration.ofSeconds(60),
          "ingest RUNNING",
          () -> app.streams().state() == KafkaStreams.State.RUNNING);

      ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2024);
      feed.send(gen.snapshot(500));
      for (int i = 0; i < 10; i++) {
        feed.send(gen.next(500));
      }
      TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
      Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));

      feed.sendRaw(source.topic(), utf8("{\"id\":1}"), utf8("{not json"));
      List<ConsumerRecord<byte[], byte[]>> letters = feed.read(config.topicPrefix() + ".dlq", 1);
      assertThat(new String(
              letters.get(0).headers().lastHeader(DeadLetters.REASON).value(),
              StandardCharsets.UTF_8))
          .contains("malformed JSON");
      assertThat(new String(
              letters.get(0).headers().lastHeader(DeadLetters.TOPIC).value(),
              StandardCharsets.UTF_8))
          .isEqualTo(source.topic());

      List<ConsumerRecord<byte[], byte[]>> commits = feed.read(config.realtimeCommitsTopic(), 1);
      assertThat(new String(commits.get(0).key(), StandardCharsets.UTF_8)).isEqualTo(id.toString());

      String metrics = HttpClient.newHttpClient()
          .send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + app.metricsPort() + "/metrics"))
                  .build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
      assertThat(metrics)
          .contains(
              "lakestream_realtime_commits_total",
              "lakestream_ingest_changes_total",
              "lakestream_realtime_freshness_seconds");
    }
  }

  /**
   * A primary key of megabytes (a text key column; the connector's records may reach 16 MiB) lands
   * like any other: ingest's source fence keeps a digest of it, so its store's changelog records
   * stay within a Kafka record (the whole key in one failed the task's commit, at every attempt).
   */
  @Test
  void aKeyOfMegabytesLandsAndNoStreamThreadFails() throws Exception {
    TestTable source = TestTable.textKeyed("inventory", "notes");
    try (Admin admin = kafka.admin()) {
      admin
          .createTopics(List.of(new NewTopic(source.topic(), 1, (short) 1)
              .configs(Map.of("max.message.bytes", Integer.toString(8 << 20)))))
          .all()
          .get();
    }
    PipelineConfig config = config(source.topic(), "ingest-long-key");
    try (StreamsApp app = IngestApp.create(config)) {
      app.start();
      String huge = "k".repeat(2_000_000);
      long now = System.currentTimeMillis();
      List<Change> changes = List.of(
          new Change(
              'c', source, List.of("small"), null, Map.of("code", "small", "n", 1L), now, 100),
          new Change('c', source, List.of(huge), null, Map.of("code", huge, "n", 1L), now, 200),
          new Change('u', source, List.of(huge), null, Map.of("code", huge, "n", 2L), now, 300),
          new Change(
              'u', source, List.of("small"), null, Map.of("code", "small", "n", 2L), now, 400));
      Properties props = new Properties();
      props.put("bootstrap.servers", kafka.bootstrapServers());
      props.put("max.request.size", Integer.toString(8 << 20));
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
        for (Change change : changes) {
          producer
              .send(new ProducerRecord<>(
                  source.topic(), DebeziumJson.key(change, true), DebeziumJson.value(change, true)))
              .get();
          model.apply(change);
        }
      }
      TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
      Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
      assertThat(count(app, "lakestream.app.thread.failures"))
          .as("stream threads that failed")
          .isZero();
    }
  }

  /**
   * A bad record larger than the dead-letter topic takes (its source topic takes larger ones)
   * goes there without its value, the reason and origin in its headers; the stream thread does not
   * fail on it again and again, and the changes after it land.
   */
  @Test
  void aBadRecordTooLargeForTheDeadLetterTopicGoesWithoutItsValueAndTheRestLands()
      throws Exception {
    TestTable source = TestTable.plain("inventory", "letters");
    try (Admin admin = kafka.admin()) {
      admin
          .createTopics(List.of(new NewTopic(source.topic(), 1, (short) 1)
              .configs(Map.of("max.message.bytes", Integer.toString(4 << 20)))))
          .all()
          .get();
    }
    PipelineConfig config = config(source.topic(), "ingest-large-letter");
    try (StreamsApp app = IngestApp.create(config);
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      app.start();
      ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 77);
      feed.send(gen.snapshot(50));
      TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
      Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));

      byte[] key = utf8("{\"id\":1}");
      byte[] huge = utf8("{\"payload\": \"" + "x".repeat(1_500_000));
      Properties props = new Properties();
      props.put("bootstrap.servers", kafka.bootstrapServers());
      props.put("max.request.size", Integer.toString(4 << 20));
      long offset;
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
        offset =
            producer.send(new ProducerRecord<>(source.topic(), key, huge)).get().offset();
      }
      feed.send(gen.next(100));
      Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));

      List<ConsumerRecord<byte[], byte[]>> letters = feed.read(config.topicPrefix() + ".dlq", 1);
      assertThat(letters).hasSize(1);
      ConsumerRecord<byte[], byte[]> letter = letters.get(0);
      assertThat(letter.key()).isEqualTo(key);
      assertThat(letter.value()).isNull();
      assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
          .contains("malformed JSON");
      assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC)).isEqualTo(source.topic());
      assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.OFFSET))
          .isEqualTo(Long.toString(offset));
      assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.OMITTED))
          .isEqualTo("value " + huge.length + " bytes");
      assertThat(app.meters().find("lakestream.app.thread.failures").counter().count())
          .as("stream threads that failed")
          .isZero();
    }
  }

  @Test
  void crashBetweenIcebergCommitAndKafkaCommitDuplicatesAndLosesNothing() throws Exception {
    TestTable source =
        new TestTable(table.serverName(), table.schema(), "crashy", table.columns(), table.key());
    kafka.createTopic(source.topic(), 3);
    // The crashed threads' tasks move once their sessions expire: 3 s (the broker allows it).
    PipelineConfig pipeline = config(source.topic(), "ingest-crash")
        .with(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "3000")
        .with(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    IngestConfig config = new IngestConfig(pipeline);
    Properties props = IngestApp.streamsProperties(pipeline);
    Topics.ensure(
        props,
        List.of(
            new Topics.Spec(config.filesWrittenTopic(), 2),
            new Topics.Spec(config.realtimeCommitsTopic(), 1),
            new Topics.Spec(config.deadLetterTopic(), 1)));
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Catalog writer = CatalogLoader.load(pipeline.catalogName(), pipeline.catalogProperties());
    Topology topology = IngestTopology.build(config, new TableManager(writer), meters);
    // After the Iceberg commit of every third snapshot, before the Kafka transaction commits,
    // the stream thread dies.
    AtomicInteger announced = new AtomicInteger();
    AtomicInteger crashes = new AtomicInteger();
    topology.addProcessor(
        "crash-after-iceberg-commit",
        () -> new Processor<String, Object, Void, Void>() {
          @Override
          public void process(Record<String, Object> record) {
            if (announced.incrementAndGet() % 3 == 0 && crashes.get() < 3) {
              crashes.incrementAndGet();
              throw new IllegalStateException("simulated crash after the Iceberg commit");
            }
          }
        },
        "realtime-committer");
    try (KafkaStreams streams = new KafkaStreams(topology, props);
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      streams.setUncaughtExceptionHandler(
          e -> StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD);
      streams.start();
      ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 77);
      // Ten batches of changes, and more until the three crashes were injected: how many realtime
      // commits the changes make depends on how a loaded machine batches them.
      long deadline = System.currentTimeMillis() + CONVERGE.toMillis();
      for (int sent = 0;
          sent < 10 || (crashes.get() < 3 && System.currentTimeMillis() < deadline);
          sent++) {
        feed.send(gen.next(500));
        Thread.sleep(300);
      }
      TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
      Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
      assertThat(crashes.get()).as("crashes injected").isEqualTo(3);
      assertThat(meters.counter("lakestream.realtime.replays.skipped").count())
          .as("batches found already committed after a crash")
          .isGreaterThanOrEqualTo(crashes.get());
      streams.close(Duration.ofSeconds(30));
    } finally {
      ((AutoCloseable) writer).close();
    }
  }

  @Test
  void consumerOffsetsResetToTheStartReapplyNothing() throws Exception {
    TestTable source =
        new TestTable(table.serverName(), table.schema(), "rewound", table.columns(), table.key());
    kafka.createTopic(source.topic(), 3);
    PipelineConfig config = config(source.topic(), "ingest-reset");
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2025);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      long oldChanges = 0;
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        List<Change> sent = new ArrayList<>(gen.snapshot(300));
        for (int i = 0; i < 4; i++) {
          sent.addAll(gen.next(300));
        }
        feed.send(sent);
        oldChanges = sent.stream().filter(c -> !c.isTombstone()).count();
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
      }
      // What kafka-streams-application-reset does to the input topics: the group starts over.
      try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
        Map<TopicPartition, OffsetAndMetadata> start = new HashMap<>();
        for (int p = 0; p < 3; p++) {
          start.put(new TopicPartition(source.topic(), p), new OffsetAndMetadata(0));
        }
        admin.alterConsumerGroupOffsets("ingest-reset", start).all().get();
      }
      int snapshotsBefore =
          TableRows.snapshots(reader.loadTable(id), Branches.REALTIME).size();
      PipelineConfig restarted = config.with(
          StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams-").toString());
      try (StreamsApp app = IngestApp.create(restarted)) {
        app.start();
        feed.send(gen.next(300));
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        long expected = oldChanges;
        Eventually.until(
            Duration.ofSeconds(30),
            "every old change seen again and skipped",
            () -> count(app, "lakestream.ingest.already.committed") >= expected);
        assertThat(count(app, "lakestream.ingest.already.committed")).isEqualTo(expected);
        assertThat(app.meters().find("lakestream.app.thread.failures").counter().count())
            .as("stream threads that died")
            .isZero();
      }
      assertThat(
              TableRows.snapshots(reader.loadTable(id), Branches.REALTIME).size() - snapshotsBefore)
          .as("realtime snapshots for the 300 new changes only")
          .isLessThanOrEqualTo(10);
    }
  }

  @Test
  void offsetsResetIntoBatchesWaitingForTheirCommitAreAppliedAgainAsUpserts() throws Exception {
    TestTable source = new TestTable(
        table.serverName(), table.schema(), "overlapping", table.columns(), table.key());
    kafka.createTopic(source.topic(), 2);
    // No fence and a long commit interval: the replayed changes reach batches that overlap the
    // ones still waiting for their commit.
    PipelineConfig config = config(source.topic(), "ingest-overlap")
        .with("ingest.source.fence.enabled", "false")
        .with(IngestConfig.COMMIT_INTERVAL_MS, "600000");
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2026);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        List<Change> sent = new ArrayList<>(gen.snapshot(300));
        sent.addAll(gen.next(600));
        feed.send(sent);
        Eventually.until(
            CONVERGE,
            "batches flushed and waiting for their commit",
            () -> count(app, "lakestream.ingest.changes") >= sent.size()
                && count(app, "lakestream.ingest.flushes") >= 2);
        Thread.sleep(1_000);
        var committed = SourceOffsets.of(reader.loadTable(id), Branches.REALTIME);
        assertThat(committed.last(source.topic(), 0))
            .as("nothing committed yet")
            .isNegative();
        assertThat(committed.last(source.topic(), 1))
            .as("nothing committed yet")
            .isNegative();
      }
      try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
        Map<TopicPartition, OffsetAndMetadata> start = new HashMap<>();
        for (int p = 0; p < 2; p++) {
          // Into the first batch of each partition, which waits for its commit.
          start.put(new TopicPartition(source.topic(), p), new OffsetAndMetadata(5));
        }
        admin.alterConsumerGroupOffsets("ingest-overlap", start).all().get();
      }
      // The first commit comes 5 s after the start, so the replayed changes are read before it and
      // batched over the waiting ones (read after it, they would be skipped as committed).
      try (StreamsApp app =
          IngestApp.create(config.with(IngestConfig.COMMIT_INTERVAL_MS, "5000"))) {
        app.start();
        feed.send(gen.next(300));
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        assertThat(count(app, "lakestream.realtime.batches.overlapping"))
            .as("batches that overlapped committed offsets")
            .isPositive();
        assertThat(count(app, "lakestream.app.thread.failures"))
            .as("stream threads that died")
            .isZero();
      }
    }
  }

  @Test
  void aFlushSlowerThanKafkaStreamsDefaultTransactionTimeoutCommits() throws Exception {
    TestTable source =
        new TestTable(table.serverName(), table.schema(), "slow", table.columns(), table.key());
    kafka.createTopic(source.topic(), 1);
    // Each Parquet file takes 7 s to close: a flush (a data and a delete file) takes 14 s, longer
    // than the 10 s Kafka Streams gives a transaction by default.
    PipelineConfig config = config(source.topic(), "ingest-slow")
        .with(PipelineConfig.CATALOG_PREFIX + "io-impl", SlowFileIO.class.getName())
        .with(PipelineConfig.CATALOG_PREFIX + SlowFileIO.CLOSE_MS, "7000")
        .with(IngestConfig.FLUSH_INTERVAL_MS, "2000");
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2027);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model);
        StreamsApp app = IngestApp.create(config)) {
      app.start();
      feed.send(gen.snapshot(200));
      feed.send(gen.next(200));
      Eventually.noDifference(Duration.ofSeconds(240), () -> realtimeDiffers(id, source));
      assertThat(count(app, "lakestream.app.thread.failures"))
          .as("stream threads that died")
          .isZero();
    }
  }

  @Test
  void theSourceFenceWritesItsPositionOncePerCommitNotOncePerChange() throws Exception {
    TestTable source =
        new TestTable(table.serverName(), table.schema(), "fenced", table.columns(), table.key());
    kafka.createTopic(source.topic(), 1);
    // Commits 5 s apart: however slowly the machine processes the backlog, far fewer commits
    // happen than there are changes.
    PipelineConfig config = config(source.topic(), "ingest-fence-writes")
        .with(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "5000");
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2028);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      List<Change> streamed = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        streamed.addAll(gen.next(500));
      }
      feed.send(gen.snapshot(100));
      feed.send(streamed);
      long changes = streamed.stream().filter(c -> !c.isTombstone()).count();
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        assertThat(count(app, "lakestream.ingest.fenced")).as("changes fenced").isZero();
      }
      // Every streamed change moved the fence's position; the store's changelog holds the
      // position as of each commit, not each change.
      int writes = feed.readAvailable("ingest-fence-writes-" + SourceFence.STORE + "-changelog")
          .size();
      assertThat(writes)
          .as("fence changelog records for %d changes", changes)
          .isPositive()
          .isLessThan((int) (changes / 10));
    }
  }

  /**
   * The change buffer keeps no changelog: a task that starts again, here on another machine (a new
   * state directory), reads its open batches again from the source topic. What the fence dropped
   * and what was dead-lettered the first time stays out, so no row moves back and no dead letter is
   * sent twice.
   */
  @Test
  void openBatchesAreReadAgainFromTheSourceTopicOnAnotherMachine() throws Exception {
    fillOpenBatchesThenStartAgain("ingest-reread", false);
  }

  /**
   * The application's offsets reset to the start while ingest is stopped: the open batches are read
   * again to their own end, not to the reset offset, and the records consumed again after it change
   * nothing (the fence drops the flushed ones, the open batches already hold theirs).
   */
  @Test
  void openBatchesSurviveAnOffsetResetWhileIngestIsStopped() throws Exception {
    fillOpenBatchesThenStartAgain("ingest-reread-reset", true);
  }

  private void fillOpenBatchesThenStartAgain(String app, boolean resetOffsets) throws Exception {
    TestTable source = new TestTable(
        table.serverName(), table.schema(), app.replace('-', '_'), table.columns(), table.key());
    kafka.createTopic(source.topic(), 2);
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    // No batch is flushed while the first instance runs.
    PipelineConfig first = config(source.topic(), app)
        .with(IngestConfig.FLUSH_INTERVAL_MS, "3600000")
        .with(IngestConfig.FLUSH_MAX_ROWS, "1000000");
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2031);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      feed.send(gen.snapshot(300));
      List<Change> changes = gen.next(900);
      feed.send(changes.subList(0, 600));
      // A connector restart publishes changes 200..399 again: the fence drops them; applied again
      // they would move rows that changed in 400..599 back.
      for (Change c : changes.subList(200, 400)) {
        feed.sendRaw(source.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      }
      feed.send(changes.subList(600, 750));
      // Dead-lettered, alone between added records: read again, it is left out by itself.
      feed.sendRaw(source.topic(), utf8("{\"id\":1}"), utf8("{not json"));
      feed.send(changes.subList(750, 900));
      // Tombstones are among the generator's changes.
      long records = 300 + 900 + 200 + 1;
      try (StreamsApp ingest = IngestApp.create(first)) {
        ingest.start();
        Eventually.until(
            Duration.ofSeconds(120),
            "the first instance to read all " + records + " records",
            () -> count(ingest, "lakestream.ingest.changes") >= records);
        assertThat(count(ingest, "lakestream.ingest.fenced"))
            .as("changes the fence dropped")
            .isPositive();
      }
      assertThat(realtimeRowCount(id)).as("rows on realtime before the restart").isZero();
      if (resetOffsets) {
        try (Admin admin = kafka.admin()) {
          Map<TopicPartition, OffsetAndMetadata> start = new HashMap<>();
          for (int p = 0; p < 2; p++) {
            start.put(new TopicPartition(source.topic(), p), new OffsetAndMetadata(0));
          }
          admin.alterConsumerGroupOffsets(app, start).all().get();
        }
      }

      PipelineConfig second = elsewhere(first);
      try (StreamsApp ingest = IngestApp.create(second)) {
        ingest.start();
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        assertThat(count(ingest, "lakestream.ingest.changes.read.again"))
            .as("records read again from the source topic (tombstones included)")
            .isGreaterThanOrEqualTo(300 + 900);
        if (resetOffsets) {
          Eventually.until(
              Duration.ofSeconds(60),
              "the second instance to consume all " + records + " records again",
              () -> count(ingest, "lakestream.ingest.changes") >= records);
          // What was consumed again after the reset is flushed too: realtime still equals the
          // model.
          Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        } else {
          assertThat(count(ingest, "lakestream.ingest.changes"))
              .as("changes read as new")
              .isZero();
        }
      }
      List<ConsumerRecord<byte[], byte[]>> letters =
          feed.readAvailable(first.topicPrefix() + ".dlq");
      if (resetOffsets) {
        // Consumed again after its batch was flushed, the bad record is refused again: a reset
        // processes records again, as it does in any Kafka Streams application.
        assertThat(letters).as("dead letters").hasSizeBetween(1, 2);
      } else {
        assertThat(letters).as("dead letters").hasSize(1);
      }
    }
  }

  /**
   * Snapshot rows in a flushed batch, their updates in an open one, and the offsets reset to the
   * start while ingest is stopped: consumed again, the snapshot rows (which the fence never drops)
   * must not replace the open batch's newer changes. Here the flushed batch is on realtime before
   * the restart, so the table's committed offsets skip its records too; a flushed batch still
   * waiting for its commit (which only the open batch's end then covers) is not reached.
   */
  @Test
  void anOffsetResetBelowAnOpenBatchDoesNotMoveItsRowsBack() throws Exception {
    TestTable source = TestTable.plain("inventory", "reset_below");
    kafka.createTopic(source.topic(), 1);
    String app = "ingest-reset-below";
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    // The snapshot's 300 keys fill a batch, which is flushed; the updates after it stay open.
    PipelineConfig first = config(source.topic(), app)
        .with(IngestConfig.FLUSH_INTERVAL_MS, "3600000")
        .with(IngestConfig.FLUSH_MAX_ROWS, "300");
    ChangeStreamGenerator gen =
        new ChangeStreamGenerator(source, 2037, new ChangeStreamGenerator.Mix(0, 1, 0, 0, 0, 0));
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      feed.send(gen.snapshot(300));
      List<Change> updates = gen.next(200);
      feed.send(updates);
      try (StreamsApp ingest = IngestApp.create(first)) {
        ingest.start();
        Eventually.until(
            Duration.ofSeconds(120),
            "the first instance to read all 500 records and flush the snapshot's batch",
            () -> count(ingest, "lakestream.ingest.changes") >= 500 && realtimeRowCount(id) == 300);
      }
      assertThat(realtimeDiffers(id, source))
          .as("realtime holds the open batch's updates")
          .isNotNull();
      try (Admin admin = kafka.admin()) {
        admin
            .alterConsumerGroupOffsets(
                app, Map.of(new TopicPartition(source.topic(), 0), new OffsetAndMetadata(0)))
            .all()
            .get();
      }
      PipelineConfig second = elsewhere(first);
      try (StreamsApp ingest = IngestApp.create(second)) {
        ingest.start();
        Eventually.until(
            Duration.ofSeconds(120),
            "the second instance to consume all 500 records again",
            () -> count(ingest, "lakestream.ingest.changes") >= 500);
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
      }
    }
  }

  /**
   * The application's offsets moved forward while ingest is stopped with a batch open, skipping
   * records: those are never applied, not when the batch is read again after the next restart
   * either (read again, they would pass the fence unchecked).
   */
  @Test
  void recordsAForwardOffsetResetSkipsAreNotReadWithTheOpenBatch() throws Exception {
    TestTable source = TestTable.plain("inventory", "reset_forward");
    kafka.createTopic(source.topic(), 1);
    String app = "ingest-reset-forward";
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    PipelineConfig first = config(source.topic(), app)
        .with(IngestConfig.FLUSH_INTERVAL_MS, "3600000")
        .with(IngestConfig.FLUSH_MAX_ROWS, "1000000");
    ChangeStreamGenerator gen =
        new ChangeStreamGenerator(source, 2041, new ChangeStreamGenerator.Mix(0, 1, 0, 0, 0, 0));
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      feed.send(gen.snapshot(300));
      feed.send(gen.next(200));
      try (StreamsApp ingest = IngestApp.create(first)) {
        ingest.start();
        Eventually.until(
            Duration.ofSeconds(120),
            "the first instance to read all 500 records",
            () -> count(ingest, "lakestream.ingest.changes") >= 500);
      }
      // Offsets 500..549: updates the operator skips (past the model); 550..649 are applied.
      for (Change c : gen.next(50)) {
        feed.sendRaw(source.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      }
      feed.send(gen.next(100));
      try (Admin admin = kafka.admin()) {
        admin
            .alterConsumerGroupOffsets(
                app, Map.of(new TopicPartition(source.topic(), 0), new OffsetAndMetadata(550)))
            .all()
            .get();
      }
      PipelineConfig second = elsewhere(first).with(IngestConfig.FLUSH_INTERVAL_MS, "3600000");
      try (StreamsApp ingest = IngestApp.create(second)) {
        ingest.start();
        Eventually.until(
            Duration.ofSeconds(120),
            "the second instance to consume the 100 records after the reset",
            () -> count(ingest, "lakestream.ingest.changes") >= 100);
      }
      assertThat(realtimeRowCount(id))
          .as("rows on realtime before the last restart")
          .isZero();
      try (StreamsApp ingest = IngestApp.create(elsewhere(first))) {
        ingest.start();
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
      }
    }
  }

  /**
   * An open batch that takes far longer to read again than {@code max.poll.interval.ms} (a flush
   * held back for long, then a restart): it is read in steps between the task's polls, so the
   * instance stays in its group instead of being removed, rebalanced and made to read it again,
   * forever. Changes consumed while it is read are read after it, in order, and decided then (a
   * TRUNCATE among them, and replays the fence drops).
   */
  @Test
  void aBatchLongerToReadAgainThanThePollIntervalIsReadBetweenPolls() throws Exception {
    TestTable source = TestTable.plain("inventory", "long_batch");
    kafka.createTopic(source.topic(), 1);
    String app = "ingest-long-batch";
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    PipelineConfig first = config(source.topic(), app)
        .with(IngestConfig.FLUSH_INTERVAL_MS, "3600000")
        .with(IngestConfig.FLUSH_MAX_ROWS, "1000000");
    ChangeStreamGenerator gen =
        new ChangeStreamGenerator(source, 2039, new ChangeStreamGenerator.Mix(0, 1, 0, 0, 0, 0));
    int updates = 250_000;
    // Not flushed when the first instance stops.
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      feed.send(gen.snapshot(1_000));
      feed.send(gen.next(updates));
      long records = 1_000 + updates;
      try (StreamsApp ingest = IngestApp.create(first)) {
        ingest.start();
        Eventually.until(
            Duration.ofSeconds(300),
            "the first instance to read all " + records + " records",
            () -> count(ingest, "lakestream.ingest.changes") >= records);
      }
      assertThat(realtimeRowCount(id)).as("rows on realtime before the restart").isZero();
      // Reading the batch again alone (one record of it at a time) takes longer than this.
      PipelineConfig second =
          elsewhere(first).with(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, "2500");
      try (StreamsApp ingest = IngestApp.create(second)) {
        ingest.start();
        // Consumed while the batch is read again: read after it, and decided then. A TRUNCATE
        // among them ends the batch being read (the next starts after it), and a connector replay
        // of changes from before it is dropped by the fence, as it would be when consumed.
        List<Change> meanwhile = new ArrayList<>(gen.next(1_500));
        meanwhile.add(gen.truncate());
        meanwhile.addAll(gen.copy(500, 1));
        feed.send(meanwhile);
        for (Change c : meanwhile.subList(500, 1_500)) {
          feed.sendRaw(source.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
        }
        Eventually.noDifference(Duration.ofSeconds(300), () -> realtimeDiffers(id, source));
        // The replays change nothing on the table, so it can equal the source before the last
        // of them is consumed.
        Eventually.until(
            Duration.ofSeconds(120),
            "the fence to drop the 1,000 replayed changes",
            () -> count(ingest, "lakestream.ingest.fenced") >= 1_000);
        assertThat(count(ingest, "lakestream.ingest.fenced"))
            .as("changes the fence dropped")
            .isEqualTo(1_000);
        // Read once: a read started over (the instance removed from its group, its task started
        // again) would count the batch twice.
        assertThat(count(ingest, "lakestream.ingest.changes.read.again"))
            .as("records read from the source topic (the batch, then those consumed meanwhile)")
            .isBetween((double) records, (double) records + meanwhile.size() + 1_000);
        assertThat(count(ingest, "lakestream.ingest.changes.deferred"))
            .as("records consumed while the batch was read, read after it")
            .isPositive();
        assertThat(count(ingest, "lakestream.app.thread.failures"))
            .as("stream threads that died")
            .isZero();
      }
    }
  }

  /**
   * An upgrade from a version whose change buffer had a changelog: the batch that version left open
   * is restored from that changelog (its records are behind the committed offsets, so they are not
   * read again), flushed, and then removed from it.
   */
  @Test
  void aBatchAnEarlierVersionLeftOpenInItsChangelogIsFlushedAfterTheUpgrade() throws Exception {
    upgradeWithABatchLeftOpen("ingest-upgrade", false);
  }

  /**
   * The batch an earlier version left open takes new changes after the upgrade, and ingest stops
   * before it is flushed: the earlier version's entries are still in its changelog (removed only
   * with the flush), the new ones are read again from the source topic.
   */
  @Test
  void aBatchLeftOpenByAnEarlierVersionAndNewChangesSurviveARestartBeforeItsFlush()
      throws Exception {
    upgradeWithABatchLeftOpen("ingest-upgrade-restart", true);
  }

  private void upgradeWithABatchLeftOpen(String app, boolean moreThenRestart) throws Exception {
    TestTable source = TestTable.plain("inventory", app.replace('-', '_'));
    kafka.createTopic(source.topic(), 1);
    String legacyChangelog = app + "-" + ChangeBuffer.LEGACY_STORE + "-changelog";
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2033);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      feed.send(gen.snapshot(200));
      feed.send(gen.next(300));
      // What the earlier version's buffer held: the latest change of every key, by store key.
      DebeziumDecoder decoder = new DebeziumDecoder();
      Map<String, byte[]> entries = new LinkedHashMap<>();
      long end = 0;
      for (ConsumerRecord<byte[], byte[]> r : feed.readAvailable(source.topic())) {
        end = r.offset() + 1;
        var event = decoder.decode(r.key(), r.value());
        if (event.isPresent()) {
          BufferedChange change =
              new BufferedChange(r.offset(), event.get().source().tsMs(), r.key(), r.value());
          String storeKey =
              source.topic() + "\u0000" + r.partition() + "\u0000" + event.get().keyJson();
          entries.remove(storeKey);
          entries.put(storeKey, BufferedChange.serde().serializer().serialize(null, change));
        }
      }
      try (Admin admin = kafka.admin()) {
        admin
            .createTopics(List.of(new NewTopic(legacyChangelog, 1, (short) 1)
                .configs(Map.of("cleanup.policy", "compact"))))
            .all()
            .get();
        Properties props = new Properties();
        props.put("bootstrap.servers", kafka.bootstrapServers());
        try (KafkaProducer<String, byte[]> producer =
            new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
          for (var e : entries.entrySet()) {
            producer
                .send(new ProducerRecord<>(legacyChangelog, 0, e.getKey(), e.getValue()))
                .get();
          }
        }
        admin
            .alterConsumerGroupOffsets(
                app, Map.of(new TopicPartition(source.topic(), 0), new OffsetAndMetadata(end)))
            .all()
            .get();
      }

      if (moreThenRestart) {
        PipelineConfig unflushed = config(source.topic(), app)
            .with(IngestConfig.FLUSH_INTERVAL_MS, "3600000")
            .with(IngestConfig.FLUSH_MAX_ROWS, "1000000");
        List<Change> more = gen.next(300);
        feed.send(more);
        try (StreamsApp ingest = IngestApp.create(unflushed)) {
          ingest.start();
          Eventually.until(
              Duration.ofSeconds(120),
              "the upgraded instance to read the 300 new records",
              () -> count(ingest, "lakestream.ingest.changes") >= more.size());
        }
        assertThat(realtimeRowCount(id))
            .as("rows on realtime before the restart")
            .isZero();
      }
      try (StreamsApp ingest = IngestApp.create(elsewhere(config(source.topic(), app)))) {
        ingest.start();
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        assertThat(count(ingest, "lakestream.ingest.changes"))
            .as("records read from the source topic")
            .isZero();
        Eventually.until(
            Duration.ofSeconds(60),
            "a tombstone in the old changelog for each of its " + entries.size() + " entries",
            () -> feed.readAvailable(legacyChangelog).stream()
                    .filter(r -> r.value() == null)
                    .count()
                == entries.size());
      }
    }
  }

  /**
   * A topic deleted while its partition had an open batch: the task, which reads that partition
   * number of every matching topic, starts again, reads the other topics' batches and forgets that
   * one (its records are gone), instead of failing its start over and over.
   */
  /**
   * The source topic deleted and created again while ingest is stopped (the connector started over,
   * or a move to another cluster): the new topic's offsets start at 0, below those the table holds
   * for the old one. Every change of the new topic lands, unchanged TOAST values among them (their
   * flushes look rows up on realtime, and wait for the partition's earlier flushes only when those
   * were of the same topic), and the table's change log holds every change of both topics once.
   * Before, the changes up to the old offsets were skipped as committed.
   */
  @Test
  void aSourceTopicDeletedAndCreatedAgainIsReadWhollyNotSkippedAsCommitted() throws Exception {
    TestTable source =
        new TestTable(table.serverName(), table.schema(), "reborn", table.columns(), table.key());
    kafka.createTopic(source.topic(), 2);
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    PipelineConfig config = config(
        source.topic(), "ingest-reborn", Map.of(IngestConfig.CHANGELOG_TABLES, id.toString()));
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2040).keepingValues(0.6);
    List<Change> sent = new ArrayList<>();
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        sent.addAll(gen.snapshot(300));
        for (int i = 0; i < 3; i++) {
          sent.addAll(gen.next(300));
        }
        feed.send(sent);
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
      }
      String oldId;
      try (Admin admin = kafka.admin()) {
        oldId = topicId(admin, source.topic());
      }
      deleteTopic(source.topic());
      kafka.createTopic(source.topic(), 2);
      long before =
          SourceOffsets.of(reader.loadTable(id), Branches.REALTIME).asMap().values().stream()
              .mapToLong(Long::longValue)
              .min()
              .orElseThrow();
      // The same application id and state directory: the stores of the first run are there.
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        List<Change> updates = gen.updates(200, false);
        for (Change change : updates) {
          feed.sendRaw(
              source.topic(),
              DebeziumJson.key(change, true),
              DebeziumJson.value(change, true, Set.of("doc")));
          model.apply(change);
        }
        List<Change> more = gen.next(300);
        feed.send(more);
        sent.addAll(updates);
        sent.addAll(more);
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        assertThat(count(app, "lakestream.ingest.already.committed"))
            .as("changes of the new topic skipped as committed")
            .isZero();
        assertThat(count(app, "lakestream.ingest.source.topic.recreated")).isPositive();
        assertThat(count(app, "lakestream.ingest.unavailable.values.filled"))
            .as("unchanged TOAST values filled")
            .isPositive();
        assertThat(count(app, "lakestream.app.thread.failures"))
            .as("stream threads that died")
            .isZero();
      }
      SourceOffsets after = SourceOffsets.of(reader.loadTable(id), Branches.REALTIME);
      try (Admin admin = kafka.admin()) {
        String newId = topicId(admin, source.topic());
        assertThat(newId).isNotEqualTo(oldId);
        assertThat(after.topicId(source.topic())).isEqualTo(newId);
      }
      long logged = TableRows.read(reader.loadTable(ChangeLog.of(id)), SnapshotRef.MAIN_BRANCH)
          .size();
      assertThat(logged)
          .as("change-log rows: every change of both topics once")
          .isEqualTo(sent.stream().filter(c -> !c.isTombstone()).count());
      assertThat(before)
          .as("the old topic's offsets were above the new topic's first ones")
          .isGreaterThan(300);
    }
  }

  /**
   * A lookup of previous rows (unchanged TOAST values) longer than a flush round: it goes on where
   * it stopped at the next attempt, and what the task consumes from the partition meanwhile waits in
   * the source topic and goes to the next batch. With rounds of 0 ms, each attempt reads one file of
   * the many realtime holds, and each file takes 200 ms to open, as on a slow store; the stream
   * thread dies once in the middle of a lookup, and its replacement reads the batch and what was
   * held back again. Before, the lookup ran whole in one attempt, in the task's transaction: on a table large
   * enough, longer than the transaction's timeout at every attempt (a wedge). Every change lands
   * once, with the real values, and the change log holds each once.
   */
  @Test
  void aLookupOfPreviousRowsLongerThanARoundGoesOnOverRoundsAndLosesNothing() throws Exception {
    TestTable source = new TestTable(
        table.serverName(), table.schema(), "looked_up", table.columns(), table.key());
    kafka.createTopic(source.topic(), 1);
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    PipelineConfig config = config(
            source.topic(),
            "ingest-looked-up",
            Map.of(
                IngestConfig.FLUSH_ROUND_BUDGET_MS,
                "0",
                IngestConfig.CHANGELOG_TABLES,
                id.toString()))
        .with(PipelineConfig.CATALOG_PREFIX + "io-impl", SlowFileIO.class.getName())
        .with(PipelineConfig.CATALOG_PREFIX + SlowFileIO.OPEN_MS, "200");
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2050).keepingValues(0.8);
    List<Change> sent = new ArrayList<>();
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        sent.addAll(gen.snapshot(400));
        feed.send(sent);
        for (int i = 0; i < 6; i++) { // a file on realtime each
          Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
          List<Change> changes = gen.next(40);
          feed.send(changes);
          sent.addAll(changes);
        }
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        long files = Long.parseLong(
            reader.loadTable(id).snapshot(Branches.REALTIME).summary().get("total-data-files"));
        assertThat(files).as("data files on realtime").isGreaterThan(5);

        sent.addAll(holdBack(app, feed, gen));
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        assertThat(count(app, "lakestream.ingest.unavailable.values.filled"))
            .as("unchanged TOAST values filled")
            .isPositive();

        // The stream thread dies in the middle of a lookup, with changes held back; its
        // replacement reads the open batch and what was held back again.
        long lookups = lookupsEnded(app);
        double readAgain = count(app, "lakestream.ingest.changes.read.again");
        double deferred = count(app, "lakestream.ingest.changes.deferred");
        sent.addAll(holdBack(app, feed, gen));
        SlowFileIO.FAIL_NEXT_OPEN.set(true);
        Eventually.until(
            CONVERGE,
            "the stream thread to die opening a file",
            () -> count(app, "lakestream.app.thread.failures") > 0);
        assertThat(lookupsEnded(app)).as("lookups ended before it died").isEqualTo(lookups);
        double heldBack = count(app, "lakestream.ingest.changes.deferred") - deferred;
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        assertThat(count(app, "lakestream.ingest.changes.read.again") - readAgain)
            .as("the open batch's updates and the %s changes held back, read again", heldBack)
            .isGreaterThan(heldBack);
        assertThat(count(app, "lakestream.ingest.dead.letters"))
            .as("dead letters")
            .isZero();
        assertThat(count(app, "lakestream.app.thread.failures"))
            .as("stream threads that died")
            .isEqualTo(1);
      } finally {
        SlowFileIO.FAIL_NEXT_OPEN.set(false);
      }
    }
    long logged = TableRows.read(reader.loadTable(ChangeLog.of(id)), SnapshotRef.MAIN_BRANCH)
        .size();
    assertThat(logged)
        .as("change-log rows: every change once")
        .isEqualTo(sent.stream().filter(c -> !c.isTombstone()).count());
  }

  /**
   * Updates of 60 rows on realtime that leave a value unchanged, as Debezium sends them, and once
   * their flush's lookup goes on over attempts, 200 changes, which wait behind it: the changes sent.
   */
  private List<Change> holdBack(StreamsApp app, KafkaChangeFeed feed, ChangeStreamGenerator gen)
      throws Exception {
    double resumed = count(app, "lakestream.ingest.previous.row.lookup.resumed");
    double deferred = count(app, "lakestream.ingest.changes.deferred");
    List<Change> sent = new ArrayList<>(gen.updates(60, false));
    feed.sendToasted(sent, Set.of("doc"));
    Eventually.until(
        CONVERGE,
        "a lookup to go on over attempts",
        () -> count(app, "lakestream.ingest.previous.row.lookup.resumed") > resumed);
    List<Change> more = gen.next(200);
    feed.send(more);
    sent.addAll(more);
    Eventually.until(
        CONVERGE,
        "changes held back behind the lookup",
        () -> count(app, "lakestream.ingest.changes.deferred") > deferred);
    return sent;
  }

  /** The lookups of previous rows that ended (each records its time once, at its end). */
  private static long lookupsEnded(StreamsApp app) {
    return app.meters().find("lakestream.ingest.previous.row.lookup.duration").timers().stream()
        .mapToLong(t -> t.count())
        .sum();
  }

  /**
   * Ingest stopped with a batch open, the source topic deleted and created again, and the new topic
   * already longer than where the open batch ended (the connector published anew before ingest
   * started): the open batch was of the old topic and is forgotten, not read from the new one, and
   * every record of the new topic is applied. Before, the new topic's records up to the batch's end
   * were taken for the batch's.
   */
  @Test
  void anOpenBatchOfATopicCreatedAgainIsNotReadFromTheNewTopic() throws Exception {
    TestTable source =
        new TestTable(table.serverName(), table.schema(), "reopened", table.columns(), table.key());
    kafka.createTopic(source.topic(), 2);
    PipelineConfig config = config(source.topic(), "ingest-reopened");
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2041);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        feed.send(gen.snapshot(100));
        feed.send(gen.next(100));
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
      }
      try (StreamsApp app =
          IngestApp.create(config.with(IngestConfig.FLUSH_INTERVAL_MS, "3600000"))) {
        app.start();
        feed.send(gen.updates(100, false));
        Eventually.until(
            Duration.ofSeconds(120),
            "the 100 updates consumed into open batches",
            () -> count(app, "lakestream.ingest.changes") >= 100);
      }
      deleteTopic(source.topic());
      kafka.createTopic(source.topic(), 2);
      // Every row updated (what the open batch held is out of date then), and new rows: more
      // records on each partition than the open batch reached in the old topic.
      feed.send(gen.updates(model.keys()));
      feed.send(gen.next(300));
      try (StreamsApp app = IngestApp.create(config)) {
        app.start();
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
        assertThat(count(app, "lakestream.ingest.already.committed")).isZero();
        assertThat(count(app, "lakestream.app.thread.failures"))
            .as("stream threads that died")
            .isZero();
      }
    }
  }

  /**
   * The source topic deleted and created again while ingest reads it (the stream thread sees only
   * the offsets start again): each partition's open batch of the old topic is flushed, the new
   * topic is read whole, and realtime equals the source.
   */
  @Test
  void aSourceTopicDeletedAndCreatedAgainWhileIngestRunsIsReadWhole() throws Exception {
    TestTable source =
        new TestTable(table.serverName(), table.schema(), "renewed", table.columns(), table.key());
    kafka.createTopic(source.topic(), 2);
    PipelineConfig config = config(source.topic(), "ingest-renewed");
    TableIdentifier id = TableIdentifier.of(source.schema(), source.name());
    ChangeStreamGenerator gen = new ChangeStreamGenerator(source, 2042);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model);
        StreamsApp app = IngestApp.create(config)) {
      app.start();
      feed.send(gen.snapshot(200));
      feed.send(gen.next(200));
      Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, source));
      deleteTopic(source.topic());
      kafka.createTopic(source.topic(), 2);
      feed.send(gen.updates(model.keys()));
      feed.send(gen.next(100));
      Eventually.noDifference(Duration.ofSeconds(180), () -> realtimeDiffers(id, source));
      assertThat(count(app, "lakestream.ingest.source.topic.recreated")).isPositive();
      assertThat(count(app, "lakestream.ingest.already.committed")).isZero();
      assertThat(count(app, "lakestream.app.thread.failures"))
          .as("stream threads that died")
          .isZero();
    }
  }

  /** Deletes {@code topic} and waits until the broker no longer lists it. */
  private static void deleteTopic(String topic) throws Exception {
    try (Admin admin = kafka.admin()) {
      admin.deleteTopics(List.of(topic)).all().get();
      Eventually.until(
          Duration.ofSeconds(60),
          "topic " + topic + " to be deleted",
          () -> !admin.listTopics().names().get().contains(topic));
    }
  }

  private static String topicId(Admin admin, String topic) throws Exception {
    return admin
        .describeTopics(List.of(topic))
        .allTopicNames()
        .get()
        .get(topic)
        .topicId()
        .toString();
  }

  @Test
  void anOpenBatchOfADeletedTopicIsForgottenAndTheTaskStarts() throws Exception {
    TestTable kept = TestTable.plain("gone", "kept");
    TestTable dropped = TestTable.plain("gone", "dropped");
    kafka.createTopic(kept.topic(), 1);
    kafka.createTopic(dropped.topic(), 1);
    SourceTableModel droppedModel = new SourceTableModel();
    Map<String, String> pattern = Map.of(
        IngestConfig.TOPICS_REGEX,
        kept.serverName() + "\\.gone\\..*",
        IngestConfig.FLUSH_INTERVAL_MS,
        "3600000");
    PipelineConfig first = config(null, "ingest-gone", pattern);
    try (KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model);
        KafkaChangeFeed other = new KafkaChangeFeed(kafka.bootstrapServers(), droppedModel)) {
      feed.send(new ChangeStreamGenerator(kept, 2035).snapshot(100));
      other.send(new ChangeStreamGenerator(dropped, 2036).snapshot(100));
      try (StreamsApp app = IngestApp.create(first)) {
        app.start();
        Eventually.until(
            Duration.ofSeconds(120),
            "the first instance to read both topics' 200 records",
            () -> count(app, "lakestream.ingest.changes") >= 200);
      }
      deleteTopic(dropped.topic());
      PipelineConfig second = first.with(IngestConfig.FLUSH_INTERVAL_MS, "300");
      TableIdentifier id = TableIdentifier.of(kept.schema(), kept.name());
      try (StreamsApp app = IngestApp.create(second)) {
        app.start();
        Eventually.noDifference(CONVERGE, () -> realtimeDiffers(id, kept));
        assertThat(count(app, "lakestream.app.thread.failures"))
            .as("stream threads that died")
            .isZero();
        ReadOnlyKeyValueStore<String, byte[]> starts = app.streams()
            .store(StoreQueryParameters.fromNameAndType(
                ChangeBuffer.STARTS_STORE, QueryableStoreTypes.<String, byte[]>keyValueStore()));
        List<String> open = new ArrayList<>();
        try (var it = starts.all()) {
          it.forEachRemaining(e -> open.add(e.key.replace('\u0000', '/')));
        }
        assertThat(open).as("open batches the task still knows of").isEmpty();
      }
    }
  }

  /**
   * Ingest warns at start of source topics that are compacted (open batches are read again from
   * them): the check names those, by list or by pattern, and no other.
   */
  @Test
  void compactedSourceTopicsAreFoundByListAndByPattern() throws Exception {
    String compacted = "dbserver1.compacted.accounts";
    String deleting = "dbserver1.compacted.orders";
    try (Admin admin = kafka.admin()) {
      admin
          .createTopics(List.of(
              new NewTopic(compacted, 1, (short) 1)
                  .configs(Map.of("cleanup.policy", "compact,delete")),
              new NewTopic(deleting, 1, (short) 1)))
          .all()
          .get();
    }
    Properties props = new Properties();
    props.put("bootstrap.servers", kafka.bootstrapServers());
    assertThat(Topics.compacted(props, List.of(compacted, deleting, "absent"), null))
        .containsExactly(compacted);
    assertThat(Topics.compacted(props, null, Pattern.compile("dbserver1\\.compacted\\..*")))
        .containsExactly(compacted);
    assertThat(Topics.compacted(props, List.of(deleting), null)).isEmpty();
  }

  /** {@code config} on another machine (a new state directory), flushing every 300 ms. */
  private static PipelineConfig elsewhere(PipelineConfig config) throws Exception {
    return config
        .with(
            StreamsConfig.STATE_DIR_CONFIG,
            Files.createTempDirectory("streams-").toString())
        .with(IngestConfig.FLUSH_INTERVAL_MS, "300");
  }

  private long realtimeRowCount(TableIdentifier id) {
    if (!reader.tableExists(id)) {
      return 0;
    }
    return TableRows.read(reader.loadTable(id), Branches.REALTIME).size();
  }

  private static double count(StreamsApp app, String name) {
    return app.meters().find(name).counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }

  private String realtimeDiffers(TableIdentifier id, TestTable source) {
    if (!reader.tableExists(id)) {
      return "table " + id + " does not exist yet";
    }
    var rows =
        TableRows.byKey(TableRows.read(reader.loadTable(id), Branches.REALTIME), source.key());
    return TableComparison.differences(model.rows(), rows);
  }

  private PipelineConfig config(String topic, String applicationId) throws Exception {
    return config(topic, applicationId, Map.of());
  }

  /** {@code topic} null: the topics are {@code extra}'s {@link IngestConfig#TOPICS_REGEX}. */
  private PipelineConfig config(String topic, String applicationId, Map<String, String> extra)
      throws Exception {
    Map<String, String> settings = new HashMap<>();
    settings.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    settings.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    settings.put(
        StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams-").toString());
    settings.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
    settings.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, "1");
    // A replaced stream thread's tasks move once its old consumer's session expires: keep it short.
    settings.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
    settings.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
    if (topic != null) {
      settings.put(IngestConfig.TOPICS, topic);
    }
    settings.put(IngestConfig.FLUSH_INTERVAL_MS, "300");
    settings.put(IngestConfig.COMMIT_INTERVAL_MS, "100");
    settings.put(PipelineConfig.METRICS_PORT, "0");
    settings.put(PipelineConfig.TOPIC_PREFIX, "lakestream-" + applicationId);
    warehouse
        .catalogProperties()
        .forEach((k, v) -> settings.put(PipelineConfig.CATALOG_PREFIX + k, v));
    settings.putAll(extra);
    return new PipelineConfig(settings);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
