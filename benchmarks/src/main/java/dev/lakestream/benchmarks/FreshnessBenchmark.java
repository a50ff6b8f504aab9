package dev.lakestream.benchmarks;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.LocalFileIO;
import dev.lakestream.launcher.DemoCommand;
import dev.lakestream.launcher.Freshness.Window;
import dev.lakestream.testkit.ObjectStoreServer;
import dev.lakestream.testkit.RestCatalogServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;

/**
 * Benchmark 1, freshness: the embedded full stack (PostgreSQL, Kafka, Connect with Debezium, ingest
 * and sync in one JVM, as the demo) changed at 1k, 5k and 10k changes/s for 60 s each after a
 * warm-up of 60 s ({@code -Dbench.warmup=SECONDS}); per source change, its commit time to visible on
 * {@code realtime} and on {@code main}, over the whole run and after the warm-up, and over the run
 * in windows of 5 s. {@code -Dbench.set="KEY=VALUE;..."} adds settings to both apps ({@link
 * BenchSettings}); {@code -Dbench.catalog=rest} runs them through a REST catalog over HTTP in this JVM
 * ({@link RestCatalogServer}) on the warehouse's JDBC catalog, instead of on that catalog directly;
 * {@code -Dbench.store=s3} keeps the table's files on an S3-compatible server ({@link
 * ObjectStoreServer}, through Iceberg's {@code S3FileIO}) instead of the local disk, and prints the
 * requests it handled by kind.
 */
