package dev.lakestream.launcher.source;

import dev.lakestream.common.schema.ReservedColumns;
import java.util.List;
import java.util.Optional;

/** Captured columns whose names a table cannot take ({@link ReservedColumns}): a blocker. */
final class ReservedColumnNames {

  private ReservedColumnNames() {}

  /**
   * The finding for {@code table}'s captured {@code columns} ({@code schema.table}), when one has a
   * reserved name, with the {@code column.exclude.list} entry that leaves those columns out.
   */
  static Optional<Finding> check(String table, List<String> columns) {
    List<String> reserved =
        columns.stream().filter(ReservedColumns.NAMES::containsKey).toList();
    if (reserved.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new Finding(
        Finding.Level.BLOCKER,
        table,
        "column(s) " + reserved + ": ingest refuses every change of the table ("
            + String.join(
                "; ",
                reserved.stream()
                    .map(c -> "\"" + c + "\" " + ReservedColumns.NAMES.get(c))
                    .toList())
            + "). Rename the column(s) in the source, or leave them out of the connector's events"
            + " (a key column stays in the record's key whatever the setting: rename it)"
            + ": \"column.exclude.list\": \""
            + String.join(
                ",",
                reserved.stream()
                    .map(c -> PostgresSourceCheck.pattern(table + "." + c))
                    .toList())
            + "\""));
  }
}
