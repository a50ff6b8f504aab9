package dev.lakestream.launcher.source;

import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.TableNaming;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The tables ingest makes of the captured source tables, by its default naming ({@link
 * TableNaming#ofSource}): Debezium replaces each character Kafka does not allow in a topic name with
 * {@code _}, and ingest a dot in a name, so two source tables can come to one name.
 */
final class TableNames {

  private TableNames() {}

  /**
   * Adds a finding for each captured table whose table is named otherwise (INFO), each group that
   * comes to one table (BLOCKER: their changes would be merged into it) and each group whose names
   * differ only by case (WARNING: catalogs that lower-case names merge them).
   */
  static void check(List<SourceTable> captured, List<Finding> out) {
    Map<TableIdentifier, List<String>> byName = new LinkedHashMap<>();
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
      byName.computeIfAbsent(table, t -> new ArrayList<>()).add(qualified);
    }
    Map<String, List<TableIdentifier>> byLowerName = new LinkedHashMap<>();
    byName.forEach((table, sources) -> {
      if (sources.size() > 1) {
        out.add(new Finding(
            Finding.Level.BLOCKER,
            String.join(", ", sources),
            "these tables come to one name, " + table + ": their changes would be merged into one"
                + " table (and one topic, where Debezium's names meet). Rename one, or capture"
                + " only one of them"));
      }
      byLowerName
          .computeIfAbsent(table.toString().toLowerCase(Locale.ROOT), t -> new ArrayList<>())
          .add(table);
    });
    byLowerName.forEach((lower, tables) -> {
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
