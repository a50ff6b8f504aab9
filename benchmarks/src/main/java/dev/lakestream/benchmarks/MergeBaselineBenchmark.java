package dev.lakestream.benchmarks;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.launcher.PipelineDriver;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * Benchmark 5, the common alternative: change batches appended to a staging table and applied with
 * Spark {@code MERGE INTO} on a v3 merge-on-read table (which writes deletion vectors), against this
 * project's ingest commit and sync cycle, on the same initial table and the same batches, in one run.
 */
public final class MergeBaselineBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx12g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.MergeBaselineBenchmark"
      + " [-Dexec.args=\"ROWS BATCHES BATCH_CHANGES\"]";

  private MergeBaselineBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int batches = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    int batchChanges = args.length > 2 ? Integer.parseInt(args[2]) : 10_000;
    Path dir = Files.createTempDirectory("merge-baseline-");
    ObjectMapper json = new ObjectMapper();
    TestTable table = TestTable.plain("bench", "customers");
    Report report = new Report(
        "5. Baseline: Spark MERGE INTO (merge-on-read, v3) against ingest + sync",
        COMMAND,
        "batch",
        "changes",
        "Spark append + MERGE ms",
        "Spark files written (DVs)",
        "lakestream ingest + sync ms",
        "lakestream files written (DVs)",
        "Spark / lakestream");
    try (PipelineDriver pipeline =
        new PipelineDriver(List.of(table.topic()), Map.of(MaintenanceConfig.ENABLED, "false"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 9);
      long[] seq = {0};
      try (BufferedWriter w =
          Files.newBufferedWriter(dir.resolve("initial.jsonl"), StandardCharsets.UTF_8)) {
        for (int loaded = 0; loaded < rows; loaded += 100_000) {
          List<Change> load = gen.snapshot(Math.min(100_000, rows - loaded));
          write(w, json, load, seq);
          pipeline.send(load);
          pipeline.ingestCommit();
        }
      }
      pipeline.sync();
      List<long[]> ours = new ArrayList<>();
      for (int b = 1; b <= batches; b++) {
        List<Change> batch = gen.next(batchChanges);
        try (BufferedWriter w = Files.newBufferedWriter(
            dir.resolve(String.format("batch-%04d.jsonl", b)), StandardCharsets.UTF_8)) {
          write(w, json, batch, seq);
        }
        pipeline.send(batch);
        long s = System.nanoTime();
        pipeline.ingestCommit();
        if (pipeline.sync().isEmpty()) {
          throw new IllegalStateException("sync committed nothing for batch " + b);
        }
        long ms = (System.nanoTime() - s) / 1_000_000;
        Table t = pipeline.table(table);
        // realtime's new data and delete files, and the Puffin files of main's new deletion vectors
        // (main's data files are realtime's)
        long files = added(t.snapshot(Branches.REALTIME), "added-data-files")
            + added(t.snapshot(Branches.REALTIME), "added-delete-files")
            + added(t.snapshot(Branches.MAIN), SummaryKeys.DV_FILES_ADDED);
        long dvs = added(t.snapshot(Branches.MAIN), "added-delete-files");
        ours.add(new long[] {batch.stream().filter(c -> !c.isTombstone()).count(), ms, files, dvs});
        System.out.printf("  lakestream batch %d: %,d ms, %d files, %d DVs%n", b, ms, files, dvs);
      }
      // Streamed, so that a table of millions of rows is not held in memory twice.
      Fingerprint.check(pipeline, table);

      System.out.println("the same batches with Spark MERGE INTO");
      List<String[]> spark = SparkJvm.run(
          "4g", "merge", dir.toString(), pipeline.warehouseDir().toString(), "bench.customers");
      long sparkTotal = 0;
      long oursTotal = 0;
      long sparkFiles = 0;
      long oursFiles = 0;
      long sparkDvs = 0;
      long oursDvs = 0;
      for (String[] r : spark) {
        if (r[0].equals("batch")) {
          int b = Integer.parseInt(r[1]);
          long ms = Long.parseLong(r[2]) + Long.parseLong(r[3]);
          long dvs = Long.parseLong(r[5]);
          long files = Long.parseLong(r[7]);
          long[] o = ours.get(b - 1);
          // Batch 1 warms both sides up (class loading, JIT, Spark's first job): not in the totals.
          boolean warmUp = b == 1 && batches > 1;
          if (!warmUp) {
            sparkTotal += ms;
            oursTotal += o[1];
            sparkFiles += files;
            oursFiles += o[2];
            sparkDvs += dvs;
            oursDvs += o[3];
          }
          report.row(
              warmUp ? "1 (warm-up)" : b,
              String.format("%,d", o[0]),
              String.format("%,d (%,d + %,d)", ms, Long.parseLong(r[2]), Long.parseLong(r[3])),
              files + " (" + dvs + ")",
              String.format("%,d", o[1]),
              o[2] + " (" + o[3] + ")",
              String.format("%.1f×", ms / (double) Math.max(1, o[1])));
        } else if (r[0].equals("compare")) {
          if (!r[2].equals("0") || !r[3].equals("0")) {
            throw new IllegalStateException("Spark's MERGE result and main differ: " + r[2]
                + " rows missing, " + r[3] + " extra");
          }
          report.note("Spark's merged table and lakestream's `main` hold the same "
              + String.format("%,d", Long.parseLong(r[1]))
              + " rows at the end (EXCEPT ALL both ways, in Spark).");
        }
      }
      report.row(
          batches > 1 ? "total of 2-" + batches : "total",
          "",
          String.format("%,d", sparkTotal),
          sparkFiles + " (" + sparkDvs + ")",
          String.format("%,d", oursTotal),
          oursFiles + " (" + oursDvs + ")",
          String.format("%.1f×", sparkTotal / (double) Math.max(1, oursTotal)));
    }
    report.note("A " + String.format("%,d", rows)
        + "-row table (`TestTable.plain`: id key, name, score, active), then "
        + batches + " batches of " + String.format("%,d", batchChanges)
        + " changes (inserts, updates, deletes, key updates,"
        + " re-inserts). Spark 4.1.3 local[2] in its own JVM: each batch appended to an Iceberg staging table, then one"
        + " `MERGE INTO` of the newest change per key (v3, `write.merge.mode=merge-on-read`, so it writes deletion"
        + " vectors); files written = the distinct files its snapshot added (data files and Puffin files), and in"
        + " brackets the deletion vectors in them. lakestream: ingest's flush and realtime"
        + " commit (Parquet data file + equality-delete file) plus the sync cycle that converts the deletes to"
        + " deletion vectors and commits main; both apps under TopologyTestDriver on the same local disk, so no broker"
        + " time is counted on either side; files written = realtime's data and delete files + the Puffin files of"
        + " main's deletion vectors (main takes realtime's data files by reference), and in brackets the deletion"
        + " vectors. Neither side compacts. Batch 1 warms both sides up (class loading, JIT, Spark's first"
        + " jobs) and is left out of the totals.");
    report.publish();
    System.exit(0);
  }

  private static long added(Snapshot s, String summaryKey) {
    return Long.parseLong(s.summary().getOrDefault(summaryKey, "0"));
  }

  /** The batch as Spark reads it: op (c, u, d, r), a global order, the key and the row after the change. */
  private static void write(BufferedWriter w, ObjectMapper json, List<Change> changes, long[] seq)
      throws Exception {
    for (Change c : changes) {
      if (c.isTombstone()) {
        continue;
      }
      ObjectNode row = json.createObjectNode();
      row.put("op", String.valueOf(c.op()));
      row.put("seq", ++seq[0]);
      row.put("id", (Long) c.key().get(0));
      if (c.after() != null) {
        row.putPOJO("name", c.after().get("name"));
        row.putPOJO("score", c.after().get("score"));
        row.putPOJO("active", c.after().get("active"));
      }
      w.write(json.writeValueAsString(row));
      w.newLine();
    }
  }
}
