package dev.lakestream.launcher.source;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Whether the connector's snapshot reads {@code CHAR} values as the binary log holds them. Under
 * the server's {@code sql_mode} {@code PAD_CHAR_TO_FULL_LENGTH} (MariaDB, and MySQL before 8.4) a
 * {@code SELECT} returns a {@code CHAR(5)} {@code 'ab'} as {@code 'ab   '}, while the binary log
 * holds {@code 'ab'}: seen with Debezium 3.6.1 on MariaDB 10.11, a row read by the snapshot and
 * then updated was on {@code main} twice, under both keys. The shipped connectors take the mode
 * out of their sessions' {@code sql_mode} ({@code database.initial.statements}).
 */
final class PaddedCharCheck {

  static final String MODE = "PAD_CHAR_TO_FULL_LENGTH";
  static final String STATEMENTS = "database.initial.statements";

  private PaddedCharCheck() {}

  /**
   * Adds a finding when the server pads {@code CHAR} values and the connector's sessions keep the
   * mode.
   *
   * @param charColumns the captured {@code CHAR} columns, as {@code db.table.column}
   */
  static void check(
      Connection connection,
      Map<String, String> connector,
      List<String> charColumns,
      List<Finding> findings)
      throws SQLException {
    String sqlMode;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT @@global.sql_mode")) {
      rs.next();
      sqlMode = rs.getString(1);
    }
    if (sqlMode == null || !sqlMode.toUpperCase(Locale.ROOT).contains(MODE)) {
      return;
    }
    String statements = connector.getOrDefault(STATEMENTS, "");
    if (statements.toUpperCase(Locale.ROOT).contains(MODE)) {
      findings.add(new Finding(
          Finding.Level.OK,
          "sql_mode",
          MODE + ": the connector's " + STATEMENTS + " take it out of its sessions"));
      return;
    }
    findings.add(new Finding(
        charColumns.isEmpty() ? Finding.Level.WARNING : Finding.Level.BLOCKER,
        "sql_mode",
        MODE + ": the server pads CHAR values to their length in a SELECT, which the connector's"
            + " snapshot reads, but not in the binary log: a row read by a snapshot and changed"
            + " after is on main twice, under both keys, and its other CHAR values differ. "
            + (charColumns.isEmpty()
                ? "No captured table has a CHAR column now (a later one would). "
                : "Captured CHAR column(s): " + list(charColumns) + ". ")
            + "Set the shipped connector's " + STATEMENTS + " (it takes " + MODE + " out of its"
            + " sessions' sql_mode), or take " + MODE + " out of the server's sql_mode; then drop"
            + " and snapshot again the tables with CHAR columns (README, \"When main differs from"
            + " the source\")"));
  }

  private static String list(List<String> names) {
    return names.size() <= 5
        ? String.join(", ", names)
        : String.join(", ", names.subList(0, 5)) + " and " + (names.size() - 5) + " more";
  }
}
