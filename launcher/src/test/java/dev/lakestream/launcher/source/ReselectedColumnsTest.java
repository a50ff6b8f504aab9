package dev.lakestream.launcher.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which columns a connector's reselect post-processors fill when a change streams null for them,
 * read as Debezium 3.6.1 reads the settings.
 */
class ReselectedColumnsTest {

  private static final String TYPE = ReselectedColumns.TYPE;

  @Test
  void anIncludeListNamesTheColumnsWholeIgnoringCase() {
    ReselectedColumns reselected = new ReselectedColumns(Map.of(
        "post.processors", "reselector",
        "reselector.type", TYPE,
        "reselector.reselect.columns.include.list", "inventory\\.gaps:nm,inventory\\.series:.*"));
    assertThat(reselected.reselectsNull("inventory", "gaps", "nm")).isTrue();
    assertThat(reselected.reselectsNull("Inventory", "Gaps", "NM")).isTrue();
    assertThat(reselected.reselectsNull("inventory", "gaps", "nm2")).isFalse();
    assertThat(reselected.reselectsNull("inventory", "gaps", "other")).isFalse();
    assertThat(reselected.reselectsNull("inventory", "series", "anything")).isTrue();
  }

  @Test
  void withoutAnIncludeListTheExcludeListDecidesAndWithoutEitherEveryColumnIsReselected() {
    ReselectedColumns excluding = new ReselectedColumns(Map.of(
        "post.processors", "reselector",
        "reselector.type", TYPE,
        "reselector.reselect.columns.exclude.list", "inventory\\.gaps:nm"));
    assertThat(excluding.reselectsNull("inventory", "gaps", "nm")).isFalse();
    assertThat(excluding.reselectsNull("inventory", "gaps", "other")).isTrue();
    ReselectedColumns all =
        new ReselectedColumns(Map.of("post.processors", "reselector", "reselector.type", TYPE));
    assertThat(all.reselectsNull("inventory", "gaps", "nm")).isTrue();
  }

  @Test
  void onlyAReselectProcessorThatReselectsNullsCounts() {
    assertThat(new ReselectedColumns(Map.of()).reselectsNull("inventory", "gaps", "nm"))
        .as("no post-processor")
        .isFalse();
    assertThat(new ReselectedColumns(Map.of(
                "post.processors", "reselector",
                "reselector.type", TYPE,
                "reselector.reselect.null.values", "false"))
            .reselectsNull("inventory", "gaps", "nm"))
        .as("placeholders only")
        .isFalse();
    assertThat(new ReselectedColumns(Map.of("reselector.type", TYPE))
            .reselectsNull("inventory", "gaps", "nm"))
        .as("configured but not named in post.processors")
        .isFalse();
    ReselectedColumns second = new ReselectedColumns(Map.of(
        "post.processors", "other, reselector",
        "other.type", "com.example.Other",
        "other.reselect.columns.include.list", "inventory\\.gaps:other",
        "reselector.type", TYPE,
        "reselector.reselect.columns.include.list", "inventory\\.gaps:nm"));
    assertThat(second.reselectsNull("inventory", "gaps", "nm")).isTrue();
    assertThat(second.reselectsNull("inventory", "gaps", "other")).isFalse();
  }

  @Test
  void theSettingsItPrintsReselectExactlyTheColumnsNamed() {
    String settings = ReselectedColumns.settings("inventory", "line.items", List.of("a", "b"));
    assertThat(settings)
        .isEqualTo("\"post.processors\": \"reselector\", \"reselector.type\": \"" + TYPE + "\","
            + " \"reselector.reselect.columns.include.list\":"
            + " \"inventory\\\\.line\\\\.items:a,inventory\\\\.line\\\\.items:b\","
            + " \"reselector.reselect.null.values\": \"true\"");
    ReselectedColumns reselected = new ReselectedColumns(Map.of(
        "post.processors",
        "reselector",
        "reselector.type",
        TYPE,
        "reselector.reselect.columns.include.list",
        "inventory\\.line\\.items:a,inventory\\.line\\.items:b"));
    assertThat(reselected.reselectsNull("inventory", "line.items", "b")).isTrue();
    assertThat(reselected.reselectsNull("inventory", "lineXitems", "b")).isFalse();
  }
}
