package dev.lakestream.launcher;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.EventSerdes;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.IngestTopology;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.SyncTopology;
import dev.lakestream.sync.maintenance.Maintenance;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import dev.lakestream.testkit.TestTable;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Ingest and sync chained, each under its own {@link TopologyTestDriver}, over one real local
 * warehouse: changes go into ingest, ingest's realtime-commit events are handed to sync when the
 * test says so (so commits can pile up), and each source table has an independent model.
 */
public final class PipelineDriver implements AutoCloseable {

  static final long FLUSH_INTERVAL_MS = 1_000;
  static final long COMMIT_INTERVAL_MS = 200;

  final TemporaryWarehouse warehouse;
  final SimpleMeterRegistry ingestMeters = new SimpleMeterRegistry();
  final SimpleMeterRegistry syncMeters = new SimpleMeterRegistry();
  private final Catalog ingestCatalog;
  private final Catalog syncCatalog;
  private final Catalog reader;
  private final TopologyTestDriver ingest;
  private final TopologyTestDriver sync;
  private final Map<String, TestInputTopic<byte[], byte[]>> inputs = new HashMap<>();
  private final Map<String, SourceTableModel> models = new HashMap<>();
  private final TestOutputTopic<String, RealtimeCommitted> realtimeCommits;
  private final TestInputTopic<String, RealtimeCommitted> syncTriggers;
  final TestOutputTopic<String, MainCommitted> mainCommits;

  final Maintenance maintenance;
  final Health syncHealth = new Health();
  private final SyncConfig syncSettings;

  public PipelineDriver(List<String> topics) throws Exception {
    this(topics, Map.of());
  }

  /** {@code extra}: more settings of both apps (maintenance policies). Maintenance runs on sync's backstop timer. */
  public PipelineDriver(List<String> topics, Map<String, String> extra) throws Exception {
    this(topics, extra, UnaryOperator.identity());
  }

  /**
   * As {@link #PipelineDriver(List, Map)}, with the apps reaching the warehouse's catalog database
   * at {@code appsCatalogUri} of its URL (a driver in front of it); the test reads it directly.
   */
  public PipelineDriver(
      List<String> topics, Map<String, String> extra, UnaryOperator<String> appsCatalogUri)
      throws Exception {
    warehouse = new TemporaryWarehouse();
    Map<String, String> settings = new HashMap<>();
    settings.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.put(IngestConfig.TOPICS, String.join(",", topics));
    settings.put(IngestConfig.FLUSH_INTERVAL_MS, Long.toString(FLUSH_INTERVAL_MS));
    settings.put(IngestConfig.COMMIT_INTERVAL_MS, Long.toString(COMMIT_INTERVAL_MS));
    // Commits on the stream thread, so a test sees each commit when it advances the clock.
    settings.put(IngestConfig.COMMIT_ASYNC, "false");
    warehouse
        .catalogProperties()
        .forEach((k, v) -> settings.put(PipelineConfig.CATALOG_PREFIX + k, v));
    settings.computeIfPresent(
        PipelineConfig.CATALOG_PREFIX + "uri", (k, uri) -> appsCatalogUri.apply(uri));
    settings.putAll(extra);
    PipelineConfig ingestConfig =
        new PipelineConfig(settings).with(StreamsConfig.APPLICATION_ID_CONFIG, "ingest");
    PipelineConfig syncConfig =
        new PipelineConfig(settings).with(StreamsConfig.APPLICATION_ID_CONFIG, "sync");
    ingestCatalog =
        CatalogLoader.load(ingestConfig.catalogName(), ingestConfig.catalogProperties());
    syncCatalog = CatalogLoader.load(syncConfig.catalogName(), syncConfig.catalogProperties());
    reader = warehouse.openCatalog();

    IngestConfig ic = new IngestConfig(ingestConfig);
    ingest = new TopologyTestDriver(
        IngestTopology.build(ic, new TableManager(ingestCatalog), ingestMeters),
        props(ingestConfig));
    for (String topic : topics) {
      inputs.put(
          topic,
          ingest.createInputTopic(topic, new ByteArraySerializer(), new ByteArraySerializer()));
    }
    realtimeCommits = ingest.createOutputTopic(
        ic.realtimeCommitsTopic(),
        new StringDeserializer(),
        EventSerdes.realtimeCommitted().deserializer());

    SyncConfig sc = new SyncConfig(syncConfig);
    maintenance =
        new Maintenance(MaintenanceConfig.from(syncConfig), syncCatalog, syncMeters, Runnable::run);
    syncSettings = sc;
    sync = new TopologyTestDriver(
        SyncTopology.build(sc, new TableManager(syncCatalog), syncMeters, maintenance, syncHealth),
        props(syncConfig));
    syncTriggers = sync.createInputTopic(
        sc.realtimeCommitsTopic(),
        new StringSerializer(),
        EventSerdes.realtimeCommitted().serializer());
    mainCommits = sync.createOutputTopic(
        sc.mainCommitsTopic(),
        new StringDeserializer(),
        EventSerdes.mainCommitted().deserializer());
  }

