package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line: help per command, usage errors that say what is wrong (exit 2), no stack traces. */
class LakestreamCliTest {

  private record Run(int code, String out, String err) {}

  private static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = Lakestream.execute(
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        Map.of(),
        args);
    return new Run(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void helpListsEveryCommandAndEachCommandHasItsOwn() {
    Run help = run("--help");
    assertThat(help.code()).isZero();
    assertThat(help.out())
        .contains(
            "ingest",
            "sync",
            "verify",
            "check-source",
            "compact",
            "expire-snapshots",
            "remove-orphan-files",
            "version",
            "schema",
            "snapshot",
            "changes",
            "demo");
    Run compact = run("compact", "--help");
    assertThat(compact.code()).isZero();
    assertThat(compact.out()).contains("--table=NAMESPACE.TABLE", "--all", "--config=FILE");
    Run none = run();
    assertThat(none.code()).isEqualTo(2);
    assertThat(none.err()).contains("which command?");
  }

  @Test
  void optionsWithoutTheirValueOrWithAMalformedOneAreUsageErrorsThatSayWhich() {
    Run missing = run("demo", "--rate");
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err())
        .contains("Missing required parameter for option '--rate'")
        .doesNotContain("Exception");
    Run malformed = run("demo", "--rate", "fast");
    assertThat(malformed.code()).isEqualTo(2);
    assertThat(malformed.err()).contains("Invalid value for option '--rate'", "fast");
    Run oracle = run("demo", "--source", "oracle");
    assertThat(oracle.code()).isEqualTo(2);
    assertThat(oracle.err()).contains("--source wants postgresql or mariadb, not oracle");
    Run unknown = run("verify", "--tabel", "a.b");
    assertThat(unknown.code()).isEqualTo(2);
    assertThat(unknown.err()).contains("'--tabel'", "Possible solutions: --table");
    Run noTable = run("changes", "--from", "1");
    assertThat(noTable.code()).isEqualTo(2);
    assertThat(noTable.err()).contains("Missing required option: '--table=NAMESPACE.TABLE'");
    Run parquetToStdout = run("snapshot", "--table", "a.b", "--format", "parquet");
    assertThat(parquetToStdout.code()).isEqualTo(2);
    assertThat(parquetToStdout.err()).contains("--format parquet needs --output");
  }

  @Test
  void aReadingCommandWithoutACatalogSaysSoAndCreatesNothing(@TempDir Path dir) throws Exception {
    Path warehouse = dir.resolve("no-warehouse-here");
    Path config = Files.writeString(
        dir.resolve("c.properties"), "iceberg.catalog.warehouse=" + warehouse + "\n");
    Run verify = run("verify", "--config", config.toString());
    assertThat(verify.code()).isEqualTo(1);
    assertThat(verify.err())
        .contains("no catalog is configured and there is no embedded warehouse at " + warehouse)
        .doesNotContain("Exception");
    assertThat(warehouse).doesNotExist();
  }
}
