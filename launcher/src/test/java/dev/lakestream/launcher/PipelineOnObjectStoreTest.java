package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.Folders;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.maintenance.OrphanFiles;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.ObjectStoreServer;
import dev.lakestream.testkit.RestCatalogServer;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TestTable;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.aws.s3.S3FileIO;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ingest and sync apps with their warehouse on object storage, as a deployment of several
 * instances runs them (docker-compose.yml: MinIO): every data, delete, Puffin, manifest and
 * metadata file goes through Iceberg's {@code S3FileIO} to an S3-compatible server ({@link
 * ObjectStoreServer}), on a real broker, with compaction, snapshot expiry and orphan-file removal
 * (which lists the table's objects). Main must equal the source with every invariant held, and
 * nothing the table references may be removed.
 */
class PipelineOnObjectStoreTest {

  private static final Duration CONVERGE = Duration.ofSeconds(120);
  private static EmbeddedKafka kafka;
  private static ObjectStoreServer store;

  @BeforeAll
  static void start() throws Exception {
    kafka = EmbeddedKafka.start();
    store = ObjectStoreServer.start();
  }

  @AfterAll
  static void stop() {
    store.close();
    kafka.close();
  }

  /** The JDBC catalog (its database on the local disk) with its warehouse in the bucket. */
  @Test
  void mainEqualsTheSourceWithTheWarehouseOnObjectStorage() throws Exception {
    run("customers", backing -> backing);
  }

  /** As docker-compose.yml deploys it: a REST catalog whose warehouse is in the bucket. */
  @Test
  void mainEqualsTheSourceThroughARestCatalogOnObjectStorage() throws Exception {
    List<RestCatalogServer> servers = new ArrayList<>();
    try {
      run("orders", backing -> {
        RestCatalogServer server = RestCatalogServer.serving(
            CatalogUtil.buildIcebergCatalog("backing", backing, new Configuration()));
        servers.add(server);
        Map<String, String> rest = new HashMap<>(store.fileIoProperties());
        rest.put("type", "rest");
        rest.put("uri", server.uri());
        return rest;
      });
      assertThat(servers.get(0).commits())
          .as("commits through the REST catalog")
          .isGreaterThan(0);
    } finally {
      for (RestCatalogServer server : servers) {
        server.close();
      }
    }
  }

  private interface Catalogs {
    /** The apps' catalog properties, given a JDBC catalog's with the warehouse in the bucket. */
    Map<String, String> of(Map<String, String> backing) throws Exception;
  }

  private void run(String name, Catalogs catalogs) throws Exception {
    TestTable table = new TestTable(
        "dbserver1", "inventory", name, TestTable.wide("x", "y").columns(), List.of("id"));
    kafka.createTopic(table.topic(), 3);
    TableIdentifier id = TableIdentifier.of("inventory", name);
    SourceTableModel model = new SourceTableModel();
    Path catalogDir = Files.createTempDirectory("catalog-");
    Map<String, String> jdbc =
        store.jdbcCatalogProperties(catalogDir.resolve("catalog.db"), "warehouse-" + name);
    Map<String, String> props = catalogs.of(jdbc);
    Map<String, String> shared = OnKafkaSettings.withoutCatalog(kafka, name, table.topic());
    props.forEach((k, v) -> shared.put(PipelineConfig.CATALOG_PREFIX + k, v));
    CheckedWorkload.maintainOften(shared);
    // The apps' catalog name: a JDBC catalog keeps its tables under it.
    Catalog reader = CatalogLoader.load(new PipelineConfig(shared).catalogName(), props);
    try {
      try (StreamsApp ingest = IngestApp.create(OnKafkaSettings.config(shared, "ingest-" + name));
          StreamsApp sync = SyncApp.create(OnKafkaSettings.config(shared, "sync-" + name));
          KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
        ingest.start();
        sync.start();
        CheckedWorkload.Checks checks =
            CheckedWorkload.run(feed, new ChangeStreamGenerator(table, 43), reader, id);
        Eventually.noDifference(
            CONVERGE, () -> CheckedWorkload.mainDiffers(reader, id, table, model));
        assertThat(checks.count()).as("invariant checks while the workload ran").isPositive();
        assertThat(checks.failures())
            .as("invariants while the workload ran (%d checks)", checks.count())
            .isEmpty();
        double compactions = CheckedWorkload.count(sync, "lakestream.maintenance.compactions");
        double expired = CheckedWorkload.count(sync, "lakestream.maintenance.snapshots.expired");
        System.out.printf(
            "object store (%s): %.0f realtime commits, %.0f sync cycles, %.0f compactions,"
                + " %.0f snapshots expired; %d invariant checks while running%n",
            name,
            CheckedWorkload.count(ingest, "lakestream.realtime.commits"),
            CheckedWorkload.count(sync, "lakestream.sync.cycles"),
            compactions,
            expired,
            checks.count());
        assertThat(compactions).as("compactions of realtime").isGreaterThan(0);
        assertThat(expired).as("snapshots expired").isGreaterThan(0);
        assertThat(CheckedWorkload.count(sync, "lakestream.sync.table.failures"))
            .as("failed sync cycles")
            .isZero();
        assertThat(CheckedWorkload.count(sync, "lakestream.maintenance.failures"))
            .isZero();
        assertThat(CheckedWorkload.count(ingest, "lakestream.app.thread.failures"))
            .isZero();
        assertThat(CheckedWorkload.count(sync, "lakestream.app.thread.failures"))
            .isZero();
      }

      System.out.printf("object store (%s): requests so far %s%n", name, store.requests());
      // The apps are stopped: every file the table does not reference is an orphan now.
      Table t = reader.loadTable(id);
      assertThat(t.io()).isInstanceOf(S3FileIO.class);
      String prefix = "warehouse-" + name + "/inventory/" + name + "/";
      assertThat(t.location()).isEqualTo(store.warehouse(prefix.substring(0, prefix.length() - 1)));
      List<String> before = store.objectKeys(prefix);
      assertThat(before)
          .as("the table's files are objects in the bucket")
          .anyMatch(key -> key.startsWith(prefix + "data/") && key.endsWith(".parquet"))
          .anyMatch(key -> key.startsWith(prefix + "data/") && key.endsWith(".puffin"))
          .anyMatch(key -> key.startsWith(prefix + "metadata/") && key.endsWith(".metadata.json"));
      String orphan = t.location() + "/data/orphan-" + System.nanoTime() + ".parquet";
      try (OutputStream out = t.io().newOutputFile(orphan).create()) {
        out.write("never committed".getBytes(StandardCharsets.UTF_8));
      }
      assertThat(store.objectKeys(prefix)).contains(orphan.substring(("s3://lake/").length()));
      // A folder marker, as a console makes one: listed as a key ending in "/", no file of the
      // table.
      String marker = t.location() + "/data/folder-" + System.nanoTime() + "/";
      t.io().newOutputFile(marker).createOrOverwrite().close();
      assertThat(((S3FileIO) t.io()).listPrefix(t.location() + "/data/"))
          .as("the store lists the marker")
          .anyMatch(f -> f.location().equals(marker));
      Thread.sleep(1100); // past the object's modification time, which S3 gives in seconds

      OrphanFiles.Result removal = OrphanFiles.remove(t, System.currentTimeMillis());
      System.out.printf(
          "orphans: %d objects listed, %d referenced, %d removed%n",
          removal.listed(), removal.referenced(), removal.removed());
      assertThat(removal.removedFiles()).contains(orphan).doesNotContain(marker);
      assertThat(((S3FileIO) t.io()).listPrefix(t.location() + "/data/"))
          .as("the marker is left alone")
          .anyMatch(f -> f.location().equals(marker));
      // Nothing the table references was removed: every file it reaches is still in the bucket.
      List<String> left = store.objectKeys(prefix);
      assertThat(OrphanFiles.referenced(reader.loadTable(id)))
          .as("files the table references")
          .isNotEmpty()
          .allSatisfy(file -> assertThat(left).contains(file.substring("s3://lake/".length())));
      assertThat(removal.listed()).as("objects listed through S3").isEqualTo(before.size() + 1);
      assertThat(store.objectKeys(prefix))
          .as("what is left in the bucket")
          .doesNotContain(orphan.substring(("s3://lake/").length()))
          .hasSize(before.size() + 1 - removal.removed());
      // And main still reads whole and equal to the source.
      assertThat(CheckedWorkload.mainDiffers(reader, id, table, model)).isNull();
      Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
      assertThat(report.passed()).as(report.toString()).isTrue();
    } finally {
      ((AutoCloseable) reader).close();
      Folders.delete(catalogDir);
    }
  }
}
