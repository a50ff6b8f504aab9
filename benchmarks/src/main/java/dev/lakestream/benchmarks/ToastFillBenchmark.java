package dev.lakestream.benchmarks;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.launcher.PipelineDriver;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Table;

/**
 * The cost of filling unchanged TOAST values: a table of documents (bigint key, int, a text of about
 * 1 kB) loaded on realtime as files of 100,000 rows, then batches of updates that leave the text
 * unchanged, written as Debezium's Postgres connector writes them under REPLICA IDENTITY DEFAULT
 * (the placeholder instead of the text). Ingest fills each from the key's current row on realtime.
 * Per batch: the flush and commit with the lookups beside the same batch with the text sent (no
 * lookup), the lookup's own time, files and bytes read, rows filled per second.
 */
public final class ToastFillBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx8g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.ToastFillBenchmark"
      + " [-Dexec.args=ROWS]";

  private static final int FILE_ROWS = 100_000;
  private static final Set<String> TOASTED = Set.of("body");

  private ToastFillBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    Report report = new Report(
        "6. Filling unchanged TOAST values",
        COMMAND,
        "table rows",
        "updates in the batch",
        "keys",
        "flush + commit, text sent (ms)",
        "flush + commit, text filled (ms)",
        "lookup (ms)",
        "rows filled/s",
        "files read",
        "MB read");
    TestTable table = TestTable.documents("bench", "documents");
    try (PipelineDriver pipeline =
        new PipelineDriver(List.of(table.topic()), Map.of(MaintenanceConfig.ENABLED, "false"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 7).keepingValues(1.0);
      BulkLoad.load(pipeline, table, gen, rows, FILE_ROWS);
      Table t = pipeline.table(table);
      System.out.printf(
          "loaded %,d rows in %d data files%n",
          rows, BranchFiles.liveDataFiles(t, t.snapshot(Branches.REALTIME)).size());
      for (int keys : new int[] {100, 1_000, 10_000}) {
        for (String layout : List.of("spread", "clustered", "recent")) {
          measure(pipeline, gen, rows, keys, layout, report);
        }
      }
      pipeline.sync();
      String diff = pipeline.mainDiffersFromModel(table);
      if (diff != null) {
        throw new IllegalStateException("main differs from the model: " + diff);
      }
    }
    report.note(
        "\"spread\": keys drawn across the whole table; \"clustered\": a run of adjacent keys; \"recent\":"
            + " keys updated in the batch before, so their rows are in the newest, smallest file. The lookup reads the key"
            + " column of the live data files whose key bounds admit a sought key, newest first, stopping when every key is"
            + " found, then the text column of the files holding them (MB read: both, compressed). \"text sent\" is the same"
            + " batch with every value present: the difference is the whole cost of filling. Ingest runs under a"
            + " TopologyTestDriver on a local warehouse, one source partition.");
    report.publish();
    System.exit(0);
  }

  private static void measure(
      PipelineDriver pipeline,
      ChangeStreamGenerator gen,
      int rows,
      int count,
      String layout,
      Report report) {
    MeterRegistry meters = pipeline.ingestMeters();
    List<List<Object>> keys =
        gen.updates(count, layout.equals("clustered")).stream().map(Change::key).toList();
    if (layout.equals("recent")) {
      pipeline.send(gen.updates(keys));
      pipeline.ingestCommit();
    }
    // The same keys once without the text (filled from where their rows are now), then with it.
    var lookups = meters.timer("lakestream.ingest.previous.row.lookup.duration");
    double lookupBefore = lookups.totalTime(TimeUnit.MILLISECONDS);
    double files0 = meters.counter("lakestream.ingest.previous.row.files.read").count();
    double bytes0 = meters.counter("lakestream.ingest.previous.row.bytes.read").count();
    long s1 = System.nanoTime();
    pipeline.send(gen.updates(keys), TOASTED);
    pipeline.ingestCommit();
    double filledMs = (System.nanoTime() - s1) / 1e6;
    double lookupMs = lookups.totalTime(TimeUnit.MILLISECONDS) - lookupBefore;
    long s0 = System.nanoTime();
    pipeline.send(gen.updates(keys));
    pipeline.ingestCommit();
    double plainMs = (System.nanoTime() - s0) / 1e6;
    report.row(
        String.format("%,d", rows),
        String.format("%,d", count),
        layout,
        Report.ms(plainMs),
        Report.ms(filledMs),
        Report.ms(lookupMs),
        String.format("%,.0f", count / (lookupMs / 1000.0)),
        String.format(
            "%,.0f", meters.counter("lakestream.ingest.previous.row.files.read").count() - files0),
        String.format(
            "%,.1f",
            (meters.counter("lakestream.ingest.previous.row.bytes.read").count() - bytes0) / 1e6));
    pipeline.sync();
  }
}
