package dev.lakestream.sync.maintenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.testkit.DelegatingCatalog;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * How the sync app's maintenance shares its threads among tables: a run of one table that takes
 * long holds up the others only when no thread is free, and the time a run waits is measured.
 */
class MaintenanceTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final TableIdentifier SLOW = TableIdentifier.of("t", "slow");
  private static final TableIdentifier OTHER = TableIdentifier.of("t", "other");

  /** A table with main and realtime, as ingest leaves a new one. */
  private static void create(TemporaryWarehouse warehouse, TableIdentifier id) throws Exception {
    Table table = warehouse
        .v3Table(id.namespace().level(0), id.name(), KeyFiles.ID_NAME)
        .withProperty(TableManager.MANAGED, "true")
        .create();
    table
        .newAppend()
        .appendFile(KeyFiles.data(table, KeyFiles.ID_NAME, KeyFiles.ids(0, 10)))
        .commit();
    table
        .manageSnapshots()
        .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
        .commit();
  }

  private static Maintenance maintenance(Catalog catalog, MeterRegistry meters, int threads) {
    PipelineConfig config = new PipelineConfig(Map.of(
        MaintenanceConfig.THREADS,
        Integer.toString(threads),
        MaintenanceConfig.CHECK_INTERVAL_MS,
        "1"));
    return new Maintenance(MaintenanceConfig.from(config), catalog, meters, null);
  }

  /** Runs ended, their tables free to run again. */
  private static double runsDone(MeterRegistry meters) {
    return meters.counter("lakestream.maintenance.runs").count();
  }

  @Test
  void withTwoThreadsAnotherTableRunsWhileOneTableIsHeldUp() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      create(warehouse, SLOW);
      create(warehouse, OTHER);
      HoldingCatalog catalog = new HoldingCatalog(warehouse.catalog(), SLOW);
      MeterRegistry meters = new SimpleMeterRegistry();
      try (Maintenance maintenance = maintenance(catalog, meters, 2)) {
        maintenance.check(SLOW.toString(), 1_000);
        assertThat(catalog.entered.await(WAIT.toSeconds(), TimeUnit.SECONDS))
            .as("the slow table's run started")
            .isTrue();
        maintenance.check(OTHER.toString(), 1_000);
        // The slow table's run cannot end before the release below: this one is the other's.
        Eventually.until(
            WAIT,
            "the other table's run to finish while the slow one is held",
            () -> runsDone(meters) == 1);

        catalog.released.countDown();
        Eventually.until(WAIT, "the slow table's run to finish", () -> runsDone(meters) == 2);
      }
      assertThat(meters.counter("lakestream.maintenance.failures").count()).isZero();
    }
  }

  @Test
  void withOneThreadATableWaitsForTheRunBeforeItAndTheWaitIsMeasured() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      create(warehouse, SLOW);
      create(warehouse, OTHER);
      HoldingCatalog catalog = new HoldingCatalog(warehouse.catalog(), SLOW);
      MeterRegistry meters = new SimpleMeterRegistry();
      long held = 300;
      try (Maintenance maintenance = maintenance(catalog, meters, 1)) {
        maintenance.check(SLOW.toString(), 1_000);
        assertThat(catalog.entered.await(WAIT.toSeconds(), TimeUnit.SECONDS))
            .as("the slow table's run started")
            .isTrue();
        maintenance.check(OTHER.toString(), 1_000);
        Thread.sleep(held);
        assertThat(catalog.loads(OTHER))
            .as("the other table, while the only thread is busy")
            .isZero();

        catalog.released.countDown();
        Eventually.until(WAIT, "both runs to finish", () -> runsDone(meters) == 2);
      }
      Timer waited = meters.find("lakestream.maintenance.wait").timer();
      assertThat(waited.count()).isEqualTo(2);
      assertThat(waited.max(TimeUnit.MILLISECONDS))
          .as("the other table's wait, scheduled before the slow one was held %d ms", held)
          .isGreaterThanOrEqualTo(held);
    }
  }

  @Test
  void aTableNeverHasTwoRunsAtOnceWhateverTheThreads() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      create(warehouse, SLOW);
      HoldingCatalog catalog = new HoldingCatalog(warehouse.catalog(), SLOW);
      MeterRegistry meters = new SimpleMeterRegistry();
      try (Maintenance maintenance = maintenance(catalog, meters, 4)) {
        maintenance.check(SLOW.toString(), 1_000);
        assertThat(catalog.entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        for (long now = 2_000; now < 6_000; now += 1_000) {
          maintenance.check(SLOW.toString(), now); // past the interval, but its run is going
        }
        catalog.released.countDown();
        Eventually.until(WAIT, "the run to finish", () -> runsDone(meters) == 1);
        maintenance.check(SLOW.toString(), 10_000);
        Eventually.until(WAIT, "the next check's run to finish", () -> runsDone(meters) == 2);
      }
      assertThat(catalog.loads(SLOW)).as("runs of the table").isEqualTo(2);
    }
  }

  /**
   * A table of another writer under a name sync knew (made while a cycle of the dropped table was
   * in flight): maintenance does not expire its history or remove its files.
   */
  @Test
  void aTableLakestreamDoesNotManageIsLeftAlone() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table foreign = warehouse.v3Table("t", "foreign", KeyFiles.ID_NAME).create();
      for (int i = 0; i < 3; i++) {
        foreign
            .newAppend()
            .appendFile(KeyFiles.data(foreign, KeyFiles.ID_NAME, KeyFiles.ids(i * 10, i * 10 + 10)))
            .commit();
      }
      TableIdentifier id = TableIdentifier.of("t", "foreign");
      PipelineConfig keepOne = new PipelineConfig(Map.of(
          "sync.maintenance.expire.main.max-snapshot-age-ms",
          "0",
          "sync.maintenance.expire.main.min-snapshots-to-keep",
          "1",
          MaintenanceConfig.ORPHANS_ENABLED,
          "true"));
      try (Maintenance maintenance = new Maintenance(
          MaintenanceConfig.from(keepOne), warehouse.catalog(), new SimpleMeterRegistry(), null)) {
        Maintenance.Report report = maintenance.run(id, System.currentTimeMillis() + 86_400_000L);
        assertThat(report.expiry()).isEmpty();
        assertThat(report.orphans()).isEmpty();
      }
      assertThat(warehouse.catalog().loadTable(id).snapshots()).hasSize(3);
    }
  }

  @Test
  void noThreadsIsRefusedNamingTheSetting() {
    PipelineConfig config = new PipelineConfig(Map.of(MaintenanceConfig.THREADS, "0"));
    assertThatThrownBy(() -> MaintenanceConfig.from(config))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sync.maintenance.threads");
  }

  /**
   * The warehouse's catalog, with the first load of one table held until the test releases it: a
   * run of that table that takes as long as the test likes.
   */
  private static final class HoldingCatalog extends DelegatingCatalog {
    private final TableIdentifier held;
    private final Map<TableIdentifier, AtomicInteger> loads = new ConcurrentHashMap<>();
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch released = new CountDownLatch(1);

    HoldingCatalog(Catalog delegate, TableIdentifier held) {
      super(delegate);
      this.held = held;
    }

    int loads(TableIdentifier id) {
      AtomicInteger n = loads.get(id);
      return n == null ? 0 : n.get();
    }

    @Override
    public Table loadTable(TableIdentifier identifier) {
      int n = loads.computeIfAbsent(identifier, k -> new AtomicInteger()).incrementAndGet();
      if (identifier.equals(held) && n == 1) {
        entered.countDown();
        try {
          if (!released.await(WAIT.toSeconds() * 2, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never released " + held);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      return delegate.loadTable(identifier);
    }
  }
}
