package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SnapshotRows;
import dev.lakestream.reader.DeltaStats;
import dev.lakestream.reader.MainVersions;
import dev.lakestream.reader.RowJson;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.ColumnType;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TestTable;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Files;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Versioned reads of main: for many pairs of versions of a random workload (updates, deletes,
 * re-inserts, key updates, compactions), Snapshot(V1) + Delta(V1, V2) = Snapshot(V2) as multisets,
 * and the delta equals the difference of the two snapshots as read by Iceberg's own reader.
 */
class VersionedReadTest {

  private static final Map<String, String> MANUAL = Map.of(MaintenanceConfig.ENABLED, "false");

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {71, 72})
  void snapshotPlusDeltaIsTheLaterSnapshotForManyPairs(long seed) throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed);
      Random random = new Random(seed);
      pipeline.send(gen.snapshot(600));
      pipeline.ingestCommit();
      pipeline.sync();
      for (int round = 0; round < 16; round++) {
        pipeline.send(gen.next(10 + random.nextInt(150)));
        pipeline.ingestCommit();
        if (round % 5 == 4) {
          RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20).commit();
        }
        pipeline.sync();
      }
      Table t = pipeline.table(table);
      List<Long> versions = mainVersions(t);
      MainVersions reader = MainVersions.of(t);
      Map<Long, Map<String, Integer>> snapshots = new HashMap<>();
      for (long v : versions) {
        snapshots.put(v, icebergRows(t, v));
      }
      int pairs = 0;
      for (int i = 0; i < versions.size(); i++) {
        for (int j = i; j < versions.size(); j += 1 + random.nextInt(3)) {
          long v1 = versions.get(i);
          long v2 = versions.get(j);
          Map<String, Integer> delta = delta(reader, t, v1, v2);
          assertThat(delta.values())
              .as("consolidated: every weight is +1 or -1")
              .allMatch(w -> w == 1 || w == -1);
          assertThat(delta)
              .as("delta %d..%d vs Iceberg's snapshots", v1, v2)
              .isEqualTo(difference(snapshots.get(v1), snapshots.get(v2)));
          Map<String, Integer> applied = new HashMap<>(rowsOf(reader, t, v1));
          delta.forEach((row, w) -> applied.merge(row, w, Integer::sum));
          applied.values().removeIf(n -> n == 0);
          assertThat(applied)
              .as("Snapshot(%d) + Delta(%d, %d)", v1, v1, v2)
              .isEqualTo(snapshots.get(v2));
          pairs++;
        }
      }
      assertThat(pairs).isGreaterThan(40);
      assertThat(reader.consolidatedDeltas()).isGreaterThan(0);
    }
  }

  @Test
  void aRangeWithOnlyACompactionMirrorHasAnEmptyDelta() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 73);
      pipeline.send(gen.snapshot(500));
      pipeline.ingestCommit();
      for (int i = 0; i < 4; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      long before = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
      RealtimeCompaction.Result compaction =
          RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20).commit();
      assertThat(pipeline.syncBackstop())
          .as("a compaction is announced by no event; sync's timer finds it")
          .hasSize(1);
      Table t = pipeline.table(table);
      long mirror = t.snapshot(Branches.MAIN).snapshotId();
      assertThat(mirror).isNotEqualTo(before);

      List<Integer> weights = new ArrayList<>();
      DeltaStats stats = MainVersions.of(t).delta(before, mirror, (row, w) -> weights.add(w));

      assertThat(weights).isEmpty();
      assertThat(stats.appendOnly()).isFalse();
      assertThat(stats.rowsCancelled())
          .as("rows moved by the compaction")
          .isEqualTo(2 * compaction.rows());
      MainVersions reader = MainVersions.of(t);
      assertThat(reader.version(before).maxSourceTsMs()).isPositive();
      assertThat(reader.version(mirror).maxSourceTsMs())
          .as("the mirror brings no source change and covers the same as its parent")
          .isEqualTo(reader.version(before).maxSourceTsMs());
    }
  }

  @Test
  void aRangeThatDeletesNothingTakesTheAppendOnlyPath() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen =
          new ChangeStreamGenerator(table, 74, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      pipeline.send(gen.next(200));
      pipeline.ingestCommit();
      pipeline.sync();
      long v1 = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      Table t = pipeline.table(table);
      long v2 = t.snapshot(Branches.MAIN).snapshotId();
      MainVersions reader = MainVersions.of(t);

      Map<String, Integer> delta = delta(reader, t, v1, v2);

      assertThat(reader.appendOnlyDeltas()).isEqualTo(1);
      assertThat(reader.consolidatedDeltas()).isZero();
      assertThat(delta).hasSize(300).allSatisfy((row, w) -> assertThat(w).isEqualTo(1));
      assertThat(delta).isEqualTo(difference(icebergRows(t, v1), icebergRows(t, v2)));
    }
  }

  @Test
  void aSmallMemoryBudgetSpillsBucketsAndReadsEachFileOnceWithTheSameResult() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 75);
      pipeline.send(gen.snapshot(400));
      pipeline.ingestCommit();
      pipeline.sync();
      long v1 = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20).commit();
      pipeline.syncBackstop();
      Table t = pipeline.table(table);
      long v2 = t.snapshot(Branches.MAIN).snapshotId();
      List<DeltaStats> stats = new ArrayList<>();

      Map<String, Integer> whole = delta(MainVersions.of(t), t, v1, v2, stats);
      Map<String, Integer> inBuckets =
          delta(MainVersions.of(t).withMemoryBudget(100), t, v1, v2, stats);
      // More buckets than spill files may be open at once: buckets split again.
      Map<String, Integer> inLevels =
          delta(MainVersions.of(t).withMemoryBudget(2), t, v1, v2, stats);
      // Rows within the budget in rows, but wider than the budget in bytes: those held as they
      // pass it are spilled with the rest.
      Map<String, Integer> byBytes =
          delta(MainVersions.of(t).withMemoryBudgetBytes(64 << 10), t, v1, v2, stats);

      assertThat(stats.get(0).buckets()).isEqualTo(1);
      assertThat(stats.get(1).buckets()).isBetween(4, 128);
      assertThat(stats.get(2).buckets()).isGreaterThan(128);
      assertThat(stats.get(3).buckets())
          .as("buckets of the delta over the byte budget")
          .isGreaterThan(1);
      assertThat(stats)
          .extracting(DeltaStats::filesRead)
          .containsOnly(stats.get(0).filesRead());
      assertThat(stats)
          .extracting(DeltaStats::rowsAdded, DeltaStats::rowsRemoved, DeltaStats::rowsCancelled)
          .containsOnly(tuple(
              stats.get(0).rowsAdded(), stats.get(0).rowsRemoved(), stats.get(0).rowsCancelled()));
      assertThat(inBuckets)
          .isEqualTo(inLevels)
          .isEqualTo(byBytes)
          .isEqualTo(whole)
          .isEqualTo(difference(icebergRows(t, v1), icebergRows(t, v2)));
    }
  }

  @Test
  void versionsOffMainOrOutOfOrderAreClearErrors() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 76);
      for (int i = 0; i < 2; i++) {
        pipeline.send(gen.next(50));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      Table t = pipeline.table(table);
      List<Long> versions = mainVersions(t);
      MainVersions reader = MainVersions.of(t);
      long realtime = t.snapshot(Branches.REALTIME).snapshotId();
      long older = versions.get(versions.size() - 2);
      long newer = versions.get(versions.size() - 1);

      assertThatThrownBy(() -> reader.delta(realtime, newer, (row, w) -> {}))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is not a version of main");
      assertThatThrownBy(() -> reader.delta(newer, older, (row, w) -> {}))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is not an ancestor of version " + older);
      assertThatThrownBy(() -> reader.snapshot(42L, row -> {}))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no version 42");
      assertThat(reader.version().snapshotId()).isEqualTo(newer);
      assertThat(reader.delta(newer, newer, (row, w) -> {}).rowsAdded()).isZero();
    }
  }

  @Test
  void commandsWriteVersionsSnapshotsAndChanges() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 77);
      pipeline.send(gen.next(200));
      pipeline.ingestCommit();
      pipeline.sync();
      long v1 = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
      pipeline.send(gen.next(100));
      pipeline.ingestCommit();
      pipeline.sync();
      Table t = pipeline.table(table);
      long v2 = t.snapshot(Branches.MAIN).snapshotId();
      Path config = pipeline.configFile(Map.of());
      String name = table.schema() + "." + table.name();
      ObjectMapper json = new ObjectMapper();

      Run version = run("version", "--config", config.toString(), "--table", name);
      assertThat(version.code).as(version.err).isZero();
      assertThat(json.readTree(version.out).get("snapshotId").asLong()).isEqualTo(v2);

      Run changes = run(
          "changes", "--config", config.toString(), "--table", name, "--from", Long.toString(v1));
      assertThat(changes.code).as(changes.err).isZero();
      Map<String, Integer> fromCli = new HashMap<>();
      for (String line : changes.out.split("\n")) {
        JsonNode row = json.readTree(line);
        int weight = row.get("__weight").asInt();
        ((ObjectNode) row).remove("__weight");
        fromCli.merge(row.toString(), weight, Integer::sum);
      }
      Map<String, Integer> expected = new HashMap<>();
      for (Map.Entry<String, Integer> e :
          difference(icebergRows(t, v1), icebergRows(t, v2)).entrySet()) {
        expected.put(json.readTree(e.getKey()).toString(), e.getValue());
      }
      assertThat(fromCli).isEqualTo(expected);
      assertThat(changes.err).contains("changes " + v1 + ".." + v2);

      Path parquet = pipeline.warehouse.dir().resolve("snapshot.parquet");
      Run snapshot = run(
          "snapshot",
          "--config",
          config.toString(),
          "--table",
          name,
          "--version",
          Long.toString(v1),
          "--format",
          "parquet",
          "--output",
          parquet.toString());
      assertThat(snapshot.code).as(snapshot.err).isZero();
      long rows = 0;
      try (CloseableIterable<Record> records = Parquet.read(Files.localInput(parquet.toFile()))
          .project(t.schema())
          .createReaderFunc(s -> GenericParquetReaders.buildReader(t.schema(), s))
          .build()) {
        for (Record ignored : records) {
          rows++;
        }
      }
      assertThat(rows)
          .isEqualTo(
              icebergRows(t, v1).values().stream().mapToInt(Integer::intValue).sum());
      // A device is written in place, not replaced by a file.
      Path devNull = Path.of("/dev/null");
      Run discarded =
          run("snapshot", "--config", config.toString(), "--table", name, "--output", "/dev/null");
      assertThat(discarded.code).as(discarded.err).isZero();
      assertThat(java.nio.file.Files.isRegularFile(devNull)).isFalse(); // name clash
      Run parquetToDevice = run(
          "snapshot",
          "--config",
          config.toString(),
          "--table",
          name,
          "--format",
          "parquet",
          "--output",
          "/dev/null");
      assertThat(parquetToDevice.code).isEqualTo(1);
      assertThat(parquetToDevice.err).contains("--format parquet writes a file");
      assertThat(java.nio.file.Files.isRegularFile(devNull)).isFalse(); // name clash

      assertThat(run("changes", "--config", config.toString(), "--table", name).code)
          .isEqualTo(2);
      assertThat(
              run("changes", "--config", config.toString(), "--table", name, "--from", "42").code)
          .isEqualTo(1);
    }
  }

  /**
   * A read that fails midway (here a data file of the range is gone) exits non-zero and leaves no
   * output file: one that held the rows read before the failure would look like the whole delta.
   */
  @Test
  void aReadThatFailsMidwayLeavesNoOutputFile() throws Exception {
    TestTable table = TestTable.plain("app", "lost");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 79);
      pipeline.send(gen.snapshot(200));
      pipeline.ingestCommit();
      pipeline.sync();
      long v1 = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      Table t = pipeline.table(table);
      List<String> added = new ArrayList<>();
      for (Snapshot s = t.snapshot(Branches.MAIN);
          s != null && s.snapshotId() != v1;
          s = t.snapshot(s.parentId())) {
        s.addedDataFiles(t.io()).forEach(f -> added.add(f.location()));
      }
      assertThat(added).hasSizeGreaterThan(1);
      // The newest file the delta reads is gone; the ones before it are read first.
      java.nio.file.Files.delete( // name clash
          Path.of(added.get(0).replaceFirst("^file:", "")));
      Path config = pipeline.configFile(Map.of());
      String name = table.schema() + "." + table.name();
      Path dir = java.nio.file.Files.createDirectories( // name clash
          pipeline.warehouse.dir().resolve("out"));
      for (String command : List.of("changes", "snapshot")) {
        Path output = dir.resolve(command + ".parquet");
        Run run = run(
            command,
            "--config",
            config.toString(),
            "--table",
            name,
            command.equals("changes") ? "--from" : "--version",
            command.equals("changes")
                ? Long.toString(v1)
                : Long.toString(t.snapshot(Branches.MAIN).snapshotId()),
            "--format",
            "parquet",
            "--output",
            output.toString());
        assertThat(run.code).as(command + ": " + run.err).isNotZero();
        try (var files = java.nio.file.Files.list(dir)) { // name clash
          assertThat(files.toList()).as(command + ": files left").isEmpty();
        }
      }
    }
  }

  /** A delta's rows carry {@code __weight}: a table with a column of that name is a clear error. */
  @Test
  void changesOfATableWithAWeightColumnAreAClearError() throws Exception {
    TestTable plain = TestTable.plain("app", "weights");
    TestTable table = plain.withColumn("__weight", ColumnType.INT32);
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 78);
      pipeline.send(gen.next(50));
      pipeline.ingestCommit();
      pipeline.sync();
      long v1 = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
      pipeline.send(gen.next(50));
      pipeline.ingestCommit();
      pipeline.sync();
      Path config = pipeline.configFile(Map.of());
      String name = table.schema() + "." + table.name();
      for (String format : List.of("json", "parquet")) {
        Path output = pipeline.warehouse.dir().resolve("changes." + format);
        Run changes = run(
            "changes",
            "--config",
            config.toString(),
            "--table",
            name,
            "--from",
            Long.toString(v1),
            "--format",
            format,
            "--output",
            output.toString());
        assertThat(changes.code).as(format).isEqualTo(1);
        assertThat(changes.err)
            .as(format)
            .contains(
                "the table has a column named __weight, the name of the weight a delta gives");
      }
      Run snapshot = run("snapshot", "--config", config.toString(), "--table", name);
      assertThat(snapshot.code).as(snapshot.err).isZero();
      assertThat(snapshot.out).contains("\"__weight\":");
    }
  }

  /**
   * A result on standard output is what a program reads, so it must be whole and alone there: the
   * command line in its own JVM, with the shipped logging, prints the version's JSON on stdout and
   * its log (an unknown setting's warning) on stderr; and a standard output that refuses the rows (a
   * full disk, a closed pipe) makes the command fail rather than end with status 0.
   */
  @Test
  void aResultIsAloneOnStandardOutputAndOneItCouldNotWriteFails() throws Exception {
    TestTable table = TestTable.plain("app", "ledger");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      pipeline.send(new ChangeStreamGenerator(table, 78).next(100));
      pipeline.ingestCommit();
      pipeline.sync();
      long v = pipeline.table(table).snapshot(Branches.MAIN).snapshotId();
      Path config = pipeline.configFile(Map.of("lakestream.no.such.setting", "1"));
      String name = table.schema() + "." + table.name();

      Path stdout = java.nio.file.Files.createTempFile("version-", ".out"); // name clash
      Path stderr = java.nio.file.Files.createTempFile("version-", ".err"); // name clash
      Process child = new ProcessBuilder(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-XX:TieredStopAtLevel=1",
              "-cp",
              System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
              // The shipped logging, not the tests' (log4j2-test.xml comes first on this path).
              "-Dlog4j2.configurationFile=" + Lakestream.class.getResource("/log4j2.xml"),
              Lakestream.class.getName(),
              "version",
              "--config",
              config.toString(),
              "--table",
              name)
          .redirectOutput(stdout.toFile())
          .redirectError(stderr.toFile())
          .start();
      assertThat(child.waitFor(120, TimeUnit.SECONDS))
          .as("the version command's JVM to end")
          .isTrue();
      String err = java.nio.file.Files.readString(stderr); // name clash
      assertThat(child.exitValue()).as(err).isZero();
      assertThat(err).contains("unknown setting lakestream.no.such.setting", "ignored");
      List<String> lines = java.nio.file.Files.readAllLines(stdout); // name clash
      assertThat(lines).as("standard output").hasSize(1);
      assertThat(new ObjectMapper().readTree(lines.get(0)).get("snapshotId").asLong())
          .isEqualTo(v);

      PrintStream refusing = new PrintStream(new OutputStream() {
        @Override
        public void write(int b) throws IOException {
          throw new IOException("No space left on device");
        }
      });
      ByteArrayOutputStream errors = new ByteArrayOutputStream();
      int code = VersionsCommand.run(
          "snapshot",
          new String[] {"--config", config.toString(), "--table", name},
          refusing,
          new PrintStream(errors, true, StandardCharsets.UTF_8));
      assertThat(code).isEqualTo(1);
      assertThat(errors.toString(StandardCharsets.UTF_8))
          .contains("writing to standard output failed");
    }
  }

  private record Run(int code, String out, String err) {}

  private static Run run(String command, String... args) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = VersionsCommand.run(
        command,
        args,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Main's versions, oldest first. */
  private static List<Long> mainVersions(Table t) {
    return TableRows.snapshots(t, Branches.MAIN).stream()
        .map(Snapshot::snapshotId)
        .toList();
  }

  private static Map<String, Integer> delta(MainVersions reader, Table t, long v1, long v2) {
    return delta(reader, t, v1, v2, new ArrayList<>());
  }

  private static Map<String, Integer> delta(
      MainVersions reader, Table t, long v1, long v2, List<DeltaStats> stats) {
    Types.StructType type = reader.schema(v2).asStruct();
    Map<String, Integer> out = new HashMap<>();
    stats.add(reader.delta(v1, v2, (row, w) -> out.merge(RowJson.of(type, row), w, Integer::sum)));
    return out;
  }

  private static Map<String, Integer> rowsOf(MainVersions reader, Table t, long v) {
    Types.StructType type = reader.schema(v).asStruct();
    Map<String, Integer> out = new HashMap<>();
    reader.snapshot(v, row -> out.merge(RowJson.of(type, row), 1, Integer::sum));
    return out;
  }

  /** The rows of main at {@code v} as Iceberg's generic reader reads them. */
  private static Map<String, Integer> icebergRows(Table t, long v) {
    Types.StructType type = t.schema().asStruct();
    Map<String, Integer> out = new HashMap<>();
    SnapshotRows.forEach(t, v, row -> out.merge(RowJson.of(type, row), 1, Integer::sum));
    return out;
  }

  /** +n for rows more often in {@code after}, -n for rows more often in {@code before}. */
  private static Map<String, Integer> difference(
      Map<String, Integer> before, Map<String, Integer> after) {
    Map<String, Integer> out = new HashMap<>(after);
    before.forEach((row, n) -> out.merge(row, -n, Integer::sum));
    out.values().removeIf(n -> n == 0);
    return out;
  }
}
