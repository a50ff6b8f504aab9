package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/**
 * The ingest and sync apps, each in a JVM of its own, killed abruptly (SIGKILL) at random moments
 * of a PostgreSQL workload flowing through Debezium, and restarted: at the end main equals {@code
 * SELECT *} (no row lost, none duplicated) and the invariants hold.
 */
class PostgresCrashTest {

  private static final int KILLS_EACH = 3;

  @Test
  void killedAndRestartedAppsLoseAndDuplicateNothing() throws Exception {
    Random random = new Random(7);
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      InventoryDatabase db = new InventoryDatabase(postgres::connect, 43);
      db.create(300);
      PipelineConfig shared =
          PostgresEndToEndTest.shared(kafka, warehouse).with(PipelineConfig.METRICS_PORT, "-1");
      Path logs = Files.createTempDirectory("apps-");
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          ChildApp ingest = new ChildApp(
              "ingest", PostgresEndToEndTest.app(shared, "ingest"), logs.resolve("ingest.log"));
          ChildApp sync = new ChildApp(
              "sync", PostgresEndToEndTest.app(shared, "sync"), logs.resolve("sync.log"))) {
        ingest.start();
        sync.start();
        PostgresEndToEndTest.registerConnector(connect, postgres);
        Catalog reader = warehouse.catalog();

        AtomicBoolean stop = new AtomicBoolean();
        List<Long> txids = new ArrayList<>();
        CompletableFuture<Integer> workload = workload(db, txids, stop);
        for (int i = 0; i < 2 * KILLS_EACH; i++) {
          Thread.sleep(3_000 + random.nextInt(5_000));
          ChildApp victim = i % 2 == 0 ? ingest : sync;
          victim.kill();
          Thread.sleep(random.nextInt(2_000));
          victim.start();
        }
        Thread.sleep(3_000);
        stop.set(true);
        int changes = workload.get(60, TimeUnit.SECONDS);

        Eventually.noDifference(Duration.ofSeconds(240), () -> db.mainDiffers(reader));
        PostgresEndToEndTest.assertInvariants(reader);
        System.out.printf(
            "Crash test: %d changes in %d transactions; ingest started %d times, sync %d times; logs in %s%n",
            changes, txids.size(), ingest.starts(), sync.starts(), logs);
        assertThat(ingest.starts()).isEqualTo(1 + KILLS_EACH);
        assertThat(sync.starts()).isEqualTo(1 + KILLS_EACH);
        assertThat(changes).isGreaterThan(3_000);
      }
    }
  }

  /**
   * Two instances of each app with one application id, as a user scales out; one of each is
   * killed (SIGKILL) mid-workload and not restarted: the survivors take their tasks over.
   */
  @Test
  void survivorsOfTwoInstancesOfEachAppTakeOverWhenOneOfEachIsKilled() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      InventoryDatabase db = new InventoryDatabase(postgres::connect, 44);
      db.create(300);
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse)
          .with(PipelineConfig.METRICS_PORT, "-1")
          .with(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "2")
          // A killed instance's open transactions hold back what the survivors read until they
          // time out (a new owner has a transactional id of its own): a third of the apps'
          // default, still twice ingest's flush round budget.
          .with(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), "20000");
      Path logs = Files.createTempDirectory("apps-");
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          ChildApp ingest1 = new ChildApp(
              "ingest", PostgresEndToEndTest.app(shared, "ingest"), logs.resolve("ingest-1.log"));
          ChildApp ingest2 = new ChildApp(
              "ingest", PostgresEndToEndTest.app(shared, "ingest"), logs.resolve("ingest-2.log"));
          ChildApp sync1 = new ChildApp(
              "sync", PostgresEndToEndTest.app(shared, "sync"), logs.resolve("sync-1.log"));
          ChildApp sync2 = new ChildApp(
              "sync", PostgresEndToEndTest.app(shared, "sync"), logs.resolve("sync-2.log"))) {
        ingest1.start();
        ingest2.start();
        sync1.start();
        sync2.start();
        PostgresEndToEndTest.registerConnector(connect, postgres);
        Catalog reader = warehouse.catalog();

        AtomicBoolean stop = new AtomicBoolean();
        List<Long> txids = new ArrayList<>();
        CompletableFuture<Integer> workload = workload(db, txids, stop);
        Eventually.until(
            Duration.ofSeconds(180),
            "both tables on main",
            () -> reader.tableExists(TableIdentifier.of("inventory", "orders"))
                && reader.tableExists(TableIdentifier.of("inventory", "customers")));
        Thread.sleep(8_000);
        ingest2.kill();
        Thread.sleep(3_000);
        sync1.kill();
        Thread.sleep(12_000);
        stop.set(true);
        int changes = workload.get(60, TimeUnit.SECONDS);

        Eventually.noDifference(Duration.ofSeconds(300), () -> db.mainDiffers(reader));
        PostgresEndToEndTest.assertInvariants(reader);
        assertThat(ingest1.alive()).as("the surviving ingest").isTrue();
        assertThat(sync2.alive()).as("the surviving sync").isTrue();
        System.out.printf(
            "Scale-out crash test: %d changes in %d transactions; one ingest and one sync of two killed;"
                + " logs in %s%n",
            changes, txids.size(), logs);
        assertThat(changes).isGreaterThan(1_000);
      }
    }
  }

  /** The inventory workload on a thread of its own, until {@code stop}; the number of changes it made. */
  private static CompletableFuture<Integer> workload(
      InventoryDatabase db, List<Long> txids, AtomicBoolean stop) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return db.runWorkload(Integer.MAX_VALUE, 10, txids, stop::get);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }
}
