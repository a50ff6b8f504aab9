package dev.lakestream.benchmarks;

import dev.lakestream.common.iceberg.FileRows;
import dev.lakestream.common.iceberg.SharedDeletes;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

/**
 * What a compaction of realtime's small files pays to apply their equality deletes: a backlog of
 * batches as ingest commits them (each a data file of upserted keys and an equality-delete file of
 * the same keys, which applies to every older file), read newest first as the compaction reads it,
 * once with a new set of deleted keys per data file (Iceberg's way: every applicable delete file's
 * keys merged again for each file) and once with one set that grows from file to file ({@link
 * SharedDeletes#nextDataFile}). Both read each delete file once; both must give the same rows.
 */
public final class DeleteMergeBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx8g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.DeleteMergeBenchmark"
      + " [-Dexec.args=\"KEYS_PER_BATCH BATCHES...\"]";

  private static final Schema SCHEMA = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get())),
      Set.of(1));

  private DeleteMergeBenchmark() {}

  public static void main(String[] args) throws Exception {
    int keys = args.length > 0 ? Integer.parseInt(args[0]) : 1_000;
    List<Integer> backlogs = new ArrayList<>();
    for (int i = 1; i < args.length; i++) {
      backlogs.add(Integer.parseInt(args[i]));
    }
    if (backlogs.isEmpty()) {
      backlogs = List.of(10, 100, 400);
    }
    Report report = new Report(
        "9. Applying equality deletes in a compaction of small files",
        COMMAND,
        "small files",
        "keys per batch",
        "live rows",
        "a set per file: keys merged",
        "a set per file (ms)",
        "one growing set: keys merged",
        "one growing set (ms)",
        "ratio");
    for (int batches : backlogs) {
      try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
        Table table = warehouse.v3Table("bench", "backlog_" + batches, SCHEMA).create();
        Random random = new Random(batches);
        long keySpace = 20L * keys;
        for (int b = 0; b < batches; b++) {
          List<Object> ids = new ArrayList<>();
          for (int i = 0; i < keys; i++) {
            ids.add(random.nextLong(keySpace));
          }
          List<Object> distinct = new ArrayList<>(new LinkedHashSet<>(ids));
          table
              .newRowDelta()
              .addRows(KeyFiles.data(table, SCHEMA, distinct))
              .addDeletes(KeyFiles.deletes(table, SCHEMA, distinct))
              .commit();
        }
        List<FileScanTask> tasks = new ArrayList<>();
        try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
          planned.forEach(tasks::add);
        }
        tasks.sort(Comparator.comparingLong((FileScanTask t) -> t.file().dataSequenceNumber())
            .reversed());
        // Warm up both paths once on the smallest share of the work, then measure each.
        read(table, tasks.subList(0, Math.min(5, tasks.size())), false, r -> {});
        read(table, tasks.subList(0, Math.min(5, tasks.size())), true, r -> {});
        long[] perFileRows = {0};
        long start = System.nanoTime();
        SharedDeletes perFile = read(table, tasks, false, r -> perFileRows[0]++);
        double perFileMs = (System.nanoTime() - start) / 1e6;
        long[] growingRows = {0};
        start = System.nanoTime();
        SharedDeletes growing = read(table, tasks, true, r -> growingRows[0]++);
        double growingMs = (System.nanoTime() - start) / 1e6;
        if (perFileRows[0] != growingRows[0]) {
          throw new IllegalStateException(
              "rows differ: " + perFileRows[0] + " against " + growingRows[0]);
        }
        report.row(
            batches,
            keys,
            String.format("%,d", growingRows[0]),
            String.format("%,d", perFile.keysMerged()),
            Report.ms(perFileMs),
            String.format("%,d", growing.keysMerged()),
            Report.ms(growingMs),
            String.format("%.1f", perFileMs / growingMs));
      }
    }
    report.note(
        "Each side reads the same tasks newest first with its own `SharedDeletes` (every delete"
            + " file read once); keys merged count the delete files' rows put into sets.");
    report.publish();
  }

  private static SharedDeletes read(
      Table table, List<FileScanTask> tasks, boolean growing, Consumer<Object> rows) {
    SharedDeletes shared = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
    for (FileScanTask task : tasks) {
      if (growing) {
        shared.nextDataFile(task.file().dataSequenceNumber());
      }
      FileRows.forEach(table, task, table.schema(), shared, rows::accept);
    }
    return shared;
  }
}
