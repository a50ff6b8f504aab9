package dev.lakestream.ingest;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.EventSerdes;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.ingest.buffer.BufferedChange;
import dev.lakestream.ingest.buffer.ChangeBuffer;
import dev.lakestream.ingest.commit.RealtimeCommitter;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import dev.lakestream.testkit.TestTable;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;

/**
 * The ingest topology under {@link TopologyTestDriver}, writing to a real local warehouse, with a
 * model of each source table fed the same changes. One source partition (the driver's).
 */
final class IngestDriver implements AutoCloseable {

  static final long FLUSH_INTERVAL_MS = 1_000;
  static final long COMMIT_INTERVAL_MS = 200;

  final TemporaryWarehouse warehouse;
  final IngestConfig config;
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  /** The source topics' IDs as the topology sees them (none unless a test sets them). */
  final Map<String, String> topicIds = new ConcurrentHashMap<>();
  /** What the app's {@code /health} would report. */
  final Health health = new Health();

  private final Catalog writerCatalog;
  private final Catalog readerCatalog;
  /** The app's tables, cached across {@link #restartTasks}, as a process keeps them. */
  private final TableManager tables;

  private final List<String> topics;
  private final Properties props;
  private TopologyTestDriver driver;
  private final Map<String, TestInputTopic<byte[], byte[]>> inputs = new HashMap<>();
  private final Map<String, SourceTableModel> models = new HashMap<>();
  TestOutputTopic<byte[], byte[]> deadLetters;
  TestOutputTopic<String, RealtimeCommitted> realtimeCommits;
  TestOutputTopic<String, FilesWritten> filesWritten;
  TestInputTopic<String, FilesWritten> filesWrittenIn;

