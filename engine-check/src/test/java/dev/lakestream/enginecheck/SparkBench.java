package dev.lakestream.enginecheck;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Spark's side of the benchmarks (module {@code benchmarks} starts it in a JVM of its own and reads
 * its {@code RESULT} lines). Not a test.
 *
 * <ul>
 *   <li>{@code read WAREHOUSE TABLE LO HI ROUNDS}: a full scan and a selective query (a key range)
 *       of {@code main} and of {@code realtime}; the median time of ROUNDS runs each.
 *   <li>{@code merge DIR PIPELINE_WAREHOUSE TABLE}: the common alternative pipeline. Creates a v3
 *       merge-on-read table from {@code DIR/initial.jsonl}, then per {@code DIR/batch-NNNN.jsonl}
 *       appends the batch to a staging table and applies it with {@code MERGE INTO}; prints the
 *       time, Iceberg's counts of files added and the files written (distinct paths) per batch; at the end compares the result with the
 *       pipeline's {@code main} (EXCEPT ALL both ways).
 * </ul>
 */
public final class SparkBench {

  private SparkBench() {}

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "read" ->
        read(
            Path.of(args[1]),
            args[2],
            Long.parseLong(args[3]),
            Long.parseLong(args[4]),
            Integer.parseInt(args[5]));
      case "merge" -> merge(Path.of(args[1]), Path.of(args[2]), args[3]);
      default -> throw new IllegalArgumentException("read | merge");
    }
  }

  private static void read(Path warehouse, String table, long lo, long hi, int rounds) {
    SparkSession spark = Spark.open(warehouse);
    String t = Spark.CATALOG + "." + table;
    for (String branch : List.of("main", "realtime")) {
      String from = t + (branch.equals("main") ? "" : " VERSION AS OF 'realtime'");
      time(
          spark, branch, "full scan", "SELECT count(*), sum(id), count(name) FROM " + from, rounds);
      time(
          spark,
          branch,
          "selective",
          "SELECT count(*), sum(id), count(name) FROM " + from + " WHERE id BETWEEN " + lo + " AND "
              + hi,
          rounds);
    }
    spark.stop();
  }

  private static void time(
      SparkSession spark, String branch, String query, String sql, int rounds) {
    spark.sql(sql).collectAsList(); // warm: planning caches, code generation
    List<Long> ms = new ArrayList<>();
    Row row = null;
    for (int i = 0; i < rounds; i++) {
      long s = System.nanoTime();
      row = spark.sql(sql).collectAsList().get(0);
      ms.add((System.nanoTime() - s) / 1_000_000);
    }
    Collections.sort(ms);
    System.out.println(
        "RESULT\t" + branch + "\t" + query + "\t" + ms.get(rounds / 2) + "\t" + row.getLong(0));
  }

  private static void merge(Path dir, Path pipelineWarehouse, String pipelineTable)
      throws Exception {
    SparkSession spark = Spark.builder(pipelineWarehouse)
        .config("spark.sql.catalog.bench", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.bench.type", "hadoop")
        .config(
            "spark.sql.catalog.bench.warehouse", dir.resolve("spark-warehouse").toString())
        .getOrCreate();
    String schema = "op string, seq bigint, id bigint, name string, score double, active boolean";
    spark.sql("CREATE NAMESPACE IF NOT EXISTS bench.db");
    spark.sql(
        "CREATE TABLE bench.db.target (id bigint, name string, score double, active boolean) USING iceberg"
            + " TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read',"
            + " 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')");
    spark.sql("CREATE TABLE bench.db.staging (" + schema + ", batch int) USING iceberg"
        + " TBLPROPERTIES ('format-version'='3')");
    long s0 = System.nanoTime();
    spark
        .read()
        .schema(schema)
        .json(dir.resolve("initial.jsonl").toString())
        .selectExpr("id", "name", "score", "active")
        .writeTo("bench.db.target")
        .append();
    System.out.println("RESULT\tload\t" + (System.nanoTime() - s0) / 1_000_000);

    List<Path> batches;
    try (Stream<Path> files = Files.list(dir)) {
      batches = files
          .filter(p -> p.getFileName().toString().startsWith("batch-"))
          .sorted()
          .toList();
    }
    int n = 0;
    for (Path batch : batches) {
      n++;
      long s = System.nanoTime();
      spark
          .read()
          .schema(schema)
          .json(batch.toString())
          .selectExpr("*", n + " AS batch")
          .writeTo("bench.db.staging")
          .append();
      long appended = System.nanoTime();
      // The newest change per key of this batch decides: delete, or the row's new values.
      spark.sql(
          "MERGE INTO bench.db.target t USING ("
              + " SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY seq DESC) AS rn"
              + " FROM bench.db.staging WHERE batch = " + n + ") WHERE rn = 1) c ON t.id = c.id"
              + " WHEN MATCHED AND c.op = 'd' THEN DELETE"
              + " WHEN MATCHED THEN UPDATE SET t.name = c.name, t.score = c.score, t.active = c.active"
              + " WHEN NOT MATCHED AND c.op <> 'd' THEN INSERT (id, name, score, active) VALUES (c.id, c.name, c.score, c.active)");
      long merged = System.nanoTime();
      Row files = spark
          .sql("SELECT summary['added-data-files'], summary['added-delete-files'],"
              + " summary['added-files-size'], snapshot_id FROM bench.db.target.snapshots"
              + " ORDER BY committed_at DESC LIMIT 1")
          .first();
      // Files on disk: several deletion vectors share a Puffin file, which Iceberg's counts do not
      // show. Right after the merge, every entry it added is live in the current manifests.
      long written = spark
          .sql("SELECT count(DISTINCT data_file.file_path) FROM bench.db.target.entries"
              + " WHERE status = 1 AND snapshot_id = " + files.getLong(3))
          .first()
          .getLong(0);
      System.out.println("RESULT\tbatch\t" + n + "\t" + (appended - s) / 1_000_000 + "\t"
          + (merged - appended) / 1_000_000 + "\t" + nz(files.getString(0)) + "\t"
          + nz(files.getString(1)) + "\t" + nz(files.getString(2)) + "\t" + written);
    }
    String ours = Spark.CATALOG + "." + pipelineTable;
    long missing = spark
        .table("bench.db.target")
        .exceptAll(spark.table(ours).select("id", "name", "score", "active"))
        .count();
    long extra = spark
        .table(ours)
        .select("id", "name", "score", "active")
        .exceptAll(spark.table("bench.db.target"))
        .count();
    long rows = spark.table("bench.db.target").count();
    System.out.println("RESULT\tcompare\t" + rows + "\t" + missing + "\t" + extra);
    spark.stop();
  }

  private static String nz(String s) {
    return s == null ? "0" : s;
  }
}
