package dev.lakestream.enginecheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark, with Iceberg's own Spark runtime, reads the tables the pipeline wrote: the demo (PostgreSQL,
 * Kafka, Connect with Debezium, ingest and sync, from the launcher's jar in its own JVM) changes
 * {@code inventory.customers} for a while and exports the source's final rows; Spark must read the
 * same rows on {@code main} and on {@code realtime}, and {@code main} must hold no equality delete.
 */
class SparkReadsPipelineTablesTest {

  private static final String TABLE = Spark.CATALOG + ".inventory.customers";
  private static final String COLUMNS =
      "id, name, balance, active, unix_micros(updated_at) AS updated_at_micros";

  private static Path source;
  private static SparkSession spark;

  @BeforeAll
  static void runPipeline() throws Exception {
    Path dir =
        Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "engine-check-");
    Path warehouse = dir.resolve("warehouse");
    source = dir.resolve("source.jsonl");
    LakestreamJar.run(
        dir.resolve("demo.log"),
        5,
        "demo",
        "--duration",
        "20",
        "--rate",
        "300",
        "--warehouse",
        warehouse.toString(),
        "--export-source",
        source.toString());
    spark = Spark.open(warehouse);
  }

  @AfterAll
  static void stopSpark() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void mainEqualsTheSource() throws Exception {
    assertEqualsSource(spark.sql("SELECT " + COLUMNS + " FROM " + TABLE), "main");
  }

  @Test
  void realtimeEqualsTheSource() throws Exception {
    assertEqualsSource(
        spark.sql("SELECT " + COLUMNS + " FROM " + TABLE + " VERSION AS OF 'realtime'"),
        "realtime");
  }

  @Test
  void mainHoldsDeletionVectorsAndNoEqualityDeletes() {
    Map<Integer, Long> main = deleteFilesByContent(TABLE + ".delete_files");
    Map<Integer, Long> realtime =
        deleteFilesByContent(TABLE + ".delete_files VERSION AS OF 'realtime'");
    assertEquals(0L, main.getOrDefault(2, 0L), "equality delete files on main: " + main);
    // Across main's history, not only its last snapshot: a compaction at the demo's end can leave
    // main's current snapshot with every row rewritten and no deletion vector at all.
    Row added = spark
        .sql("SELECT sum(CAST(coalesce(s.summary['added-dvs'], '0') AS BIGINT)),"
            + " sum(CAST(coalesce(s.summary['added-equality-delete-files'], '0') AS BIGINT)),"
            + " count(*) FROM " + TABLE + ".history h JOIN " + TABLE + ".snapshots s"
            + " ON h.snapshot_id = s.snapshot_id WHERE h.is_current_ancestor")
        .first();
    assertTrue(
        added.getLong(0) > 0,
        "main's snapshots should add deletion vectors for the demo's updates and deletes: " + added
            + " (current delete files " + main + ")");
    assertEquals(0L, added.getLong(1), "equality delete files added by main's snapshots: " + added);
    // Realtime's too: the same compaction can leave realtime's head with no equality delete.
    long realtimeAdded = equalityDeletesAddedAlong(realtimeAncestry());
    assertTrue(
        realtimeAdded > 0,
        "realtime's snapshots should add ingest's equality deletes: " + realtimeAdded
            + " (current delete files " + realtime + ")");
    long notPuffin = spark
        .sql("SELECT count(*) FROM " + TABLE + ".delete_files WHERE upper(file_format) <> 'PUFFIN'")
        .first()
        .getLong(0);
    assertEquals(
        0L, notPuffin, "every delete file on main should be a deletion vector in a Puffin file");
  }

  /** Realtime's snapshot and its ancestors, from the {@code refs} and {@code snapshots} tables. */
  private static List<Long> realtimeAncestry() {
    long head = spark
        .sql("SELECT snapshot_id FROM " + TABLE + ".refs WHERE name = 'realtime'")
        .first()
        .getLong(0);
    Map<Long, Long> parents = new HashMap<>();
    for (Row row :
        spark.sql("SELECT snapshot_id, parent_id FROM " + TABLE + ".snapshots").collectAsList()) {
      parents.put(row.getLong(0), row.isNullAt(1) ? null : row.getLong(1));
    }
    List<Long> ancestry = new ArrayList<>();
    for (Long id = head; id != null && parents.containsKey(id); id = parents.get(id)) {
      ancestry.add(id);
    }
    return ancestry;
  }

  private static long equalityDeletesAddedAlong(List<Long> snapshots) {
    if (snapshots.isEmpty()) {
      return 0;
    }
    StringBuilder ids = new StringBuilder();
    for (Long id : snapshots) {
      ids.append(ids.length() == 0 ? "" : ", ").append(id);
    }
    return spark
        .sql("SELECT coalesce(sum(CAST(coalesce(summary['added-equality-delete-files'], '0')"
            + " AS BIGINT)), 0) FROM " + TABLE + ".snapshots WHERE snapshot_id IN (" + ids + ")")
        .first()
        .getLong(0);
  }

  private static Map<Integer, Long> deleteFilesByContent(String metadataTable) {
    Map<Integer, Long> counts = new HashMap<>();
    for (Row row : spark
        .sql("SELECT content, count(*) FROM " + metadataTable + " GROUP BY content")
        .collectAsList()) {
      counts.put(row.getInt(0), row.getLong(1));
    }
    return counts;
  }

  private static void assertEqualsSource(Dataset<Row> branch, String name) throws Exception {
    Dataset<Row> model = sourceRows();
    long missing = model.exceptAll(branch).count();
    long extra = branch.exceptAll(model).count();
    assertEquals(0L, missing, name + " lacks rows the source has (" + missing + ")");
    assertEquals(0L, extra, name + " has rows the source lacks (" + extra + ")");

    Row sums = branch
        .selectExpr(
            "count(*)",
            "sum(id)",
            "sum(balance)",
            "count_if(active)",
            "sum(crc32(cast(name AS binary)))",
            "sum(updated_at_micros)")
        .first();
    Checksums expected = Checksums.of(source);
    assertEquals(expected.rows, sums.getLong(0), name + ": row count");
    assertEquals(expected.ids, sums.getLong(1), name + ": sum(id)");
    assertEquals(
        0,
        expected.balance.compareTo(sums.getDecimal(2)),
        name + ": sum(balance) " + sums.getDecimal(2));
    assertEquals(expected.active, sums.getLong(3), name + ": count of active");
    assertEquals(expected.nameCrc, sums.getLong(4), name + ": sum of crc32(name)");
    assertEquals(expected.updatedAt, sums.getLong(5), name + ": sum(updated_at)");
  }

  /** The source's rows as Spark rows of the table's types. */
  private static Dataset<Row> sourceRows() {
    StructType schema = new StructType()
        .add("id", DataTypes.LongType)
        .add("name", DataTypes.StringType)
        .add("balance", DataTypes.StringType)
        .add("active", DataTypes.BooleanType)
        .add("updated_at_micros", DataTypes.LongType);
    return spark
        .read()
        .schema(schema)
        .json(source.toString())
        .selectExpr(
            "id",
            "name",
            "CAST(balance AS decimal(12,2)) AS balance",
            "active",
            "updated_at_micros");
  }

  /** Per-column checksums of the source, computed here without Spark. */
  private record Checksums(
      long rows, long ids, BigDecimal balance, long active, long nameCrc, long updatedAt) {

    static Checksums of(Path file) throws Exception {
      ObjectMapper json = new ObjectMapper();
      long rows = 0;
      long ids = 0;
      BigDecimal balance = BigDecimal.ZERO;
      long active = 0;
      long nameCrc = 0;
      long updatedAt = 0;
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      for (String line : lines) {
        JsonNode row = json.readTree(line);
        rows++;
        ids += row.get("id").asLong();
        if (!row.get("balance").isNull()) {
          balance = balance.add(new BigDecimal(row.get("balance").asText()));
        }
        if (row.get("active").asBoolean(false)) {
          active++;
        }
        if (!row.get("name").isNull()) {
          CRC32 crc = new CRC32();
          crc.update(row.get("name").asText().getBytes(StandardCharsets.UTF_8));
          nameCrc += crc.getValue();
        }
        if (!row.get("updated_at_micros").isNull()) {
          updatedAt += row.get("updated_at_micros").asLong();
        }
      }
      assertTrue(rows > 0, "the source export is empty: " + file);
      return new Checksums(rows, ids, balance, active, nameCrc, updatedAt);
    }
  }
}
