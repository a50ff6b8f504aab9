package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.testkit.RestCatalogServer;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTClient;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pipeline's REST catalog against a REST server over HTTP: a commit to one branch, read before
 * another commit landed on the other branch, asks for a sequence number that is no longer free. A server that refuses that as a bad request (as Iceberg's server code did before
 * 1.11) gets the commit again, on the table as it is now, from {@link RestCatalog}; Iceberg's own
 * REST catalog gives up on it.
 */
class RestCatalogTest {

  private final Closing closing = new Closing();

  private static final TableIdentifier ID = TableIdentifier.of("inventory", "customers");
  private static final Types.StructType ROW = Types.StructType.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));

  @Test
  void aCommitRefusedForItsSequenceNumberIsRetriedAndLands() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse();
        RestCatalogServer server =
            RestCatalogServer.servingSequenceConflictsAsBadRequests(warehouse.catalog())) {
      Catalog catalog = closing.add(CatalogLoader.load("rest", properties(server)));
      assertThat(catalog).isInstanceOf(RestCatalog.class);
      new TableManager(catalog).ensure(ID, ROW, List.of("id"), "f1");
      long mainBefore = catalog.loadTable(ID).snapshot(Branches.MAIN).snapshotId();
      server.beforeNextCommit(() -> realtimeCommitMeanwhile(warehouse));

      catalog.loadTable(ID).newFastAppend().toBranch(Branches.MAIN).commit();

      assertThat(server.badRequests())
          .as("commits refused for their sequence number")
          .isEqualTo(1);
      Table now = catalog.loadTable(ID);
      assertThat(now.snapshot(Branches.MAIN).parentId()).isEqualTo(mainBefore);
      assertThat(now.snapshot(Branches.MAIN).sequenceNumber())
          .isGreaterThan(now.snapshot(Branches.REALTIME).sequenceNumber());
    }
  }

  @Test
  void icebergsOwnRestCatalogGivesUpOnTheSameCommit() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse();
        RestCatalogServer server =
            RestCatalogServer.servingSequenceConflictsAsBadRequests(warehouse.catalog())) {
      Catalog catalog = closing.add(
          CatalogUtil.buildIcebergCatalog("rest", properties(server), new Configuration()));
      assertThat(catalog).isExactlyInstanceOf(RESTCatalog.class);
      new TableManager(catalog).ensure(ID, ROW, List.of("id"), "f1");
      server.beforeNextCommit(() -> realtimeCommitMeanwhile(warehouse));
      Table table = catalog.loadTable(ID);

      assertThatThrownBy(() -> table.newFastAppend().toBranch(Branches.MAIN).commit())
          .isInstanceOf(BadRequestException.class)
          .hasMessageContaining(RestCatalogClient.SEQUENCE_TAKEN);
    }
  }

  /**
   * Instances racing to create one table through a REST catalog (a staged create each, committed
   * with the requirement that the table does not exist): one creates it, the others find it made
   * and use it, and it ends with the mark and both branches once.
   */
  @Test
  void instancesRacingToCreateATableThroughRestAllGetTheManagedTable() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse();
        RestCatalogServer server = RestCatalogServer.serving(warehouse.catalog())) {
      int instances = 4;
      ExecutorService pool = Executors.newFixedThreadPool(instances);
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Table>> tables = new ArrayList<>();
      for (int i = 0; i < instances; i++) {
        TableManager own =
            new TableManager(closing.add(CatalogLoader.load("rest", properties(server))));
        tables.add(pool.submit(() -> {
          start.await();
          return own.ensure(ID, ROW, List.of("id"), "f1");
        }));
      }
      start.countDown();
      for (Future<Table> table : tables) {
        assertThat(table.get(120, TimeUnit.SECONDS).schema().identifierFieldNames())
            .containsExactly("id");
      }
      pool.shutdown();
      Table created = warehouse.catalog().loadTable(ID);
      assertThat(TableManager.isManaged(created)).isTrue();
      assertThat(created.refs()).containsOnlyKeys(Branches.MAIN, Branches.REALTIME);
    }
  }

  /** Every method of Iceberg's client is the wrapper's own, so none falls back to a default. */
  @Test
  void theClientOverridesEveryMethodOfIcebergsRestClient() {
    for (Method m : RESTClient.class.getMethods()) {
      if (Modifier.isStatic(m.getModifiers())) {
        continue;
      }
      assertThatCode(
              () -> RestCatalogClient.class.getDeclaredMethod(m.getName(), m.getParameterTypes()))
          .as("RestCatalogClient declares %s", m)
          .doesNotThrowAnyException();
    }
  }

  /** {@code type=rest}, or Iceberg's REST catalog by class, loads the pipeline's; an explicit other class is kept. */
  @Test
  void restByTypeOrByIcebergsClassLoadsThePipelinesRestCatalog() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse();
        RestCatalogServer server = RestCatalogServer.serving(warehouse.catalog())) {
      Map<String, String> byClass = properties(server);
      byClass.remove("type");
      byClass.put("catalog-impl", RESTCatalog.class.getName());
      assertThat(closing.add(CatalogLoader.load("rest", byClass))).isInstanceOf(RestCatalog.class);
      Map<String, String> upper = properties(server);
      upper.put("type", "REST");
      assertThat(closing.add(CatalogLoader.load("rest", upper))).isInstanceOf(RestCatalog.class);
    }
  }

  @AfterEach
  void close() throws Exception {
    closing.close();
  }

  /** Catalogs a test opened, closed after it whatever it asserted. */
  private static final class Closing implements AutoCloseable {
    private final List<Catalog> catalogs = new ArrayList<>();

    Catalog add(Catalog catalog) {
      catalogs.add(catalog);
      return catalog;
    }

    @Override
    public void close() throws Exception {
      for (Catalog c : catalogs) {
        ((AutoCloseable) c).close();
      }
    }
  }

  /** Ingest's committer lands a commit on realtime between the client's read and its commit. */
  private static void realtimeCommitMeanwhile(TemporaryWarehouse warehouse) {
    warehouse
        .catalog()
        .loadTable(ID)
        .newFastAppend()
        .toBranch(Branches.REALTIME)
        .commit();
  }

  /**
   * A catalog that takes a commit and never answers (a hung server, a connection a load balancer
   * dropped without a word) does not hold the committing thread, and the transaction it has open,
   * for minutes: the pipeline's REST client gives up on the reply after 30 s (Iceberg's HTTP
   * library, left to itself, waits 3 minutes: three times the transaction timeout).
   */
  @Test
  void aCommitTheCatalogNeverAnswersFailsWithinTheTransactionTimeout() throws Exception {
    CountDownLatch released = new CountDownLatch(1);
    ExecutorService committer = Executors.newSingleThreadExecutor();
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse();
        RestCatalogServer server =
            RestCatalogServer.servingSequenceConflictsAsBadRequests(warehouse.catalog())) {
      Catalog catalog = closing.add(CatalogLoader.load("rest", properties(server)));
      new TableManager(catalog).ensure(ID, ROW, List.of("id"), "f1");
      Table table = catalog.loadTable(ID);
      server.beforeNextCommit(() -> {
        try {
          released.await(10, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });

      Future<?> commit =
          committer.submit(() -> table.newFastAppend().toBranch(Branches.MAIN).commit());

      assertThatThrownBy(() -> commit.get(2, TimeUnit.MINUTES))
          .as("the commit the server never answered, within 2 minutes")
          .isInstanceOf(ExecutionException.class)
          .hasStackTraceContaining("Read timed out");
    } finally {
      released.countDown();
      committer.shutdownNow();
    }
  }

  private static Map<String, String> properties(RestCatalogServer server) {
    return new HashMap<>(server.catalogProperties(LocalFileIO.class.getName()));
  }
}
