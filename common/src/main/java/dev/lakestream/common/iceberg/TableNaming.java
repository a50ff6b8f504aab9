package dev.lakestream.common.iceberg;

import dev.lakestream.common.debezium.SourceTable;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Maps a change topic to the table it feeds. A regular expression matches the topic and a
 * replacement (with {@code $1}, {@code $2}, ...) gives {@code namespace.table}; the last dot splits
 * the two. The default maps Debezium's {@code <prefix>.<schema>.<table>} (or {@code
 * <prefix>.<database>.<table>} for MySQL) to namespace {@code <schema>}, table {@code <table>}.
 *
 * <p>A Debezium topic of more parts (a {@code topic.prefix} with dots, or a schema or table name with
 * one) does not match the default pattern, and which dot splits what cannot be told from the
 * topic: the default naming then takes the schema and table its first record's {@code source} block
 * names, when the topic ends with them as Debezium makes topic names (every character Kafka does not
 * allow in a topic name replaced with {@code _}, as in the names the pattern gives): a topic a
 * router named otherwise is not taken for one of the tables it merges (one named like one of them
 * is, as a three-part topic always was). A dot in the schema's or the
 * table's name becomes {@code _} too: a table is named {@code namespace.table} wherever the
 * pipeline passes it on (events, stores), and most catalogs refuse dots in a name.
 */
public final class TableNaming {

  public static final String DEFAULT_REGEX = "^[^.]+\\.([^.]+)\\.([^.]+)$";
  public static final String DEFAULT_REPLACEMENT = "$1.$2";

  private final Pattern pattern;
  private final String replacement;
  /** Whether a topic the pattern does not match may be named by its records' source (the default). */
  private final boolean bySource;
  /** Every record asks for its topic's table: the answers, by topic (a pipeline's topics are few). */
  private final Map<String, TableIdentifier> tables = new ConcurrentHashMap<>();

  public TableNaming(String regex, String replacement) {
    this(regex, replacement, false);
  }

  private TableNaming(String regex, String replacement, boolean bySource) {
    this.pattern = Pattern.compile(regex);
    this.replacement = replacement;
    this.bySource = bySource;
  }

  public static TableNaming debeziumDefault() {
    return new TableNaming(DEFAULT_REGEX, DEFAULT_REPLACEMENT, true);
  }

  /**
   * The table of {@code topic} by the pattern, or as a record of it named it before; throws {@link
   * IllegalArgumentException} when neither.
   */
  public TableIdentifier tableFor(String topic) {
    return tableFor(topic, Optional::empty);
  }

  /**
   * The table of {@code topic}: by the pattern; else (default naming) by the source table {@code
   * source} gives, the one a record of the topic names. Throws {@link IllegalArgumentException}
   * when neither names one.
   */
  public TableIdentifier tableFor(String topic, Supplier<Optional<SourceTable>> source) {
    TableIdentifier known = tables.get(topic);
    if (known != null) {
      return known;
    }
    TableIdentifier table = map(topic, source);
    tables.put(topic, table);
    return table;
  }

  private TableIdentifier map(String topic, Supplier<Optional<SourceTable>> source) {
    Matcher m = pattern.matcher(topic);
    if (!m.matches()) {
      Optional<TableIdentifier> named =
          bySource ? source.get().flatMap(s -> namedBy(topic, s)) : Optional.empty();
      return named.orElseThrow(() -> new IllegalArgumentException("topic \"" + topic
          + "\" does not match the table naming pattern " + pattern.pattern()
          + (bySource
              ? " and does not end with the schema and table its records' source names"
              : "")
          + "; set ingest.table.name.regex and ingest.table.name.replacement to map it"));
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

  /**
   * The table of a topic that ends with {@code .<schema>.<table>} of its source as Debezium names
   * topics; empty when it does not, or nothing precedes them (a topic prefix is never empty).
   */
  private static Optional<TableIdentifier> namedBy(String topic, SourceTable source) {
    String schema = topicName(source.schema());
    String table = topicName(source.table());
    String suffix = "." + schema + "." + table;
    if (!topic.endsWith(suffix) || topic.length() == suffix.length()) {
      return Optional.empty();
    }
    return Optional.of(ofSource(source));
  }

  /**
   * The table the default naming gives the changes of {@code source}, whatever the connector's
   * {@code topic.prefix}: its schema and table as Debezium's topic names spell them, a dot as
   * {@code _}.
   */
  public static TableIdentifier ofSource(SourceTable source) {
    return TableIdentifier.of(
        Namespace.of(topicName(source.schema()).replace('.', '_')),
        topicName(source.table()).replace('.', '_'));
  }

  /**
   * {@code name} with every character Kafka does not allow in a topic name replaced with {@code _},
   * as Debezium writes it in its topic names.
   */
  public static String topicName(String name) {
    StringBuilder out = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean legal = (c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '.'
          || c == '_'
          || c == '-';
      out.append(legal ? c : '_');
    }
    return out.toString();
  }
}
