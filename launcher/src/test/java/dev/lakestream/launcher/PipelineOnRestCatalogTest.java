package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.LocalFileIO;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.RestCatalogServer;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TemporaryWarehouse;
import dev.lakestream.testkit.TestTable;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ingest and sync apps through an Iceberg REST catalog (the deployment's catalog when it runs
 * more than one instance), on a real broker: every load and commit of ingest's committer, sync's
 * cycles and its maintenance goes over HTTP through Iceberg's REST client, to Iceberg's own
 * server-side commit handling ({@link RestCatalogServer}). There a commit that another landed before
 * is refused (a branch's head moved, or the table's sequence number did: the three writers commit
 * to two branches of one table), and the client retries it on the table as it is now. Main must
 * still equal the source with every invariant held.
 */
class PipelineOnRestCatalogTest {

  private static final Duration CONVERGE = Duration.ofSeconds(120);
  private static EmbeddedKafka kafka;

  @BeforeAll
  static void startKafka() throws Exception {
    kafka = EmbeddedKafka.start();
  }

  @AfterAll
  static void stopKafka() {
    kafka.close();
  }

  @Test
  void ingestSyncAndMaintenanceKeepMainEqualToTheSourceThroughARestCatalog() throws Exception {
    RestCatalogServer server = run("customers", RestCatalogServer::serving);
    assertThat(server.conflicts())
        .as("commits refused as conflicts (HTTP 409) and retried")
        .isGreaterThan(0);
  }

  /**
   * REST servers built on Iceberg's server code before 1.11 refuse a commit whose sequence number
   * another commit took first as a bad request, which Iceberg's client does not retry: with the
   * three writers on two branches of one table, that is every few seconds.
   */
  @Test
  void mainEqualsTheSourceThroughAServerThatRefusesSequenceConflictsAsBadRequests()
      throws Exception {
    RestCatalogServer server =
        run("orders", RestCatalogServer::servingSequenceConflictsAsBadRequests);
    assertThat(server.badRequests())
        .as("commits refused as bad requests (HTTP 400) and retried")
        .isGreaterThan(0);
  }

  private interface Server {
    RestCatalogServer serving(Catalog backing) throws Exception;
  }

  /** The server, closed, for its counts. */
  private RestCatalogServer run(String name, Server kind) throws Exception {
    TestTable table = new TestTable(
        "dbserver1", "inventory", name, TestTable.wide("x", "y").columns(), List.of("id"));
    kafka.createTopic(table.topic(), 3);
    TableIdentifier id = TableIdentifier.of("inventory", name);
    SourceTableModel model = new SourceTableModel();
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse();
        RestCatalogServer server = kind.serving(warehouse.catalog())) {
      Map<String, String> rest = server.catalogProperties(LocalFileIO.class.getName());
      Map<String, String> shared = OnKafkaSettings.shared(kafka, warehouse, name, table.topic());
      shared.keySet().removeIf(k -> k.startsWith(PipelineConfig.CATALOG_PREFIX));
      rest.forEach((k, v) -> shared.put(PipelineConfig.CATALOG_PREFIX + k, v));
      CheckedWorkload.maintainOften(shared);
      Catalog reader = CatalogLoader.load("reader", rest);
      assertThat(reader)
          .as("the test reads through the REST catalog too")
          .isInstanceOf(RESTCatalog.class);
      try (StreamsApp ingest = IngestApp.create(OnKafkaSettings.config(shared, "ingest-" + name));
          StreamsApp sync = SyncApp.create(OnKafkaSettings.config(shared, "sync-" + name));
          KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), model)) {
        ingest.start();
        sync.start();
        CheckedWorkload.Checks checks =
            CheckedWorkload.run(feed, new ChangeStreamGenerator(table, 41), reader, id);
        Eventually.noDifference(
            CONVERGE, () -> CheckedWorkload.mainDiffers(reader, id, table, model));
        Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
        assertThat(report.passed()).as(report.toString()).isTrue();
        assertThat(checks.failures())
            .as("invariants while the workload ran (%d checks)", checks.count())
            .isEmpty();

        double realtimeCommits = CheckedWorkload.count(ingest, "lakestream.realtime.commits");
        double compactions = CheckedWorkload.count(sync, "lakestream.maintenance.compactions");
        double expired = CheckedWorkload.count(sync, "lakestream.maintenance.snapshots.expired");
        System.out.printf(
            "REST catalog: %d commits received, %d refused as conflicts, %d as bad requests; %.0f realtime"
                + " commits, %.0f sync cycles, %.0f compactions, %.0f snapshots expired;"
                + " %d invariant checks while running%n",
            server.commits(),
            server.conflicts(),
            server.badRequests(),
            realtimeCommits,
            CheckedWorkload.count(sync, "lakestream.sync.cycles"),
            compactions,
            expired,
            checks.count());
        assertThat(realtimeCommits).as("ingest kept committing").isGreaterThan(10);
        assertThat((double) server.commits())
            .as("commits that went through the REST catalog")
            .isGreaterThan(realtimeCommits);
        assertThat(compactions).as("compactions of realtime").isGreaterThan(0);
        assertThat(expired).as("snapshots expired").isGreaterThan(0);
        assertThat(CheckedWorkload.count(sync, "lakestream.sync.table.failures"))
            .as("sync cycles that failed (a commit refused and not retried fails its cycle)")
            .isZero();
        assertThat(CheckedWorkload.count(sync, "lakestream.maintenance.failures"))
            .isZero();
        assertThat(CheckedWorkload.count(ingest, "lakestream.app.thread.failures"))
            .as("ingest threads that died")
            .isZero();
        assertThat(CheckedWorkload.count(sync, "lakestream.app.thread.failures"))
            .as("sync threads that died")
            .isZero();
      } finally {
        ((AutoCloseable) reader).close();
      }
      return server;
    }
  }
}
