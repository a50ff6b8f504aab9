package dev.lakestream.launcher.source;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which tables a Debezium connector captures, and the key columns it is told to use, from its
 * configuration: {@code schema.include.list} / {@code schema.exclude.list} (patterns of schema
 * names), {@code table.include.list} / {@code table.exclude.list} (patterns of {@code
 * schema.table}), {@code column.include.list} / {@code column.exclude.list} (patterns of {@code
 * schema.table.column}), and {@code message.key.columns} ({@code table-pattern:col,col;...}). Patterns
 * match whole names, ignoring case, as Debezium's do.
 */
final class CapturedTables {

  private static final List<String> SYSTEM_SCHEMAS =
      List.of("pg_catalog", "information_schema", "pg_toast");

  private final List<Pattern> schemaInclude;
  private final List<Pattern> schemaExclude;
  private final List<Pattern> tableInclude;
  private final List<Pattern> tableExclude;
  private final List<Pattern> columnInclude;
  private final List<Pattern> columnExclude;
  private final Map<Pattern, List<String>> keyColumns;
  private final List<String> autoset;

  CapturedTables(Map<String, String> connector) {
    this(connector, "schema");
  }

  /** A MySQL or MariaDB connector's: databases take the place of schemas ({@code database.include.list}). */
  static CapturedTables binlog(Map<String, String> connector) {
    return new CapturedTables(connector, "database");
  }

  private CapturedTables(Map<String, String> connector, String schemaWord) {
    schemaInclude = patterns(connector.get(schemaWord + ".include.list"));
    schemaExclude = patterns(connector.get(schemaWord + ".exclude.list"));
    tableInclude = patterns(connector.get("table.include.list"));
    tableExclude = patterns(connector.get("table.exclude.list"));
    columnInclude = patterns(connector.get("column.include.list"));
    columnExclude = patterns(connector.get("column.exclude.list"));
    autoset =
        List.of(connector.getOrDefault("replica.identity.autoset.values", "").split(",")).stream()
            .filter(e -> !e.isBlank())
            .toList();
    keyColumns = new LinkedHashMap<>();
    String keys = connector.get("message.key.columns");
    if (keys != null) {
      for (String entry : keys.split(";")) {
        int colon = entry.lastIndexOf(':');
        if (colon > 0) {
          keyColumns.put(
              Pattern.compile(entry.substring(0, colon).trim(), Pattern.CASE_INSENSITIVE),
              List.of(entry.substring(colon + 1).trim().split("\\s*,\\s*")));
        }
      }
    }
  }

  boolean captures(String schema, String table) {
    if (SYSTEM_SCHEMAS.contains(schema)) {
      return false;
    }
    String qualified = schema + "." + table;
    if (!schemaInclude.isEmpty()
        && schemaInclude.stream().noneMatch(p -> p.matcher(schema).matches())) {
      return false;
    }
    if (schemaExclude.stream().anyMatch(p -> p.matcher(schema).matches())) {
      return false;
    }
    if (!tableInclude.isEmpty()
        && tableInclude.stream().noneMatch(p -> p.matcher(qualified).matches())) {
      return false;
    }
    return tableExclude.stream().noneMatch(p -> p.matcher(qualified).matches());
  }

  /** Whether the connector leaves {@code column} of the table out of its events. */
  boolean leavesOut(String schema, String table, String column) {
    String qualified = schema + "." + table + "." + column;
    if (!columnInclude.isEmpty()
        && columnInclude.stream().noneMatch(p -> p.matcher(qualified).matches())) {
      return true;
    }
    return columnExclude.stream().anyMatch(p -> p.matcher(qualified).matches());
  }

  /**
   * The record key's columns of a table with {@code columns}, as Debezium picks them: every column
   * that a {@code message.key.columns} entry's {@code <table pattern>.<column pattern>} matches
   * (ignoring case), over all entries; empty when none does (Debezium then takes the primary key).
   */
  Optional<List<String>> keyColumns(String schema, String table, List<String> columns) {
    List<Pattern> patterns = new ArrayList<>();
    keyColumns.forEach((tablePattern, cols) -> cols.forEach(c ->
        patterns.add(Pattern.compile(tablePattern.pattern() + "." + c, Pattern.CASE_INSENSITIVE))));
    List<String> key = columns.stream()
        .filter(c -> patterns.stream()
            .anyMatch(p -> p.matcher(schema + "." + table + "." + c).matches()))
        .toList();
    return key.isEmpty() ? Optional.empty() : Optional.of(key);
  }

  /**
   * The replica identity the connector sets on the table when it starts ({@code
   * replica.identity.autoset.values}, entries {@code <table pattern>:<identity>}): {@code FULL},
   * {@code DEFAULT}, {@code NOTHING} or {@code INDEX <name>}; empty when it sets none.
   */
  Optional<String> autosetIdentity(String schema, String table) {
    String qualified = schema + "." + table;
    for (String entry : autoset) {
      int colon = entry.lastIndexOf(':');
      if (colon > 0
          && Pattern.compile(entry.substring(0, colon).trim(), Pattern.CASE_INSENSITIVE)
              .matcher(qualified)
              .matches()) {
        return Optional.of(entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT));
      }
    }
    return Optional.empty();
  }

  /** The key columns {@code message.key.columns} names for the table, if any. */
  Optional<List<String>> messageKeyColumns(String schema, String table) {
    String qualified = schema + "." + table;
    return keyColumns.entrySet().stream()
        .filter(e -> e.getKey().matcher(qualified).matches())
        .map(Map.Entry::getValue)
        .findFirst();
  }

  private static List<Pattern> patterns(String list) {
    List<Pattern> out = new ArrayList<>();
    if (list != null) {
      for (String p : list.split(",")) {
        if (!p.isBlank()) {
          out.add(Pattern.compile(p.trim(), Pattern.CASE_INSENSITIVE));
        }
      }
    }
    return out;
  }
}
