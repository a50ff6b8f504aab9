package dev.lakestream.launcher.source;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Which columns a connector's reselect post-processors fill when a change streams null for them,
 * read as Debezium 3.6.1 reads the settings, and only where its query can find the row.
 */
class ReselectedColumnsTest {

  private static final String TYPE = ReselectedColumns.TYPE;
  private static final List<String> KEY = List.of("id");
  private static final Predicate<String> ANY = c -> true;

  private static boolean reselects(ReselectedColumns r, String schema, String table, String col) {
    return r.reselectsNull(schema, table, col, KEY, KEY, ANY);
  }

  @Test
  void anIncludeListNamesTheColumnsWholeIgnoringCase() {
    ReselectedColumns reselected = new ReselectedColumns(Map.of(
        "post.processors",
        "reselector",
        "post.processors.reselector.type",
        TYPE,
        "post.processors.reselector.reselect.columns.include.list",
        "inventory\\.gaps:nm,inventory\\.series:.*"));
    assertThat(reselects(reselected, "inventory", "gaps", "nm")).isTrue();
    assertThat(reselects(reselected, "Inventory", "Gaps", "NM")).isTrue();
    assertThat(reselects(reselected, "inventory", "gaps", "nm2")).isFalse();
    assertThat(reselects(reselected, "inventory", "gaps", "other")).isFalse();
    assertThat(reselects(reselected, "inventory", "series", "anything")).isTrue();
  }

  @Test
  void theEarlierFormOfTheSettingsIsReadTooAndTheCurrentOneWins() {
    ReselectedColumns earlier = new ReselectedColumns(Map.of(
        "post.processors", "reselector",
        "reselector.type", TYPE,
        "reselector.reselect.columns.include.list", "inventory\\.gaps:nm"));
    assertThat(reselects(earlier, "inventory", "gaps", "nm")).isTrue();
    ReselectedColumns both = new ReselectedColumns(Map.of(
        "post.processors", "reselector",
        "post.processors.reselector.type", TYPE,
        "post.processors.reselector.reselect.columns.include.list", "inventory\\.gaps:a",
        "reselector.reselect.columns.include.list", "inventory\\.gaps:b"));
    assertThat(reselects(both, "inventory", "gaps", "a")).isTrue();
    assertThat(reselects(both, "inventory", "gaps", "b")).isFalse();
  }

  @Test
  void withoutAnIncludeListTheExcludeListDecidesAndWithoutEitherEveryColumnIsReselected() {
    ReselectedColumns excluding = new ReselectedColumns(Map.of(
        "post.processors", "reselector",
        "post.processors.reselector.type", TYPE,
        "post.processors.reselector.reselect.columns.exclude.list", "inventory\\.gaps:nm"));
    assertThat(reselects(excluding, "inventory", "gaps", "nm")).isFalse();
    assertThat(reselects(excluding, "inventory", "gaps", "other")).isTrue();
    ReselectedColumns all = new ReselectedColumns(
        Map.of("post.processors", "reselector", "post.processors.reselector.type", TYPE));
    assertThat(reselects(all, "inventory", "gaps", "nm")).isTrue();
  }

  @Test
  void onlyAReselectProcessorThatReselectsNullsCounts() {
    assertThat(reselects(new ReselectedColumns(Map.of()), "inventory", "gaps", "nm"))
        .as("no post-processor")
        .isFalse();
    assertThat(reselects(
            new ReselectedColumns(Map.of(
                "post.processors", "reselector",
                "post.processors.reselector.type", TYPE,
                "post.processors.reselector.reselect.null.values", "false")),
            "inventory",
            "gaps",
            "nm"))
        .as("placeholders only")
        .isFalse();
    assertThat(reselects(
            new ReselectedColumns(Map.of("post.processors.reselector.type", TYPE)),
            "inventory",
            "gaps",
            "nm"))
        .as("configured but not named in post.processors")
        .isFalse();
    ReselectedColumns second = new ReselectedColumns(Map.of(
        "post.processors", "other, reselector",
        "post.processors.other.type", "com.example.Other",
        "post.processors.other.reselect.columns.include.list", "inventory\\.gaps:other",
        "post.processors.reselector.type", TYPE,
        "post.processors.reselector.reselect.columns.include.list", "inventory\\.gaps:nm"));
    assertThat(reselects(second, "inventory", "gaps", "nm")).isTrue();
    assertThat(reselects(second, "inventory", "gaps", "other")).isFalse();
  }

  /**
   * Debezium's query finds the row by the primary key (or, with {@code reselect.use.event.key},
   * the record's key), its names written unquoted: without such a key the null stays.
   */
  @Test
  void aColumnIsReselectedOnlyWhereTheQueryCanFindItsRow() {
    Map<String, String> byPrimaryKey = Map.of(
        "post.processors", "reselector",
        "post.processors.reselector.type", TYPE,
        "post.processors.reselector.reselect.columns.include.list", "inventory\\.gaps:nm");
    ReselectedColumns reselected = new ReselectedColumns(byPrimaryKey);
    assertThat(reselected.reselectsNull("inventory", "gaps", "nm", List.of(), KEY, ANY))
        .as("no primary key")
        .isFalse();
    assertThat(reselected.reselectsNull(
            "inventory", "gaps", "nm", List.of("Id"), KEY, c -> c.equals("id")))
        .as("a key the query cannot name unquoted")
        .isFalse();
    ReselectedColumns byEventKey = new ReselectedColumns(Map.of(
        "post.processors", "reselector",
        "post.processors.reselector.type", TYPE,
        "post.processors.reselector.reselect.columns.include.list", "inventory\\.gaps:nm",
        "post.processors.reselector.reselect.use.event.key", "true"));
    assertThat(byEventKey.reselectsNull("inventory", "gaps", "nm", List.of(), KEY, ANY))
        .as("by the record's key")
        .isTrue();
  }

  @Test
  void theSettingsItPrintsReselectExactlyTheColumnsNamedWhateverTheirCharacters() throws Exception {
    List<String> columns = List.of("a", "b,c", "d\"e", "f\\g", "h.i");
    String printed = ReselectedColumns.settings("inventory", "line.items", columns);
    String json = "{" + printed.substring(0, printed.indexOf(" (with a reselector")) + "}";
    Map<String, String> settings =
        new ObjectMapper().readValue(json, new TypeReference<Map<String, String>>() {});
    ReselectedColumns reselected = new ReselectedColumns(settings);
    for (String column : columns) {
      assertThat(reselects(reselected, "inventory", "line.items", column))
          .as(column)
          .isTrue();
    }
    assertThat(reselects(reselected, "inventory", "line.items", "b")).isFalse();
    assertThat(reselects(reselected, "inventory", "lineXitems", "a")).isFalse();
    assertThat(reselects(reselected, "inventory", "line.items", "hXi")).isFalse();
  }
}