public final class FreshnessBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx8g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.FreshnessBenchmark"
      + " [-Dbench.warmup=SECONDS] [-Dbench.set=\"KEY=VALUE;...\"] [-Dbench.catalog=rest] [-Dbench.store=s3] [-Dexec.args=\"SECONDS RATE...\"]";

  private FreshnessBenchmark() {}

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 60;
    int warmUp = Integer.getInteger("bench.warmup", 60);
    int[] rates = args.length > 1
        ? Arrays.stream(args, 1, args.length).mapToInt(Integer::parseInt).toArray()
        : new int[] {1_000, 5_000, 10_000};
    Report report = new Report(
        "1. Freshness: source commit to visible on realtime and on main",
        COMMAND,
        "target changes/s",
        "sustained changes/s",
        "changes",
        "in Kafka (Debezium) p50 / p95 / p99 (s)",
        "realtime p50 / p95 / p99 (s)",
        "main p50 / p95 / p99 (s)",
        "after the warm-up: changes, in Kafka p50 / p95 / p99 (s)",
        "after the warm-up: main p50 / p95 / p99 (s)",
        "rows PostgreSQL / main");
    Report byHop = new Report(
        "1b. Freshness by hop: where a change's time goes",
        COMMAND,
        "target changes/s",
        "hop",
        "p50 / p95 / p99 (ms)",
        "from / to");
    Report overTime = new Report(
        "1c. Freshness on main over the run: where the tail comes from",
        COMMAND,
        "target changes/s",
        "source commit in (s from the first change)",
        "changes",
        "p50 / p99 / max (s)");
    for (int rate : rates) {
      Path warehouse = Files.createTempDirectory("freshness-" + rate + "-");
      System.out.printf(
          "running the full stack at %,d changes/s for %d s after %d s of warm-up, extra settings %s"
              + " (warehouse %s)%n",
          rate, seconds, warmUp, BenchSettings.given(), warehouse);
      Map<String, String> settings = new LinkedHashMap<>(BenchSettings.given());
      RestCatalogServer rest = null;
      Catalog backing = null;
      ObjectStoreServer store = null;
      // The JDBC catalog in the warehouse folder; its files there, or in the object store's bucket.
      Map<String, String> catalog = new LinkedHashMap<>();
      if ("s3".equals(System.getProperty("bench.store"))) {
        store = ObjectStoreServer.start();
        catalog.putAll(
            store.jdbcCatalogProperties(warehouse.resolve("catalog.db"), "freshness-" + rate));
        // As the embedded default keeps them (CatalogLoader.withEmbeddedDefault).
        catalog.put("table-default.write.metadata.delete-after-commit.enabled", "true");
        catalog.put("table-default.write.metadata.previous-versions-max", "50");
        catalog.forEach((k, v) -> settings.put(PipelineConfig.CATALOG_PREFIX + k, v));
      } else {
        catalog.put("warehouse", warehouse.toString());
      }
      if ("rest".equals(System.getProperty("bench.catalog"))) {
        // The apps through a REST catalog over HTTP, in this JVM, on the warehouse's JDBC catalog.
        backing = CatalogLoader.load("backing", catalog);
        rest = RestCatalogServer.serving(backing);
        Map<String, String> client = new LinkedHashMap<>(rest.catalogProperties(
            store != null ? "org.apache.iceberg.aws.s3.S3FileIO" : LocalFileIO.class.getName()));
        if (store != null) {
          client.putAll(store.fileIoProperties());
        }
        settings.keySet().removeIf(k -> k.startsWith(PipelineConfig.CATALOG_PREFIX));
        client.forEach((k, v) -> settings.put(PipelineConfig.CATALOG_PREFIX + k, v));
      }
      DemoCommand.Result r;
      try {
        r = DemoCommand.measure(warmUp, seconds, rate, settings, warehouse, System.out);
        if (store != null) {
          Map<String, Integer> requests = store.requests();
          int total = requests.values().stream().mapToInt(Integer::intValue).sum();
          System.out.printf(
              "object store: %,d requests %s, %.2f per change (%,d changes)%n",
              total,
              requests,
              total / (double) r.mainFreshnessMs().size(),
              r.mainFreshnessMs().size());
        }
      } finally {
        if (store != null) {
          store.close();
        }
        if (rest != null) {
          System.out.printf(
              "REST catalog: %,d commits received, %,d refused as conflicts (HTTP 409)%n",
              rest.commits(), rest.conflicts());
          rest.close();
          ((AutoCloseable) backing).close();
        }
      }
      report.row(
          String.format("%,d", rate),
          String.format("%,.0f", r.changesPerSecond()),
          String.format("%,d", r.mainFreshnessMs().size()),
          percentiles(r.kafkaFreshnessMs()),
          percentiles(r.realtimeFreshnessMs()),
          percentiles(r.mainFreshnessMs()),
          String.format("%,d, ", r.kafkaAfterWarmUpMs().size())
              + percentiles(r.kafkaAfterWarmUpMs()),
          percentiles(r.mainAfterWarmUpMs()),
          String.format("%,d / %,d", r.sourceRows(), r.mainRows()));
      for (Window w : r.mainOverTime()) {
        overTime.row(
            String.format("%,d", rate),
            String.format("%d-%d", w.fromMs() / 1000, w.untilMs() / 1000),
            String.format("%,d", w.changes()),
            String.format(
                "%.2f / %.2f / %.2f", w.p50Ms() / 1000.0, w.p99Ms() / 1000.0, w.maxMs() / 1000.0));
      }
      r.hopsMs()
          .forEach((hop, ms) -> byHop.row(
              String.format("%,d", rate),
              hop.tag(),
              String.format("%,.0f / %,.0f / %,.0f", ms[0], ms[1], ms[2]),
              hop.description()));
    }
    report.note(
        "Each run changes the table for " + warmUp + " s of warm-up and then " + seconds
            + " s more; the"
            + " whole-run columns cover every change from the first, \"after the warm-up\" the changes whose"
            + " source commit is " + warmUp + " s or more after the first change. "
            + "Freshness is per change: its source commit time (source.ts_ms) to its record's timestamp in Kafka"
            + " (Debezium's and Connect's part, the floor under the rest), and to the commit of the first realtime"
            + " (ingest) or main (sync) snapshot that holds its source offset (snapshot reads left out). The broker, Connect, both apps and the"
            + " workload's writers run in one JVM, PostgreSQL beside it, all on the same cores. The demo's settings: ingest flushes"
            + " every 500 ms, sync's backstop 2 s, maintenance checked every 10 s, 2 stream threads each.");
    byHop.note(
        "From the apps' own meters (lakestream.hop.latency, tagged hop), at the end of each run: Micrometer's"
            + " sliding window of the last minutes. source-to-kafka is Debezium's own latency (source commit to its"
            + " record's timestamp in Kafka); the hops after it are the pipeline's. buffered and flush-to-realtime are"
            + " per batch (its oldest change), the sync hops per cycle (realtime-to-planned from the newest realtime"
            + " commit the cycle covers).");
    overTime.note(
        "The changes of each run grouped by their source commit time into windows of 5 s from the run's first"
            + " change, with the freshness to main of each window's changes: a tail in the run's percentiles shows"
            + " here as the windows it comes from.");
    report.publish();
    byHop.publish();
    overTime.publish();
    System.exit(0);
  }

  private static String percentiles(List<Long> sorted) {
    if (sorted.isEmpty()) {
      return "-";
    }
    return String.format("%.2f / %.2f / %.2f", at(sorted, 50), at(sorted, 95), at(sorted, 99));
  }

  private static double at(List<Long> sorted, double p) {
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.floor(sorted.size() * p / 100.0)))
        / 1000.0;
  }
}