  /** The apps' own Kafka properties (their defaults: dead-letter handling and all). */
  private static Properties props(PipelineConfig config) throws Exception {
    Properties props = StreamsApp.streamsProperties(config);
    props.put(
        StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams-").toString());
    return props;
  }

  public void send(List<Change> changes) {
    for (Change change : changes) {
      inputs
          .get(change.table().topic())
          .pipeInput(DebeziumJson.key(change, true), DebeziumJson.value(change, true));
      model(change.table()).apply(change);
    }
  }

  /**
   * Sends the changes to {@code topic} (one of the driver's: a table with several source
   * partitions) without applying them to the model; the caller applies them in source order.
   */
  public void sendOnly(String topic, List<Change> changes) {
    sendOnly(topic, changes, true);
  }

  /**
   * The same; without {@code commitLsn}, every change as the first transaction a restarted
   * connector streams writes it ({@link DebeziumJson#withoutCommitLsn}).
   */
  public void sendOnly(String topic, List<Change> changes, boolean commitLsn) {
    for (Change change : changes) {
      byte[] value = DebeziumJson.value(change, true);
      inputs
          .get(topic)
          .pipeInput(
              DebeziumJson.key(change, true),
              commitLsn || value == null ? value : DebeziumJson.withoutCommitLsn(value));
    }
  }

  /** Sends the changes with Debezium's placeholder for the unchanged values of {@code toasted} columns. */
  public void send(List<Change> changes, Set<String> toasted) {
    for (Change change : changes) {
      inputs
          .get(change.table().topic())
          .pipeInput(DebeziumJson.key(change, true), DebeziumJson.value(change, true, toasted));
      model(change.table()).apply(change);
    }
  }

  public SourceTableModel model(TestTable table) {
    return models.computeIfAbsent(table.topic(), t -> new SourceTableModel());
  }

  /** Ingest flushes its open batches and commits them to realtime. */
  public void ingestCommit() {
    ingest.advanceWallClockTime(Duration.ofMillis(FLUSH_INTERVAL_MS));
    ingest.advanceWallClockTime(Duration.ofMillis(COMMIT_INTERVAL_MS));
  }

  /** Hands the pending realtime-commit events to sync, which runs its cycles; returns main's new commits. */
  public List<MainCommitted> sync() {
    List<TestRecord<String, RealtimeCommitted>> triggers = realtimeCommits.readRecordsToList();
    for (TestRecord<String, RealtimeCommitted> t : triggers) {
      syncTriggers.pipeInput(t.key(), t.value());
    }
    return mainCommits.readValuesToList();
  }

  /** Writes {@code value} as it is to sync's input {@code topic} (a forged or malformed record). */
  void sendToSync(String topic, String key, byte[] value) {
    sync.createInputTopic(topic, new StringSerializer(), new ByteArraySerializer())
        .pipeInput(key, value);
  }

  /** The records sync sent to the dead-letter topic since the last call. */
  List<TestRecord<String, byte[]>> syncDeadLetters() {
    return sync.createOutputTopic(
            syncSettings.pipeline().deadLetterTopic(),
            new StringDeserializer(),
            new ByteArrayDeserializer())
        .readRecordsToList();
  }

  /** The records sync wrote to {@code topic} (its internal topics too) since the last call. */
  List<TestRecord<String, byte[]>> syncRecords(String topic) {
    return sync.createOutputTopic(topic, new StringDeserializer(), new ByteArrayDeserializer())
        .readRecordsToList();
  }

  SyncConfig syncConfig() {
    return syncSettings;
  }

  /** Lets sync's clock run {@code ms} (its timer fires as often as due). */
  List<MainCommitted> syncAfter(Duration duration) {
    sync.advanceWallClockTime(duration);
    return mainCommits.readValuesToList();
  }

  /** Drops the pending realtime-commit events: sync hears of those commits only from its timer. */
  void dropRealtimeEvents() {
    realtimeCommits.readRecordsToList();
  }

  /** Lets sync's backstop timer fire. */
  public List<MainCommitted> syncBackstop() {
    sync.advanceWallClockTime(Duration.ofMillis(20_000));
    return mainCommits.readValuesToList();
  }

  /** A properties file naming this warehouse's catalog, plus {@code settings}: what a user passes with --config. */
  Path configFile(Map<String, String> settings) throws IOException {
    StringBuilder props = new StringBuilder();
    warehouse.catalogProperties().forEach((k, v) -> props
        .append(PipelineConfig.CATALOG_PREFIX)
        .append(k)
        .append('=')
        .append(v)
        .append('\n'));
    settings.forEach((k, v) -> props.append(k).append('=').append(v).append('\n'));
    return Files.writeString(
        Files.createTempFile(warehouse.dir(), "config", ".properties"), props.toString());
  }

  /** The warehouse folder (its JDBC catalog is {@code catalog.db} in it, catalog name {@code lakestream}). */
  public Path warehouseDir() {
    return warehouse.dir();
  }

  /** A catalog of the warehouse, separate from the apps' (for what a user or another tool does). */
  Catalog catalog() {
    return reader;
  }

  public Table table(TableIdentifier id) {
    return reader.loadTable(id);
  }

  public Table table(TestTable table) {
    return reader.loadTable(TableIdentifier.of(table.schema(), table.name()));
  }

  public boolean tableExists(TestTable table) {
    return reader.tableExists(TableIdentifier.of(table.schema(), table.name()));
  }

  public Map<List<Object>, Map<String, Object>> rows(TestTable table, String branch) {
    return TableRows.byKey(TableRows.read(table(table), branch), table.key());
  }

  /** Null when main equals the model of the table, else what differs. */
  public String mainDiffersFromModel(TestTable table) {
    return TableComparison.differences(model(table).rows(), rows(table, Branches.MAIN));
  }

  public Verifier.Report verify(TestTable table) {
    return Verifier.verify(table(table), table.schema() + "." + table.name());
  }

  List<Snapshot> snapshots(TestTable testTable, String branch) {
    return TableRows.snapshots(table(testTable), branch);
  }

  public MeterRegistry ingestMeters() {
    return ingestMeters;
  }

  public double syncCounter(String name) {
    var counter = syncMeters.find(name).counter();
    return counter == null ? 0 : counter.count();
  }

  @Override
  public void close() throws Exception {
    maintenance.close();
    ingest.close();
    sync.close();
    ((AutoCloseable) ingestCatalog).close();
    ((AutoCloseable) syncCatalog).close();
    ((AutoCloseable) reader).close();
    warehouse.close();
  }
}
