package dev.lakestream.launcher.source;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

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
  /**
   * The column lists of the connector's column mappers that change a value ({@code
   * column.truncate.to.N.chars}, {@code column.mask.with.N.chars}, {@code column.mask.hash.*}):
   * Debezium applies them to the row's columns and not to the record key's.
   */
  private final Map<String, List<Pattern>> valueMappers = new LinkedHashMap<>();
  /** {@code message.key.columns} as Debezium matches it: {@code <table>.<column>} patterns. */
  private final List<Pattern> keyColumnPatterns = new ArrayList<>();
  /** {@code replica.identity.autoset.values}: table patterns and the identity each sets. */
  private final Map<Pattern, String> autoset = new LinkedHashMap<>();

  CapturedTables(Map<String, String> connector) {
    this(connector, "schema");
  }

  /** A MySQL or MariaDB connector's: databases take the place of schemas ({@code database.include.list}). */
  static CapturedTables binlog(Map<String, String> connector) {
    return new CapturedTables(connector, "database");
  }

  private CapturedTables(Map<String, String> connector, String schemaWord) {
    schemaInclude = patterns(connector, schemaWord + ".include.list");
    schemaExclude = patterns(connector, schemaWord + ".exclude.list");
    tableInclude = patterns(connector, "table.include.list");
    tableExclude = patterns(connector, "table.exclude.list");
    columnInclude = patterns(connector, "column.include.list");
    columnExclude = patterns(connector, "column.exclude.list");
    for (String entry : connector.getOrDefault(AUTOSET, "").split(",")) {
      int colon = entry.lastIndexOf(':');
      if (colon > 0) {
        String identity = entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
        if (identity.matches("FULL|DEFAULT|NOTHING|INDEX \\S+")) {
          autoset.put(compile(AUTOSET, entry.substring(0, colon).trim()), identity);
        }
      }
    }
    connector.forEach((setting, list) -> {
      if (setting.matches(
          "column\\.truncate\\.to\\.\\d+\\.chars|column\\.mask\\.with\\.\\d+\\.chars"
              + "|column\\.mask\\.hash\\..+")) {
        valueMappers.put(setting, patterns(setting, list));
      }
    });
    keyColumns = new LinkedHashMap<>();
    String keys = connector.get(KEY_COLUMNS);
    if (keys != null) {
      for (String entry : keys.split(";")) {
        int colon = entry.lastIndexOf(':');
        if (colon > 0) {
          String tablePattern = entry.substring(0, colon).trim();
          List<String> columns = List.of(entry.substring(colon + 1).trim().split("\\s*,\\s*"));
          keyColumns.put(compile(KEY_COLUMNS, tablePattern), columns);
          for (String column : columns) {
            keyColumnPatterns.add(compile(KEY_COLUMNS, tablePattern + "." + column));
          }
        }
      }
    }
  }

  private static final String AUTOSET = "replica.identity.autoset.values";
  private static final String KEY_COLUMNS = "message.key.columns";

  /** A pattern of a connector setting, matched as Debezium does (ignoring case). */
  private static Pattern compile(String setting, String regex) {
    try {
      return Pattern.compile(regex, Pattern.CASE_INSENSITIVE);
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException(
          "the connector's " + setting + " holds a pattern Java cannot read, " + regex + ": "
              + e.getDescription(),
          e);
    }
  }

  /** Whether the connector's schema (database) lists take in {@code schema}. */
  boolean capturesSchema(String schema) {
    if (SYSTEM_SCHEMAS.contains(schema)) {
      return false;
    }
    if (!schemaInclude.isEmpty()
        && schemaInclude.stream().noneMatch(p -> p.matcher(schema).matches())) {
      return false;
    }
    return schemaExclude.stream().noneMatch(p -> p.matcher(schema).matches());
  }

  boolean captures(String schema, String table) {
    if (!capturesSchema(schema)) {
      return false;
    }
    String qualified = schema + "." + table;
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
   * The connector's settings that mask or truncate {@code column} of the table (fully-qualified
   * {@code schema.table.column} patterns, ignoring case): empty when none does.
   */
  List<String> valueMappersOf(String schema, String table, String column) {
    String qualified = schema + "." + table + "." + column;
    return valueMappers.entrySet().stream()
        .filter(e -> e.getValue().stream().anyMatch(p -> p.matcher(qualified).matches()))
        .map(Map.Entry::getKey)
        .toList();
  }

  /**
   * A blocker for {@code table} when a setting of {@link #valueMappersOf} matches one of its key
   * columns: Debezium changes the row's value and not the key's, so ingest refuses every insert and
   * update of it (their key is not their row's).
   */
  Optional<Finding> maskedKey(String schema, String table, List<String> key, String name) {
    List<String> masked = new ArrayList<>();
    for (String column : key) {
      List<String> settings = valueMappersOf(schema, table, column);
      if (!settings.isEmpty()) {
        masked.add(column + " (" + String.join(", ", settings) + ")");
      }
    }
    return masked.isEmpty()
        ? Optional.empty()
        : Optional.of(new Finding(
            Finding.Level.BLOCKER,
            name,
            "key column(s) " + masked + " masked or truncated by the connector: Debezium changes"
                + " the row's value and not the record key's, so the key no longer names the row"
                + " and ingest dead-letters every insert and update of the table. Leave key columns"
                + " out of those settings"));
  }

  /**
   * The record key's columns of a table with {@code columns}, as Debezium picks them: every column
   * that a {@code message.key.columns} entry's {@code <table pattern>.<column pattern>} matches
   * (ignoring case), over all entries; empty when none does (Debezium then takes the primary key).
   */
  Optional<List<String>> keyColumns(String schema, String table, List<String> columns) {
    List<String> key = columns.stream()
        .filter(c -> keyColumnPatterns.stream()
            .anyMatch(p -> p.matcher(schema + "." + table + "." + c).matches()))
        .toList();
    return key.isEmpty() ? Optional.empty() : Optional.of(key);
  }

  /**
   * The replica identity the connector sets on the table when it starts ({@code
   * replica.identity.autoset.values}, entries {@code <table pattern>:<identity>}): {@code FULL},
   * {@code DEFAULT}, {@code NOTHING} or {@code INDEX <name>}; empty when it sets none, or when
   * more than one entry matches (Debezium then sets none, and logs why).
   */
  Optional<String> autosetIdentity(String schema, String table) {
    String qualified = schema + "." + table;
    List<String> matching = autoset.entrySet().stream()
        .filter(e -> e.getKey().matcher(qualified).matches())
        .map(Map.Entry::getValue)
        .toList();
    return matching.size() == 1 ? Optional.of(matching.get(0)) : Optional.empty();
  }

  /** The key columns {@code message.key.columns} names for the table, if any. */
  Optional<List<String>> messageKeyColumns(String schema, String table) {
    String qualified = schema + "." + table;
    return keyColumns.entrySet().stream()
        .filter(e -> e.getKey().matcher(qualified).matches())
        .map(Map.Entry::getValue)
        .findFirst();
  }

  /** The patterns of a connector setting that lists them, comma separated. */
  static List<Pattern> patterns(Map<String, String> connector, String setting) {
    return patterns(setting, connector.get(setting));
  }

  /**
   * The patterns of {@code list}, the value of {@code setting}: split at each comma not escaped by a
   * backslash, as Debezium splits them ({@code \,} stays in its pattern, a literal comma).
   */
  static List<Pattern> patterns(String setting, String list) {
    List<Pattern> out = new ArrayList<>();
    if (list != null) {
      for (String p : list.split("(?<!\\\\),")) {
        if (!p.isBlank()) {
          out.add(compile(setting, p.trim()));
        }
      }
    }
    return out;
  }
}
