package dev.lakestream.launcher.source;

import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.TableNaming;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The topics Debezium writes the captured source tables to and the tables ingest makes of them by
 * its default naming ({@link TableNaming#ofSource}): Debezium replaces each character Kafka does not
 * allow in a topic name with {@code _}, and ingest a dot in a name, so two source tables can come to
 * one topic, or to one table.
 */
final class TableNames {

  private TableNames() {}

  /**
   * Adds a finding for each captured table whose table is named otherwise (INFO), each group that
   * comes to one topic (BLOCKER: Debezium merges their changes) or to one table by the default
   * naming (WARNING: ingest's settings, which this check does not see, may map them apart), and
   * each group whose table names differ only by case (WARNING: catalogs that lower-case names merge
   * them).
   */
  static void check(List<SourceTable> captured, List<Finding> out) {
    Map<String, List<String>> byTopic = new LinkedHashMap<>();
    Map<TableIdentifier, List<String>> byTable = new LinkedHashMap<>();
    for (SourceTable source : captured) {
      String qualified = source.schema() + "." + source.table();
      TableIdentifier table = TableNaming.ofSource(source);
      if (!table.toString().equals(qualified)) {
        out.add(new Finding(
            Finding.Level.INFO,
            qualified,
            "its changes go to table " + table
                + " (Debezium's topic names replace what Kafka does not allow with _, ingest a dot"
                + " in a name)"));
      }
      String topic =
          TableNaming.topicName(source.schema()) + "." + TableNaming.topicName(source.table());
      byTopic.computeIfAbsent(topic, t -> new ArrayList<>()).add(qualified);
      byTable.computeIfAbsent(table, t -> new ArrayList<>()).add(qualified);
    }
    Set<List<String>> merged = new HashSet<>();
    byTopic.forEach((topic, sources) -> {
      if (sources.size() > 1) {
        merged.add(sources);
        out.add(new Finding(
            Finding.Level.BLOCKER,
            String.join(", ", sources),
            "Debezium writes these tables' changes to one topic, <topic.prefix>." + topic
                + ", so they would be merged into one table. Rename one, or capture only one of"
                + " them"));
      }
    });
    Map<String, List<TableIdentifier>> byLowerCase = new LinkedHashMap<>();
    byTable.forEach((table, sources) -> {
      if (sources.size() > 1 && !merged.contains(sources)) {
        out.add(new Finding(
            Finding.Level.WARNING,
            String.join(", ", sources),
            "these tables come to one table name, " + table + ", by ingest's default naming, which"
                + " would merge their changes into it: rename one, capture only one of them, or"
                + " map their topics apart with ingest.table.name.regex and"
                + " ingest.table.name.replacement"));
      }
      byLowerCase
          .computeIfAbsent(table.toString().toLowerCase(Locale.ROOT), t -> new ArrayList<>())
          .add(table);
    });
    byLowerCase.forEach((lower, tables) -> {
      if (tables.size() > 1) {
        out.add(new Finding(
            Finding.Level.WARNING,
            tables.stream().map(TableIdentifier::toString).collect(Collectors.joining(", ")),
            "these tables' names differ only by case: a catalog that lower-cases names (Hive"
                + " Metastore, AWS Glue) would merge them into one table"));
      }
    });
  }
}