  IngestDriver(List<String> topics, Map<String, String> overrides) throws Exception {
    warehouse = new TemporaryWarehouse();
    Map<String, String> settings = new HashMap<>();
    settings.put(StreamsConfig.APPLICATION_ID_CONFIG, "ingest-test");
    settings.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.put(IngestConfig.TOPICS, String.join(",", topics));
    settings.put(IngestConfig.FLUSH_INTERVAL_MS, Long.toString(FLUSH_INTERVAL_MS));
    settings.put(IngestConfig.COMMIT_INTERVAL_MS, Long.toString(COMMIT_INTERVAL_MS));
    // Commits on the stream thread, so a test sees each commit when it advances the clock.
    settings.put(IngestConfig.COMMIT_ASYNC, "false");
    warehouse
        .catalogProperties()
        .forEach((k, v) -> settings.put(PipelineConfig.CATALOG_PREFIX + k, v));
    settings.putAll(overrides);
    PipelineConfig pipeline = new PipelineConfig(settings);
    config = new IngestConfig(pipeline);
    writerCatalog = CatalogLoader.load(pipeline.catalogName(), pipeline.catalogProperties());
    readerCatalog = warehouse.openCatalog();

    props = pipeline.kafkaProperties();
    props.put(
        StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams-").toString());
    tables = new TableManager(writerCatalog);
    this.topics = topics;
    open();
  }

  /**
   * Closes the tasks and starts them again with the same table cache, as a stream thread replaced in
   * the same process does. (TopologyTestDriver's close wipes the state directory: the tasks start
   * with empty stores, as one that moved here without its local state; and the new driver numbers
   * the input topics' offsets from 0 again.)
   */
  void restartTasks() {
    driver.close();
    open();
  }

  private void open() {
    driver = new TopologyTestDriver(
        IngestTopology.build(
            config, tables, meters, health, (topic, notBeforeMs) -> topicIds.get(topic)),
        props);
    inputs.clear();
    for (String topic : topics) {
      inputs.put(
          topic,
          driver.createInputTopic(topic, new ByteArraySerializer(), new ByteArraySerializer()));
    }
    deadLetters = driver.createOutputTopic(
        config.deadLetterTopic(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    realtimeCommits = driver.createOutputTopic(
        config.realtimeCommitsTopic(),
        new StringDeserializer(),
        EventSerdes.realtimeCommitted().deserializer());
    filesWritten = driver.createOutputTopic(
        config.filesWrittenTopic(),
        new StringDeserializer(),
        EventSerdes.filesWritten().deserializer());
    filesWrittenIn = driver.createInputTopic(
        config.filesWrittenTopic(),
        new StringSerializer(),
        EventSerdes.filesWritten().serializer());
  }

  /** Sends the changes as Debezium would and applies them to the model of their table. */
  void send(List<Change> changes, boolean withSchemas) {
    for (Change change : changes) {
      inputs
          .get(change.table().topic())
          .pipeInput(
              DebeziumJson.key(change, withSchemas), DebeziumJson.value(change, withSchemas));
      model(change.table()).apply(change);
    }
  }

  /** Sends the changes with Debezium's placeholder for unchanged values of the {@code toasted} columns. */
  void sendToasted(List<Change> changes, Set<String> toasted) {
    for (Change change : changes) {
      inputs
          .get(change.table().topic())
          .pipeInput(DebeziumJson.key(change, true), DebeziumJson.value(change, true, toasted));
      model(change.table()).apply(change);
    }
  }

  void sendRaw(String topic, byte[] key, byte[] value) {
    inputs.get(topic).pipeInput(key, value);
  }

  /** Sends a record as it is, with headers, past the model. */
  void sendRaw(String topic, byte[] key, byte[] value, Headers headers) {
    inputs.get(topic).pipeInput(new TestRecord<>(key, value, headers));
  }

  /** Sends one change as a record of timestamp {@code timestampMs} and applies it to the model. */
  void sendAt(Change change, long timestampMs) {
    inputs
        .get(change.table().topic())
        .pipeInput(
            DebeziumJson.key(change, true),
            DebeziumJson.value(change, true),
            Instant.ofEpochMilli(timestampMs));
    model(change.table()).apply(change);
  }

  /** Sends one change with record headers and applies it to the model. */
  void send(Change change, Headers headers) {
    inputs
        .get(change.table().topic())
        .pipeInput(new TestRecord<>(
            DebeziumJson.key(change, true), DebeziumJson.value(change, true), headers));
    model(change.table()).apply(change);
  }

  /** Writes {@code value} as it is to the files-written topic (a malformed or forged batch event). */
  void sendRawBatch(String key, byte[] value) {
    driver
        .createInputTopic(
            config.filesWrittenTopic(), new StringSerializer(), new ByteArraySerializer())
        .pipeInput(key, value);
  }

  SourceTableModel model(TestTable table) {
    return models.computeIfAbsent(table.topic(), t -> new SourceTableModel());
  }

  /** Lets the open batches reach their flush interval, then the committer its commit interval. */
  void flushAndCommit() {
    driver.advanceWallClockTime(Duration.ofMillis(FLUSH_INTERVAL_MS));
    driver.advanceWallClockTime(Duration.ofMillis(COMMIT_INTERVAL_MS));
  }

  /** Lets the open batches reach their flush interval only. */
  void flushOnly() {
    driver.advanceWallClockTime(Duration.ofMillis(FLUSH_INTERVAL_MS));
  }

  void advance(long ms) {
    driver.advanceWallClockTime(Duration.ofMillis(ms));
  }

  void commitOnly() {
    driver.advanceWallClockTime(Duration.ofMillis(COMMIT_INTERVAL_MS));
  }

  /** The change buffer's store of change-log rows not yet written. */
  KeyValueStore<String, BufferedChange> changelogBuffer() {
    return driver.getKeyValueStore(ChangeBuffer.CHANGELOG_STORE);
  }

  /** Where each source partition's open batch starts, as the buffer stores it. */
  KeyValueStore<String, byte[]> batchStarts() {
    return driver.getKeyValueStore(ChangeBuffer.STARTS_STORE);
  }

  /** The realtime committer's store of pending batches. */
  KeyValueStore<String, FilesWritten> pendingBatches() {
    return driver.getKeyValueStore(RealtimeCommitter.STORE);
  }

  Table table(TableIdentifier id) {
    return readerCatalog.loadTable(id);
  }

  /** The warehouse's catalog, as another writer (or an earlier version) would use it. */
  Catalog catalog() {
    return readerCatalog;
  }

  /** Drops the table from the catalog, as an operator would (its files stay). */
  void dropTable(TableIdentifier id) {
    readerCatalog.dropTable(id, false);
  }

  boolean exists(TableIdentifier id) {
    return readerCatalog.tableExists(id);
  }

  Table table(TestTable table) {
    return readerCatalog.loadTable(TableIdentifier.of(table.schema(), table.name()));
  }

  Map<List<Object>, Map<String, Object>> realtimeRows(TestTable table) {
    return TableRows.byKey(TableRows.read(table(table), Branches.REALTIME), table.key());
  }

  /** Null when the realtime branch equals the model of the table, else what differs. */
  String realtimeDiffersFromModel(TestTable table) {
    return TableComparison.differences(model(table).rows(), realtimeRows(table));
  }

  List<Snapshot> realtimeSnapshots(TestTable testTable) {
    return TableRows.snapshots(table(testTable), Branches.REALTIME);
  }

  double counter(String name, String... tags) {
    var counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  @Override
  public void close() throws Exception {
    driver.close();
    ((AutoCloseable) writerCatalog).close();
    ((AutoCloseable) readerCatalog).close();
    warehouse.close();
  }
}
