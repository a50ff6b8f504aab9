package dev.lakestream.launcher.source;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The columns Debezium's reselect post-processor ({@value #TYPE}) queries again when a streamed
 * change brings null for them: each name in the connector's {@code post.processors} whose type is
 * that class, with {@code reselect.null.values} not {@code false}, reselects the columns its
 * {@code reselect.columns.include.list} matches, else those its {@code exclude.list} does not match,
 * else every column (patterns of {@code schema.table:column}, matched whole and ignoring case, as
 * Debezium 3.6.1 matches them). A post-processor's settings are read as Debezium 3.6 reads them:
 * {@code post.processors.<name>.<setting>}, else the earlier {@code <name>.<setting>}.
 *
 * <p>It queries the row by the table's primary key ({@code reselect.use.event.key}: by the
 * record's key columns), writing the key columns' names unquoted into its query: for a table
 * without a primary key, or keyed by a name that needs quoting, the query fails, Debezium logs a
 * warning, and the null stays. Such columns are not counted as reselected.
 *
 * <p>It reads the row as it is when the connector handles the change, so a change read later than
 * a newer one carries the newer value; the newer change follows it, and the table ends equal to
 * the source. Snapshot reads are not reselected (they hold every value).
 */
final class ReselectedColumns {

  static final String TYPE = "io.debezium.processors.reselect.ReselectColumnsPostProcessor";

  private record Reselector(List<Pattern> include, List<Pattern> exclude, boolean eventKey) {
    boolean covers(String column) {
      if (!include.isEmpty()) {
        return include.stream().anyMatch(p -> p.matcher(column).matches());
      }
      return exclude.stream().noneMatch(p -> p.matcher(column).matches());
    }
  }

  private final List<Reselector> reselectors = new ArrayList<>();

  ReselectedColumns(Map<String, String> connector) {
    for (String name : connector.getOrDefault("post.processors", "").split(",")) {
      String p = name.trim();
      if (!p.isEmpty()
          && TYPE.equals(setting(connector, p, "type", ""))
          && !"false".equalsIgnoreCase(setting(connector, p, "reselect.null.values", "true"))) {
        reselectors.add(new Reselector(
            CapturedTables.patterns(
                "reselect.columns.include.list",
                setting(connector, p, "reselect.columns.include.list", null)),
            CapturedTables.patterns(
                "reselect.columns.exclude.list",
                setting(connector, p, "reselect.columns.exclude.list", null)),
            "true".equalsIgnoreCase(setting(connector, p, "reselect.use.event.key", "false"))));
      }
    }
  }

  /** A post-processor's setting, in Debezium 3.6's form or else the earlier one, trimmed. */
  private static String setting(
      Map<String, String> connector, String name, String key, String otherwise) {
    String value = connector.get("post.processors." + name + "." + key);
    if (value == null) {
      value = connector.get(name + "." + key);
    }
    return value == null ? otherwise : value.trim();
  }

  /**
   * Whether a null the connector streams for the column is replaced by the row's value: a
   * reselector covers it, and the row can be found by the key it queries with ({@code primaryKey},
   * empty without one, or with {@code reselect.use.event.key} the record's {@code eventKey}), each
   * of whose columns is {@code queryable} (in the connector's events, a name that needs no quotes).
   */
  boolean reselectsNull(
      String schema,
      String table,
      String column,
      List<String> primaryKey,
      List<String> eventKey,
      Predicate<String> queryable) {
    String name = schema + "." + table + ":" + column;
    return reselectors.stream().anyMatch(r -> {
      List<String> key = r.eventKey() ? eventKey : primaryKey;
      return r.covers(name) && !key.isEmpty() && key.stream().allMatch(queryable);
    });
  }

  /**
   * The connector settings (JSON text) that reselect {@code columns} of {@code schema.table} when
   * they arrive null, with a note on adding them to settings the connector already has.
   */
  static String settings(String schema, String table, List<String> columns) {
    List<String> names = columns.stream()
        .map(c -> PostgresSourceCheck.pattern(schema + "." + table) + ":"
            + PostgresSourceCheck.pattern(c))
        .toList();
    return "\"post.processors\": \"reselector\", \"post.processors.reselector.type\": \"" + TYPE
        + "\", \"post.processors.reselector.reselect.columns.include.list\": \""
        + String.join(",", names) + "\", \"post.processors.reselector.reselect.null.values\":"
        + " \"true\" (with a reselector already set, add these names to its include list)";
  }
}
