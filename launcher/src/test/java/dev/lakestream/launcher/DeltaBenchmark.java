package dev.lakestream.launcher;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.reader.DeltaStats;
import dev.lakestream.reader.MainVersions;
import dev.lakestream.reader.RowJson;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;

/**
 * The cost of a delta of main for a small change on a large table, against the alternative a
 * consumer has without it: reading both versions in full and diffing them. Not a test; run with
 *
 * <pre>
 * mvn -B -q clean install -DskipTests &amp;&amp; MAVEN_OPTS=-Xmx14g mvn -q -pl launcher org.codehaus.mojo:exec-maven-plugin:3.6.2:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=dev.lakestream.launcher.DeltaBenchmark [-Dexec.args="ROWS"]
 * </pre>
 */
public final class DeltaBenchmark {

  private DeltaBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    TestTable table = TestTable.wide("bench", "customers");
    try (PipelineDriver pipeline =
        new PipelineDriver(List.of(table.topic()), Map.of(MaintenanceConfig.ENABLED, "false"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 1);
      long started = System.nanoTime();
      for (int loaded = 0; loaded < rows; loaded += 50_000) {
        pipeline.send(gen.snapshot(Math.min(50_000, rows - loaded)));
        pipeline.ingestCommit();
      }
      pipeline.sync();
      long beforeCompaction = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
      RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20).commit();
      pipeline.syncBackstop();
      System.out.printf(
          "loaded %,d rows through ingest and sync, compacted: %.1f s%n", rows, seconds(started));
      compactionDelta(pipeline.table(table), beforeCompaction, rows);

      List<String> lines = new ArrayList<>();
      for (int changes : new int[] {10, 1_000, 10_000}) {
        long v1 = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
        pipeline.send(gen.next(changes));
        pipeline.ingestCommit();
        pipeline.sync();
        Table t = pipeline.table(table);
        long v2 = t.snapshot(Branches.MAIN).snapshotId();
        MainVersions reader = MainVersions.of(t);
        Types.StructType type = reader.schema(v2).asStruct();

        List<Long> deltaMs = new ArrayList<>();
        DeltaStats stats = null;
        for (int run = 0; run < 3; run++) {
          long s = System.nanoTime();
          long[] out = {0};
          stats = reader.delta(v1, v2, (row, w) -> out[0]++);
          deltaMs.add((System.nanoTime() - s) / 1_000_000);
        }
        long s = System.nanoTime();
        Map<String, Integer> diff = new HashMap<>();
        reader.snapshot(v1, row -> diff.merge(RowJson.of(type, row), -1, Integer::sum));
        reader.snapshot(v2, row -> diff.merge(RowJson.of(type, row), 1, Integer::sum));
        diff.values().removeIf(n -> n == 0);
        long fullMs = (System.nanoTime() - s) / 1_000_000;
        Collections.sort(deltaMs);
        int files = BranchFiles.liveDataFiles(t, t.snapshot(Branches.MAIN)).size();
        lines.add(String.format(
            "| %,d | %,d | %d | +%,d -%,d | %,d | %,d | %d | %.0f× |",
            rows,
            changes,
            files,
            stats.rowsAdded(),
            stats.rowsRemoved(),
            stats.filesRead(),
            deltaMs.get(1),
            fullMs,
            fullMs / (double) Math.max(1, deltaMs.get(1))));
        if (diff.size() != stats.rowsAdded() + stats.rowsRemoved()) {
          throw new IllegalStateException("the delta and the full diff disagree: " + diff.size()
              + " rows vs " + (stats.rowsAdded() + stats.rowsRemoved()));
        }
      }
      System.out.println();
      System.out.println(
          "| table rows | source changes | data files on main | delta rows | files read | delta ms (median of 3) | full diff ms | ratio |");
      System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
      lines.forEach(System.out::println);
    }
  }

  /**
   * The delta across the compaction of the whole table: every row on both sides, all cancelling,
   * with a memory budget of a tenth of the table's rows, so the rows are consolidated in about 20
   * buckets.
   */
  private static void compactionDelta(Table t, long before, int rows) {
    long after = t.snapshot(Branches.MAIN).snapshotId();
    long budget = Math.max(1, rows / 10);
    long s = System.nanoTime();
    long[] out = {0};
    DeltaStats stats =
        MainVersions.of(t).withMemoryBudget(budget).delta(before, after, (row, w) -> out[0]++);
    System.out.printf(
        "delta across the compaction of %,d rows, budget %,d rows: %,d rows out, %,d cancelled,"
            + " %d files read, %.1f s%n",
        rows, budget, out[0], stats.rowsCancelled(), stats.filesRead(), seconds(s));
  }

  private static double seconds(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1e9;
  }
}
