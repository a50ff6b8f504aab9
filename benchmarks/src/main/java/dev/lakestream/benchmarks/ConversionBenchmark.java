package dev.lakestream.benchmarks;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.launcher.PipelineDriver;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;

/**
 * Benchmark 3, conversion cost against table size: a table of one data file per 100,000 rows on
 * realtime, mirrored to main by sync ({@link BulkLoad}), then batches
 * of updates to 1,000 and 10,000 distinct keys, spread over the whole table or clustered in one key
 * range; per batch, the sync cycle that converts its equality deletes: time, data files read, key
 * bytes read, rows scanned. Sync runs under a TopologyTestDriver on the local warehouse, so the time
 * is sync's own work without broker round trips.
 */
public final class ConversionBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx16g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.ConversionBenchmark"
      + " [-Dexec.args=\"ROWS...\"]";

  private static final int FILE_ROWS = 100_000;
  private static final int ROUNDS = 3;

  private ConversionBenchmark() {}

  public static void main(String[] args) throws Exception {
    int[] sizes = args.length > 0
        ? Arrays.stream(args).mapToInt(Integer::parseInt).toArray()
        : new int[] {1_000_000, 10_000_000};
    Report report = new Report(
        "3. Conversion cost against table size",
        COMMAND,
        "table rows",
        "data files on main",
        "changed keys",
        "keys",
        "resolver",
        "cycle ms (median of " + ROUNDS + ")",
        "files read",
        "key bytes read",
        "rows scanned");
    for (int size : sizes) {
      for (String resolver : resolvers()) {
        run(size, resolver, report);
      }
    }
    report.note(
        "Updates only, so every changed key has exactly one row on main to delete. \"files read\" and"
            + " \"key bytes read\" are sync's own counters for the cycle (lakestream_sync_convert_files_scanned and"
            + " _bytes_read, plus lakestream_sync_index_files_read and _bytes_read): the scan resolver reads the key column"
            + " of every data file a delete may apply to; the index resolver reads the key column of the cycle's new data"
            + " file (to index it) and of its delete file, and looks the keys up in RocksDB. Bytes are the compressed"
            + " size of the key column chunks. \"rows scanned\" counts rows of existing data files read by the scan. The"
            + " table is `TestTable.plain` (id bigint key, name, score, active); the index has 4 partitions, all in the"
            + " one test-driver task here.");
    report.publish();
    System.exit(0);
  }

  static List<String> resolvers() {
    return List.of("scan", "index");
  }

  /** Files whose key columns the cycle read: data files scanned, plus the index's reads of new files and deletes. */
  private static double filesRead(PipelineDriver p) {
    return p.syncCounter("lakestream.sync.convert.files.scanned")
        + p.syncCounter("lakestream.sync.index.files.read");
  }

  private static double bytesRead(PipelineDriver p) {
    return p.syncCounter("lakestream.sync.convert.bytes.read")
        + p.syncCounter("lakestream.sync.index.bytes.read");
  }

  private static void run(int size, String resolver, Report report) throws Exception {
    TestTable table = TestTable.plain("bench", "customers");
    Map<String, String> settings = new HashMap<>();
    settings.put(MaintenanceConfig.ENABLED, "false");
    settings.put(SyncConfig.RESOLVER, resolver);
    settings.put(SyncConfig.INDEX_PARTITIONS, "4");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), settings)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 3);
      long started = System.nanoTime();
      BulkLoad.load(pipeline, table, gen, size, FILE_ROWS);
      Table t = pipeline.table(table);
      int files = BranchFiles.liveDataFiles(t, t.snapshot(Branches.MAIN)).size();
      System.out.printf(
          "loaded %,d rows in %,d data files on main in %.0f s (resolver %s)%n",
          size, files, (System.nanoTime() - started) / 1e9, resolver);
      for (int keys : new int[] {1_000, 10_000}) {
        for (boolean clustered : new boolean[] {false, true}) {
          List<Long> times = new ArrayList<>();
          double read = 0;
          double bytesRead = 0;
          double rowsScanned = 0;
          for (int round = 0; round < ROUNDS; round++) {
            pipeline.send(gen.updates(keys, clustered));
            pipeline.ingestCommit();
            double f0 = filesRead(pipeline);
            double b0 = bytesRead(pipeline);
            double r0 = pipeline.syncCounter("lakestream.sync.convert.rows.scanned");
            long s = System.nanoTime();
            if (pipeline.sync().isEmpty()) {
              throw new IllegalStateException("the sync cycle committed nothing to main");
            }
            times.add((System.nanoTime() - s) / 1_000_000);
            read = filesRead(pipeline) - f0;
            bytesRead = bytesRead(pipeline) - b0;
            rowsScanned = pipeline.syncCounter("lakestream.sync.convert.rows.scanned") - r0;
          }
          Fingerprint.check(pipeline, table);
          Collections.sort(times);
          report.row(
              String.format("%,d", size),
              files,
              String.format("%,d", keys),
              clustered ? "clustered" : "spread",
              resolver,
              String.format("%,d", times.get(ROUNDS / 2)),
              String.format("%,.0f", read),
              String.format("%,.1f MB", bytesRead / 1e6),
              String.format("%,.0f", rowsScanned));
        }
      }
    }
  }
}
