package dev.lakestream.benchmarks;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.embedded.Folders;
import dev.lakestream.sync.maintenance.Maintenance;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.ObjectStoreServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The maintenance of several tables on one sync instance: each table's realtime holds a backlog of
 * ingest-like batches (a data file and an equality-delete file of the same keys), every table is
 * due at once, and the instance's maintenance runs them on {@code sync.maintenance.threads}
 * threads. Reports how long the last table waited for a thread and how long until every table was
 * compacted, per thread count, on tables built the same way. {@code -Dbench.store=s3} keeps the
 * tables on the tests' S3-compatible server.
 */
public final class MaintenanceThreadsBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx8g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.MaintenanceThreadsBenchmark"
      + " [-Dbench.store=s3] [-Dexec.args=\"TABLES BATCHES KEYS_PER_BATCH THREADS...\"]";

  private MaintenanceThreadsBenchmark() {}

  public static void main(String[] args) throws Exception {
    int tables = args.length > 0 ? Integer.parseInt(args[0]) : 4;
    int batches = args.length > 1 ? Integer.parseInt(args[1]) : 60;
    int keys = args.length > 2 ? Integer.parseInt(args[2]) : 1_000;
    List<Integer> threadCounts = new ArrayList<>();
    for (int i = 3; i < args.length; i++) {
      threadCounts.add(Integer.parseInt(args[i]));
    }
    if (threadCounts.isEmpty()) {
      threadCounts = List.of(1, 2, 4, 1);
    }
    boolean s3 = "s3".equals(System.getProperty("bench.store"));
    Report report = new Report(
        "10. Maintenance of several tables on one sync instance",
        COMMAND,
        "threads",
        "store",
        "tables x small files",
        "compactions (files in)",
        "all compacted after (ms)",
        "wait for a thread: mean / max (ms)",
        "compaction: mean / max (ms)");
    // One unmeasured run of a small table first, so that the first measured run does not pay for
    // the JIT compiler's warm-up alone.
    measure(s3, 0, 1, Math.min(batches, 20), keys, 1);
    int run = 0;
    for (int threads : threadCounts) {
      run++;
      report.row(measure(s3, run, tables, batches, keys, threads));
    }
    report.note("Each run builds its tables anew, the same way (the same seeds), then asks for a"
        + " check of every table at once; the wait is each run's time from its check to a free"
        + " thread (`lakestream_maintenance_wait_seconds`).");
    report.publish();
  }

  /** Builds {@code tables} tables anew, runs their maintenance on {@code threads}; the row. */
  private static Object[] measure(
      boolean s3, int run, int tables, int batches, int keys, int threads) throws Exception {
    Path dir = Files.createTempDirectory("maintenance-bench");
    ObjectStoreServer store = s3 ? ObjectStoreServer.start() : null;
    Catalog catalog = null;
    try {
      Map<String, String> props = new LinkedHashMap<>();
      if (store != null) {
        props.putAll(store.jdbcCatalogProperties(dir.resolve("catalog.db"), "run-" + run));
      } else {
        props.put("warehouse", dir.toString());
      }
      catalog = CatalogLoader.load("bench", props);
      List<TableIdentifier> ids = new ArrayList<>();
      for (int t = 0; t < tables; t++) {
        ids.add(backlog(catalog, TableIdentifier.of("bench", "t" + t), batches, keys, t));
      }
      System.out.printf(
          "run %d: %d tables of %d batches built, maintenance on %d threads%n",
          run, tables, batches, threads);
      MeterRegistry meters = new SimpleMeterRegistry();
      PipelineConfig config = new PipelineConfig(Map.of(
          MaintenanceConfig.THREADS,
          Integer.toString(threads),
          MaintenanceConfig.CHECK_INTERVAL_MS,
          "1"));
      long start = System.nanoTime();
      try (Maintenance maintenance =
          new Maintenance(MaintenanceConfig.from(config), catalog, meters, null)) {
        long now = System.currentTimeMillis();
        ids.forEach(id -> maintenance.check(id.toString(), now));
        while (done(meters) < tables) {
          if (meters.counter("lakestream.maintenance.failures").count() > 0) {
            throw new IllegalStateException("a maintenance run failed; see the log");
          }
          Thread.sleep(20);
        }
      }
      double allMs = (System.nanoTime() - start) / 1e6;
      Timer waited = meters.find("lakestream.maintenance.wait").timer();
      Timer compaction = meters
          .find("lakestream.maintenance.duration")
          .tag("operation", "compaction")
          .timer();
      double compactions = meters.counter("lakestream.maintenance.compactions").count();
      if (compactions != tables) {
        throw new IllegalStateException(
            compactions + " compactions of " + tables + " tables; each should have compacted");
      }
      for (TableIdentifier id : ids) {
        Table table = catalog.loadTable(id);
        long rows =
            Long.parseLong(table.snapshot(Branches.REALTIME).summary().get("total-records"));
        System.out.printf(
            "  %s: realtime holds %,d rows in its files after the compaction%n", id, rows);
      }
      return new Object[] {
        threads,
        s3 ? "S3 (the tests' server)" : "local disk",
        tables + " x " + batches,
        String.format(
            "%.0f (%,.0f)",
            compactions,
            meters.counter("lakestream.maintenance.compaction.files.in").count()),
        Report.ms(allMs),
        Report.ms(waited.mean(TimeUnit.MILLISECONDS)) + " / "
            + Report.ms(waited.max(TimeUnit.MILLISECONDS)),
        Report.ms(compaction.mean(TimeUnit.MILLISECONDS)) + " / "
            + Report.ms(compaction.max(TimeUnit.MILLISECONDS))
      };
    } finally {
      if (catalog instanceof AutoCloseable closeable) {
        closeable.close();
      }
      if (store != null) {
        store.close();
      }
      Folders.delete(dir);
    }
  }

  /** Runs ended. */
  private static double done(MeterRegistry meters) {
    return meters.counter("lakestream.maintenance.runs").count();
  }

  /**
   * A table whose realtime branch holds {@code batches} commits of ingest's shape: a data file of
   * upserted keys and an equality-delete file of the same keys.
   */
  private static TableIdentifier backlog(
      Catalog catalog, TableIdentifier id, int batches, int keys, long seed) throws Exception {
    SupportsNamespaces namespaces = (SupportsNamespaces) catalog;
    Namespace ns = id.namespace();
    if (!namespaces.namespaceExists(ns)) {
      namespaces.createNamespace(ns);
    }
    Table table = catalog
        .buildTable(id, KeyFiles.ID_NAME)
        .withPartitionSpec(PartitionSpec.unpartitioned())
        .withProperty(TableProperties.FORMAT_VERSION, "3")
        .create();
    table.newFastAppend().commit();
    table
        .manageSnapshots()
        .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
        .commit();
    Random random = new Random(seed);
    int keySpace = 20 * keys;
    for (int b = 0; b < batches; b++) {
      List<Object> drawn = new ArrayList<>();
      for (int i = 0; i < keys; i++) {
        drawn.add(random.nextInt(keySpace));
      }
      List<Object> distinct = new ArrayList<>(new LinkedHashSet<>(drawn));
      table
          .newRowDelta()
          .toBranch(Branches.REALTIME)
          .addRows(KeyFiles.data(table, KeyFiles.ID_NAME, distinct))
          .addDeletes(KeyFiles.deletes(table, KeyFiles.ID_NAME, distinct))
          .commit();
    }
    return id;
  }
}
