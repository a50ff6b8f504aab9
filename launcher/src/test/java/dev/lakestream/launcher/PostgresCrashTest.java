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
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse).with(PipelineConfig.METRICS_PORT, "-1");
      Path logs = Files.createTempDirectory("apps-");
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          ChildApp ingest = new ChildApp("ingest", PostgresEndToEndTest.app(shared, "ingest"), logs.resolve("ingest.log"));
          ChildApp sync = new ChildApp("sync", PostgresEndToEndTest.app(shared, "sync"), logs.resolve("sync.log"))) {
        ingest.start();
        sync.start();
        PostgresEndToEndTest.registerConnector(connect, postgres);
        Catalog reader = warehouse.catalog();

        AtomicBoolean stop = new AtomicBoolean();
        List<Long> txids = new ArrayList<>();
        CompletableFuture<Integer> workload = CompletableFuture.supplyAsync(() -> {
          try {
            return db.runWorkload(Integer.MAX_VALUE, 10, txids, stop::get);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
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
        System.out.printf("Crash test: %d changes in %d transactions; ingest started %d times, sync %d times; logs in %s%n",
            changes, txids.size(), ingest.starts(), sync.starts(), logs);
        assertThat(ingest.starts()).isEqualTo(1 + KILLS_EACH);
        assertThat(sync.starts()).isEqualTo(1 + KILLS_EACH);
        assertThat(changes).isGreaterThan(3_000);
      }
    }
  }
}
