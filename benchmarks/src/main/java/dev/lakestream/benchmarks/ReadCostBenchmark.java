package dev.lakestream.benchmarks;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.launcher.PipelineDriver;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Benchmark 4, read cost: after K change batches, a full scan and a selective query (1% of the key
 * range) of {@code main} (deletion vectors) against {@code realtime} (equality deletes), with
 * Iceberg's generic Java reader and with Spark.
 */
public final class ReadCostBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx12g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.ReadCostBenchmark"
      + " [-Dexec.args=\"ROWS BATCH_CHANGES K...\"]";

  private static final int ROUNDS = 3;

  private ReadCostBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int batchChanges = args.length > 1 ? Integer.parseInt(args[1]) : 2_000;
    List<Integer> checkpoints = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      checkpoints.add(Integer.parseInt(args[i]));
    }
    if (checkpoints.isEmpty()) {
      checkpoints = List.of(10, 50);
    }
    Report report = new Report(
        "4. Read cost: main (deletion vectors) against realtime (equality deletes)",
        COMMAND,
        "change batches K",
        "reader",
        "query",
        "main ms",
        "realtime ms",
        "realtime / main",
        "rows (main = realtime)");
    TestTable table = TestTable.plain("bench", "customers");
    try (PipelineDriver pipeline =
        new PipelineDriver(List.of(table.topic()), Map.of(MaintenanceConfig.ENABLED, "false"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 5);
      for (int loaded = 0; loaded < rows; loaded += 100_000) {
        pipeline.send(gen.snapshot(Math.min(100_000, rows - loaded)));
        pipeline.ingestCommit();
      }
      pipeline.sync();
      long lo = rows / 2;
      long hi = lo + rows / 100;
      int done = 0;
      for (int k : checkpoints) {
        for (; done < k; done++) {
          pipeline.send(gen.next(batchChanges));
          pipeline.ingestCommit();
          pipeline.sync();
        }
        String differs = pipeline.mainDiffersFromModel(table);
        if (differs != null) {
          throw new IllegalStateException("main differs from the model: " + differs);
        }
        Table t = pipeline.table(table);
        System.out.printf(
            "after %d batches of %,d changes: timing the generic reader%n", k, batchChanges);
        for (String query : List.of("full scan", "selective")) {
          Expression filter = query.equals("full scan")
              ? Expressions.alwaysTrue()
              : Expressions.and(
                  Expressions.greaterThanOrEqual("id", lo), Expressions.lessThanOrEqual("id", hi));
          long[] main = generic(
              t, t.snapshot(Branches.MAIN).snapshotId(), filter, lo, hi, query.equals("selective"));
          long[] realtime = generic(
              t,
              t.snapshot(Branches.REALTIME).snapshotId(),
              filter,
              lo,
              hi,
              query.equals("selective"));
          check(main[1], realtime[1], "generic " + query);
          report.row(
              k,
              "Iceberg generic (Java)",
              query,
              Report.ms(main[0]),
              Report.ms(realtime[0]),
              String.format("%.1f×", realtime[0] / (double) Math.max(1, main[0])),
              String.format("%,d", main[1]));
        }
        System.out.printf("after %d batches: timing Spark%n", k);
        List<String[]> spark = SparkJvm.run(
            "3g",
            "read",
            pipeline.warehouseDir().toString(),
            "bench.customers",
            Long.toString(lo),
            Long.toString(hi),
            Integer.toString(ROUNDS));
        for (String query : List.of("full scan", "selective")) {
          String[] main = find(spark, "main", query);
          String[] realtime = find(spark, "realtime", query);
          check(Long.parseLong(main[3]), Long.parseLong(realtime[3]), "Spark " + query);
          long m = Long.parseLong(main[2]);
          long r = Long.parseLong(realtime[2]);
          report.row(
              k,
              "Spark 4.1.3",
              query,
              Report.ms(m),
              Report.ms(r),
              String.format("%.1f×", r / (double) Math.max(1, m)),
              String.format("%,d", Long.parseLong(main[3])));
        }
      }
    }
    report.note("A " + String.format("%,d", rows)
        + "-row table (`TestTable.plain`) loaded through ingest and sync (one"
        + " commit per 100,000 rows), then K batches of " + String.format("%,d", batchChanges)
        + " changes (the"
        + " generator's mix: inserts, updates, deletes, key updates, re-inserts), each committed by ingest and synced."
        + " No compaction: realtime then holds K equality-delete files, main K data files more and deletion vectors."
        + " Selective = `id BETWEEN` a 1% key range. Median of " + ROUNDS
        + " runs after a warm-up run; Spark local[2]"
        + " in its own JVM, timing only the query.");
    report.publish();
    System.exit(0);
  }

  private static void check(long main, long realtime, String what) {
    if (main != realtime) {
      throw new IllegalStateException(what + ": main read " + main + " rows, realtime " + realtime);
    }
  }

  private static String[] find(List<String[]> results, String branch, String query) {
    return results.stream()
        .filter(r -> r[0].equals(branch) && r[1].equals(query))
        .findFirst()
        .orElseThrow(
            () -> new IllegalStateException("Spark gave no result for " + branch + " " + query));
  }

  /** {median ms, rows} of ROUNDS reads after a warm-up read. */
  private static long[] generic(
      Table t, long snapshotId, Expression filter, long lo, long hi, boolean selective)
      throws Exception {
    List<Long> times = new ArrayList<>();
    long rows = 0;
    for (int round = 0; round <= ROUNDS; round++) {
      long s = System.nanoTime();
      rows = 0;
      try (CloseableIterable<Record> records =
          IcebergGenerics.read(t).useSnapshot(snapshotId).where(filter).build()) {
        for (Record r : records) {
          long id = (Long) r.getField("id");
          if (!selective || (id >= lo && id <= hi)) {
            rows++;
          }
        }
      }
      if (round > 0) {
        times.add((System.nanoTime() - s) / 1_000_000);
      }
    }
    Collections.sort(times);
    return new long[] {times.get(ROUNDS / 2), rows};
  }
}
