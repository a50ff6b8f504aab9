package dev.lakestream.launcher.source;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The columns Debezium's reselect post-processor ({@value #TYPE}) queries again when a streamed
 * change brings null for them: each prefix named in the connector's {@code post.processors} whose
 * {@code <prefix>.type} is that class, with {@code <prefix>.reselect.null.values} not {@code
 * false}, reselects the columns its {@code <prefix>.reselect.columns.include.list} matches, else
 * those its {@code exclude.list} does not match, else every column (patterns of {@code
 * schema.table:column}, matched whole and ignoring case, as Debezium 3.6.1 matches them).
 *
 * <p>It reads the row as it is when the connector handles the change, by its key, so a change read
 * later than a newer one carries the newer value; the newer change follows it, and the table ends
 * equal to the source. Snapshot reads are not reselected (they hold every value).
 */
final class ReselectedColumns {

  static final String TYPE = "io.debezium.processors.reselect.ReselectColumnsPostProcessor";

  private record Reselector(List<Pattern> include, List<Pattern> exclude) {
    boolean covers(String column) {
      if (!include.isEmpty()) {
        return include.stream().anyMatch(p -> p.matcher(column).matches());
      }
      return exclude.stream().noneMatch(p -> p.matcher(column).matches());
    }
  }

  private final List<Reselector> reselectors = new ArrayList<>();

  ReselectedColumns(Map<String, String> connector) {
    for (String prefix : connector.getOrDefault("post.processors", "").split(",")) {
      String p = prefix.trim();
      if (!p.isEmpty()
          && TYPE.equals(connector.getOrDefault(p + ".type", "").trim())
          && !"false"
              .equalsIgnoreCase(
                  connector.getOrDefault(p + ".reselect.null.values", "true").trim())) {
        reselectors.add(new Reselector(
            CapturedTables.patterns(connector, p + ".reselect.columns.include.list"),
            CapturedTables.patterns(connector, p + ".reselect.columns.exclude.list")));
      }
    }
  }

  /** Whether a null the connector streams for the column is replaced by the row's value. */
  boolean reselectsNull(String schema, String table, String column) {
    String name = schema + "." + table + ":" + column;
    return reselectors.stream().anyMatch(r -> r.covers(name));
  }

  /**
   * The connector settings (JSON text) that reselect {@code columns} of {@code schema.table} when
   * they arrive null.
   */
  static String settings(String schema, String table, List<String> columns) {
    List<String> names = columns.stream()
        .map(c -> PostgresSourceCheck.pattern(schema + "." + table) + ":"
            + PostgresSourceCheck.pattern(c))
        .toList();
    return "\"post.processors\": \"reselector\", \"reselector.type\": \"" + TYPE + "\","
        + " \"reselector.reselect.columns.include.list\": \"" + String.join(",", names) + "\","
        + " \"reselector.reselect.null.values\": \"true\"";
  }
}
