package dev.lakestream.launcher.source;

import java.util.List;
import java.util.Locale;

/**
 * Whether the connector's snapshot reads {@code CHAR} values as the binary log holds them. Under
 * the {@code sql_mode} {@code PAD_CHAR_TO_FULL_LENGTH} (MariaDB; deprecated in MySQL since 8.0.13)
 * a {@code SELECT} returns a {@code CHAR(5)} {@code 'ab'} as {@code 'ab   '}, while the binary log
 * holds {@code 'ab'}: seen with Debezium 3.6.1 on MariaDB 10.11, a row read by the snapshot and
 * then updated was on {@code main} twice, under both keys. The shipped connectors take the mode out
 * of their sessions' {@code sql_mode} ({@code database.initial.statements}).
 */
final class PaddedCharCheck {

  static final String MODE = "PAD_CHAR_TO_FULL_LENGTH";

  private PaddedCharCheck() {}

  /**
   * Adds a finding when the connector's sessions pad {@code CHAR} values.
   *
   * @param globalSqlMode the server's {@code sql_mode}
   * @param sessionSqlMode the {@code sql_mode} the connector's sessions run with
   * @param charKeys the captured {@code CHAR} key columns, as {@code db.table.column}
   * @param charColumns the other captured {@code CHAR} columns
   */
  static void check(
      String globalSqlMode,
      String sessionSqlMode,
      List<String> charKeys,
      List<String> charColumns,
      List<Finding> findings) {
    if (!pads(sessionSqlMode)) {
      if (pads(globalSqlMode)) {
        findings.add(new Finding(
            Finding.Level.OK,
            "sql_mode",
            MODE + " on the server: the connector's " + ConnectorSession.STATEMENTS
                + " take it out of its sessions"));
      }
      return;
    }
    String fix = "Set the shipped connector's " + ConnectorSession.STATEMENTS + " (it takes "
        + MODE + " out of its sessions' sql_mode), or take " + MODE + " out of the server's"
        + " sql_mode; then snapshot again the tables with CHAR columns (README, \"When main differs"
        + " from the source\"; drop those keyed by a CHAR column first)";
    String padded = MODE + ": the connector's sessions pad CHAR values to their length in a"
        + " SELECT, which its snapshot reads, but the binary log holds them unpadded: ";
    if (!charKeys.isEmpty()) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          "sql_mode",
          padded + "a row read by a snapshot and changed after is on main twice, under both keys."
              + " CHAR key column(s): " + Finding.names(charKeys) + ". " + fix));
    } else if (!charColumns.isEmpty()) {
      findings.add(new Finding(
          Finding.Level.WARNING,
          "sql_mode",
          padded + "a snapshot's values keep trailing spaces the source does not return until"
              + " the row next changes. CHAR column(s): " + Finding.names(charColumns) + ". "
              + fix));
    } else {
      findings.add(new Finding(
          Finding.Level.WARNING,
          "sql_mode",
          padded + "no captured table has a CHAR column now (a later one would). " + fix));
    }
  }

  private static boolean pads(String sqlMode) {
    return sqlMode != null && sqlMode.toUpperCase(Locale.ROOT).contains(MODE);
  }
}
