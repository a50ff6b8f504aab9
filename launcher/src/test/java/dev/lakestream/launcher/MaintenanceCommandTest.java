package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

/**
 * The maintenance commands as a user runs them: a properties file naming the catalog, then
 * {@code compact}, {@code expire-snapshots} and {@code remove-orphan-files} on a table that ingest
 * and sync keep writing; sync mirrors the compaction and main stays equal to the source.
 */
class MaintenanceCommandTest {

  @Test
  void compactExpireAndRemoveOrphansFromTheCommandLine() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline =
        new PipelineDriver(List.of(table.topic()), Map.of(MaintenanceConfig.ENABLED, "false"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 61);
      for (int i = 0; i < 6; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      Path config = pipeline.configFile(Map.of(
          "sync.maintenance.compaction.min-small-files", "4",
          "sync.maintenance.expire.realtime.max-snapshot-age-ms", "0",
          "sync.maintenance.expire.realtime.min-snapshots-to-keep", "2",
          "sync.maintenance.expire.main.max-snapshot-age-ms", "0",
          "sync.maintenance.expire.main.min-snapshots-to-keep", "2"));
      String name = table.schema() + "." + table.name();

      Run compact = run("compact", "--config", config.toString(), "--table", name);
      assertThat(compact.code).as(compact.out).isZero();
      assertThat(compact.out)
          .contains("compacted realtime (6 small files, one file left in place): 5 data files");
      pipeline.send(gen.next(100));
      pipeline.ingestCommit();
      assertThat(pipeline.sync()).hasSize(1);
      assertThat(pipeline.mainDiffersFromModel(table)).isNull();
      Table t = pipeline.table(table);
      assertThat(BranchFiles.liveDataFiles(t, t.snapshot(Branches.MAIN)))
          .as("the compacted file, the one left in place, the one committed since")
          .hasSize(3);

      Run expire = run("expire-snapshots", "--config", config.toString(), "--table", name);
      assertThat(expire.code).as(expire.out).isZero();
      assertThat(expire.out).containsPattern("expired [1-9][0-9]* snapshots");

      Path orphan = Path.of(
          pipeline.table(table).location(), "data", "orphan-" + System.nanoTime() + ".parquet");
      Files.writeString(orphan, "never committed");
      Run tooYoung = run(
          "remove-orphan-files",
          "--config",
          config.toString(),
          "--table",
          name,
          "--older-than-ms",
          "0");
      assertThat(tooYoung.code).as(tooYoung.out).isEqualTo(2);
      assertThat(tooYoung.out).contains("lakestream.max.stall.ms");
      assertThat(orphan).exists();
      // Older than the default safety age (a day more than the longest stall).
      Files.setLastModifiedTime(
          orphan,
          FileTime.fromMillis(System.currentTimeMillis() - Duration.ofDays(9).toMillis()));
      Run orphans = run("remove-orphan-files", "--config", config.toString(), "--table", name);
      assertThat(orphans.code).as(orphans.out).isZero();
      assertThat(orphans.out).contains("removed " + orphan, "1 orphans removed");
      assertThat(orphan).doesNotExist();

      assertThat(pipeline.mainDiffersFromModel(table)).isNull();
      assertThat(pipeline.verify(table).passed()).isTrue();
      assertThat(run("compact", "--table").code).isEqualTo(2);
      assertThat(run("compact", "--config", config.toString(), "--table", "app.nope").code)
          .isEqualTo(1);
    }
  }

  private record Run(int code, String out) {}

  private static Run run(String command, String... args) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code =
        MaintenanceCommand.run(command, args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return new Run(code, bytes.toString(StandardCharsets.UTF_8));
  }
}
