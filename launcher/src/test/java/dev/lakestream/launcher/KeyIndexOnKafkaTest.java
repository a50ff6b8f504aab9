package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import dev.lakestream.testkit.TestTable;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The key index on a real broker: it survives a restart of sync on an empty state directory (Kafka
 * Streams restores it from its changelog topic, nothing is indexed again), and a table synced
 * without it gets it built from main while ingest keeps committing, cycles scanning the files not
 * indexed yet; and a primary key of megabytes is indexed without failing sync's stream thread.
 */
class KeyIndexOnKafkaTest {

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
  void theIndexIsRestoredFromItsChangelogWhenSyncRestartsOnAnEmptyStateDirectory()
      throws Exception {
    TestTable table = table("restored");
    Map<String, String> shared = shared("k1", table.topic());
    shared.put(SyncConfig.RESOLVER, "index");
    TableIdentifier id = TableIdentifier.of("inventory", "restored");
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 41);
    try (StreamsApp ingest = IngestApp.create(config(shared, "ingest-k1"));
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      ingest.start();
      try (StreamsApp sync = SyncApp.create(config(shared, "sync-k1"))) {
        sync.start();
        running(ingest, sync);
        feed.send(gen.snapshot(2_000));
        converge(id, table);
        for (int i = 0; i < 6; i++) {
          feed.send(gen.next(400));
          Thread.sleep(300);
        }
        converge(id, table);
        assertThat(count(sync, "lakestream.sync.index.keys.indexed"))
            .as("keys indexed from the cycles' new files")
            .isGreaterThanOrEqualTo(2_000);
        assertThat(count(sync, "lakestream.sync.resolver.files", "resolver", "index"))
            .as("files resolved by the index")
            .isPositive();
        assertThat(count(sync, "lakestream.sync.resolver.files", "resolver", "scan"))
            .as("no file scanned: every file on main was indexed by the cycle that added it")
            .isZero();
      }
      // The same application id on a fresh state directory: the store comes back from its
      // changelog.
      try (StreamsApp sync = SyncApp.create(config(shared, "sync-k1"))) {
        sync.start();
        running(ingest, sync);
        for (int i = 0; i < 6; i++) {
          feed.send(gen.next(400));
          Thread.sleep(300);
        }
        converge(id, table);
        assertThat(count(sync, "lakestream.sync.resolver.files", "resolver", "index"))
            .isPositive();
        assertThat(count(sync, "lakestream.sync.resolver.files", "resolver", "scan"))
            .as("after the restore no file needs a scan")
            .isZero();
        assertThat(count(sync, "lakestream.sync.index.bootstrap.files"))
            .as("nothing indexed again from main")
            .isZero();
        assertThat(count(sync, "lakestream.sync.index.keys.indexed"))
            .as("only the new files' keys were indexed after the restart")
            .isLessThan(2_000 + 6 * 400);
      }
    }
    assertThat(Verifier.verify(reader.loadTable(id), id.toString()).passed()).isTrue();
  }

  @Test
  void aTableSyncedWithoutTheIndexGetsItBuiltFromMainWhileIngestKeepsCommitting() throws Exception {
    TestTable table = table("rebuilt");
    Map<String, String> shared = shared("k2", table.topic());
    TableIdentifier id = TableIdentifier.of("inventory", "rebuilt");
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 43);
    try (StreamsApp ingest = IngestApp.create(config(shared, "ingest-k2"));
        KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
      ingest.start();
      try (StreamsApp sync = SyncApp.create(config(shared, "sync-k2"))) {
        sync.start();
        running(ingest, sync);
        feed.send(gen.snapshot(2_000));
        for (int i = 0; i < 8; i++) {
          feed.send(gen.next(400));
          Thread.sleep(300);
        }
        converge(id, table);
      }
      int filesOnMain = BranchFiles.liveDataFiles(
              reader.loadTable(id), reader.loadTable(id).snapshot(Branches.MAIN))
          .size();
      assertThat(filesOnMain).isGreaterThan(3);

      shared.put(SyncConfig.RESOLVER + ".inventory.rebuilt", "index");
      shared.put(
          SyncConfig.INDEX_BOOTSTRAP_BUDGET_MS,
          "1"); // one file per step: the rebuild takes several steps
      try (StreamsApp sync = SyncApp.create(config(shared, "sync-k2"))) {
        sync.start();
        running(ingest, sync);
        // Changes keep coming while the index is built: cycles scan what it lacks.
        for (int i = 0; i < 10; i++) {
          feed.send(gen.next(300));
          Thread.sleep(500);
        }
        converge(id, table);
        assertThat(count(sync, "lakestream.sync.resolver.files", "resolver", "scan"))
            .as("files not indexed yet were scanned")
            .isPositive();
        Eventually.until(
            Duration.ofSeconds(60),
            "every file that was on main indexed",
            () -> count(sync, "lakestream.sync.index.bootstrap.files") >= filesOnMain * 6);
        double scannedBefore = count(sync, "lakestream.sync.resolver.files", "resolver", "scan");
        for (int i = 0; i < 5; i++) {
          feed.send(gen.next(300));
          Thread.sleep(500);
        }
        converge(id, table);
        assertThat(count(sync, "lakestream.sync.resolver.files", "resolver", "scan"))
            .as("once built, cycles need no scan")
            .isEqualTo(scannedBefore);
        assertThat(count(sync, "lakestream.sync.resolver.files", "resolver", "index"))
            .isPositive();
      }
    }
    assertThat(Verifier.verify(reader.loadTable(id), id.toString()).passed()).isTrue();
  }

  /**
   * A row whose primary key is 2 MB (a text key; the source topic takes records that large): the
   * index stores its entries under the key's digest, so its changelog takes them. Stored whole, the
   * changelog record was larger than Kafka takes and sync's stream thread failed at every commit.
   * Its update and its delete resolve through the index, and main equals the source.
   */
  @Test
  void aKeyOfMegabytesIsIndexedWithoutFailingTheStreamThread() throws Exception {
    TestTable table = TestTable.textKeyed("inventory", "notes");
    try (Admin admin = kafka.admin()) {
      admin
          .createTopics(List.of(new NewTopic(table.topic(), 1, (short) 1)
              .configs(Map.of("max.message.bytes", Integer.toString(8 << 20)))))
          .all()
          .get();
    }
    Map<String, String> shared = shared("k3", table.topic());
    shared.put(SyncConfig.RESOLVER, "index");
    TableIdentifier id = TableIdentifier.of("inventory", "notes");
    String huge = "k".repeat(2_000_000);
    Properties props = new Properties();
    props.put("bootstrap.servers", kafka.bootstrapServers());
    props.put("max.request.size", Integer.toString(8 << 20));
    try (StreamsApp ingest = IngestApp.create(config(shared, "ingest-k3"));
        StreamsApp sync = SyncApp.create(config(shared, "sync-k3"));
        KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      ingest.start();
      sync.start();
      running(ingest, sync);
      long now = System.currentTimeMillis();
      List<List<Change>> rounds = List.of(
          List.of(
              new Change(
                  'c', table, List.of("small"), null, Map.of("code", "small", "n", 1L), now, 100),
              new Change('c', table, List.of(huge), null, Map.of("code", huge, "n", 1L), now, 200)),
          List.of(
              new Change('u', table, List.of(huge), null, Map.of("code", huge, "n", 2L), now, 300),
              new Change(
                  'u', table, List.of("small"), null, Map.of("code", "small", "n", 2L), now, 400)),
          List.of(new Change(
              'd', table, List.of(huge), Map.of("code", huge, "n", 2L), null, now, 500)));
      for (List<Change> round : rounds) {
        for (Change change : round) {
          producer
              .send(new ProducerRecord<>(
                  table.topic(), DebeziumJson.key(change, true), DebeziumJson.value(change, true)))
              .get();
          model.apply(change);
        }
        converge(id, table);
      }
      assertThat(count(sync, "lakestream.app.thread.failures"))
          .as("sync's stream threads that failed")
          .isZero();
      assertThat(count(sync, "lakestream.sync.resolver.files", "resolver", "index"))
          .as("files whose deletes the index resolved")
          .isPositive();
    }
    assertThat(Verifier.verify(reader.loadTable(id), id.toString()).passed()).isTrue();
  }

  private static TestTable table(String name) throws Exception {
    TestTable table = new TestTable(
        "dbserver1", "inventory", name, TestTable.plain("x", "y").columns(), List.of("id"));
    kafka.createTopic(table.topic(), 3);
    return table;
  }

  private static void running(StreamsApp... apps) throws Exception {
    Eventually.until(Duration.ofSeconds(60), "apps RUNNING", () -> {
      for (StreamsApp app : apps) {
        if (app.streams().state() != KafkaStreams.State.RUNNING) {
          return false;
        }
      }
      return true;
    });
  }

  private void converge(TableIdentifier id, TestTable table) throws Exception {
    Eventually.noDifference(CONVERGE, () -> {
      if (!reader.tableExists(id)) {
        return "table " + id + " does not exist yet";
      }
      return TableComparison.differences(
          model.rows(),
          TableRows.byKey(TableRows.read(reader.loadTable(id), Branches.MAIN), table.key()));
    });
  }

  private static double count(StreamsApp app, String name, String... tags) {
    var search = app.meters().find(name);
    if (tags.length > 0) {
      search = search.tags(tags);
    }
    var counter = search.counter();
    return counter == null ? 0 : counter.count();
  }

  private Map<String, String> shared(String prefix, String topic) {
    Map<String, String> settings = OnKafkaSettings.shared(kafka, warehouse, prefix, topic);
    settings.put(SyncConfig.INDEX_PARTITIONS, "6");
    settings.put(SyncConfig.INDEX_BOOTSTRAP_INTERVAL_MS, "200");
    settings.put(MaintenanceConfig.ENABLED, "false");
    return settings;
  }

  private static PipelineConfig config(Map<String, String> shared, String applicationId)
      throws Exception {
    return OnKafkaSettings.config(shared, applicationId);
  }
}
