package dev.lakestream.common.iceberg;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Maps a change topic to the table it feeds. A regular expression matches the topic and a
 * replacement (with {@code $1}, {@code $2}, ...) gives {@code namespace.table}; the last dot splits
 * the two. The default maps Debezium's {@code <prefix>.<schema>.<table>} (or {@code
 * <prefix>.<database>.<table>} for MySQL) to namespace {@code <schema>}, table {@code <table>}.
 */
public final class TableNaming {

  public static final String DEFAULT_REGEX = "^[^.]+\\.([^.]+)\\.([^.]+)$";
  public static final String DEFAULT_REPLACEMENT = "$1.$2";

  private final Pattern pattern;
  private final String replacement;
  /** Every record asks for its topic's table: the answers, by topic (a pipeline's topics are few). */
  private final Map<String, TableIdentifier> tables = new ConcurrentHashMap<>();

  public TableNaming(String regex, String replacement) {
    this.pattern = Pattern.compile(regex);
    this.replacement = replacement;
  }

  /** The bronze change log of {@code table}: {@code namespace.<table>_changelog}. */
  public static TableIdentifier changelogOf(TableIdentifier table) {
    return TableIdentifier.of(table.namespace(), table.name() + CHANGELOG_SUFFIX);
  }

  public static final String CHANGELOG_SUFFIX = "_changelog";

  public static TableNaming debeziumDefault() {
    return new TableNaming(DEFAULT_REGEX, DEFAULT_REPLACEMENT);
  }

  /** The table of {@code topic}; throws {@link IllegalArgumentException} when the topic does not match. */
  public TableIdentifier tableFor(String topic) {
    TableIdentifier known = tables.get(topic);
    if (known != null) {
      return known;
    }
    TableIdentifier table = map(topic);
    tables.put(topic, table);
    return table;
  }

  private TableIdentifier map(String topic) {
    Matcher m = pattern.matcher(topic);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "topic \"" + topic + "\" does not match the table naming pattern " + pattern.pattern());
    }
    String name = m.replaceFirst(replacement);
    int dot = name.lastIndexOf('.');
    if (dot <= 0 || dot == name.length() - 1) {
      throw new IllegalArgumentException(
          "topic \"" + topic + "\" maps to \"" + name + "\", which is not namespace.table");
    }
    return TableIdentifier.of(
        Namespace.of(name.substring(0, dot).split("\\.")), name.substring(dot + 1));
  }
}
