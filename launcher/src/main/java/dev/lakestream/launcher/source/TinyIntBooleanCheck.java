package dev.lakestream.launcher.source;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The {@code TINYINT(1)} columns Debezium's {@code TinyIntOneToBooleanConverter} (the shipped
 * connectors' {@code converters=boolean}) turns into booleans. It sends a value above 0 as true and
 * any other as false, so a {@code TINYINT(1)} that holds more than 0 and 1 (MySQL takes -128..127
 * in it) loses its value, and in a key two rows of the source become one key on the table: one of
 * them is lost and a delete of either removes both. The converter's {@code selector} (regular
 * expressions of {@code db.table.column}, comma-separated) limits it to the columns it names.
 */
final class TinyIntBooleanCheck {

  static final String CONVERTER_CLASS = "TinyIntOneToBooleanConverter";

  private TinyIntBooleanCheck() {}

  /**
   * The findings for {@code table}'s columns ({@code name, data type, column type}) of which
   * {@code keyColumns} are its key, under {@code connector}'s converters.
   */
  static void check(
      Map<String, String> connector,
      String schema,
      String table,
      List<String[]> columns,
      List<String> keyColumns,
      List<Finding> findings) {
    Optional<List<Pattern>> selected = selector(connector);
    if (selected.isEmpty()) {
      return;
    }
    List<String> converted = columns.stream()
        .filter(c -> c[2].toLowerCase(Locale.ROOT).startsWith("tinyint(1)"))
        .map(c -> c[0])
        .filter(c -> selected.get().isEmpty()
            || selected.get().stream()
                .anyMatch(p -> p.matcher(schema + "." + table + "." + c).matches()))
        .toList();
    String name = schema + "." + table;
    List<String> keys = converted.stream().filter(keyColumns::contains).toList();
    if (!keys.isEmpty()) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          name,
          "TINYINT(1) key column(s) " + keys + " arrive as booleans (the connector's "
              + CONVERTER_CLASS + "): keys that differ only in them by values other than 0 and 1"
              + " become one key on the table, and one of their rows is lost. Leave them out of"
              + " the converter with its selector (db.table.column regular expressions of the"
              + " columns that are booleans), or make them SMALLINT"));
    }
    List<String> values =
        converted.stream().filter(c -> !keyColumns.contains(c)).toList();
    if (!values.isEmpty()) {
      findings.add(new Finding(
          Finding.Level.WARNING,
          name,
          "TINYINT(1) column(s) " + values + " arrive as booleans (the connector's "
              + CONVERTER_CLASS + "): a value above 1 arrives as true and a negative one as"
              + " false. If they hold more than 0 and 1, leave them out of the converter with its"
              + " selector"));
    }
  }

  /**
   * The selector of the connector's TINYINT(1) converter: empty for every column, none when the
   * connector has no such converter.
   */
  static Optional<List<Pattern>> selector(Map<String, String> connector) {
    for (String converter : connector.getOrDefault("converters", "").split(",")) {
      String prefix = converter.trim() + ".";
      if (converter.isBlank()
          || !connector.getOrDefault(prefix + "type", "").trim().endsWith("." + CONVERTER_CLASS)) {
        continue;
      }
      String selector = connector.getOrDefault(prefix + "selector", "").trim();
      return Optional.of(
          selector.isEmpty()
              ? List.of()
              : Arrays.stream(selector.split(","))
                  .map(String::trim)
                  .filter(s -> !s.isEmpty())
                  .map(s -> Pattern.compile(s, Pattern.CASE_INSENSITIVE))
                  .toList());
    }
    return Optional.empty();
  }
}
