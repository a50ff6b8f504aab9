package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.config.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;

/** The README's settings tables and the settings the apps know are the same list. */
class SettingsDocumentedTest {

  private static final Pattern SETTING =
      Pattern.compile("`((?:lakestream|ingest|sync)\\.[a-z0-9.\\-]+)`");

  @Test
  void everySettingIsInTheReadmesTablesAndEveryDocumentedSettingExists() throws Exception {
    Path readme = PostgresEndToEndTest.connectorsDir().getParent().resolve("README.md");
    Set<String> documented = new TreeSet<>();
    for (String line : Files.readAllLines(readme)) {
      if (!line.startsWith("| `")) {
        continue;
      }
      String firstCell = line.substring(1, line.indexOf('|', 1));
      Matcher m = SETTING.matcher(firstCell);
      while (m.find()) {
        documented.add(m.group(1));
      }
    }
    Set<String> known = new TreeSet<>();
    Settings.all().forEach(s -> known.add(s.name()));
    assertThat(documented)
        .as("settings in the README's tables")
        .containsExactlyInAnyOrderElementsOf(known);
  }

  @Test
  void aMisspeltSettingIsReportedWithTheOneMeantAndAWrongTypeFails() {
    assertThat(Settings.problems(Map.of("sync.cycle.backstop.msec", "10")))
        .containsExactly(
            "unknown setting sync.cycle.backstop.msec (did you mean sync.cycle.backstop.ms?)");
    assertThat(Settings.problems(
            Map.of("sync.resolver.inventory.customers", "index", "bootstrap.servers", "x")))
        .as("per-table settings and Kafka's own are not ours to judge")
        .isEmpty();
    assertThat(Settings.problems(Map.of("ingest.flush.interval.ms", "soon")))
        .containsExactly("ingest.flush.interval.ms=soon: not a long");
    Assertions.assertThatThrownBy(
            () -> new PipelineConfig(Map.of("ingest.flush.interval.ms", "soon")).check())
        .hasMessageContaining("ingest.flush.interval.ms");
  }
}
