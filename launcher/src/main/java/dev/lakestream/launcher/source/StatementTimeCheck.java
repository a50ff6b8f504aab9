package dev.lakestream.launcher.source;

import java.util.List;

/**
 * Whether the server's time limit on statements can stop the connector's snapshot: Debezium's
 * MySQL connector reads each table with one {@code SELECT}, which MariaDB's {@code
 * max_statement_time} (seconds) or MySQL's {@code max_execution_time} (milliseconds, for {@code
 * SELECT}s) stops once it runs longer. Seen with Debezium 3.6.1 on MariaDB 10.11: the task failed
 * ("Query execution was interrupted (max_statement_time exceeded)") partway through a table, for
 * every table, and a restart starts the snapshot again. The shipped connectors set the limit to 0
 * for their sessions ({@code database.initial.statements}).
 */
final class StatementTimeCheck {

  private StatementTimeCheck() {}

  /**
   * Adds a finding when the connector's sessions run with a limit.
   *
   * @param variable {@code max_statement_time} (MariaDB) or {@code max_execution_time} (MySQL)
   * @param session the variable's value in the connector's sessions, or null when the server has
   *     none
   * @param global its global value
   */
  static void check(String variable, String session, String global, List<Finding> findings) {
    double sessionLimit = limit(session);
    double globalLimit = limit(global);
    String unit = variable.equals("max_execution_time") ? " ms" : " s";
    if (sessionLimit <= 0) {
      if (globalLimit > 0) {
        findings.add(new Finding(
            Finding.Level.OK,
            variable,
            global.trim() + unit + " on the server: the connector's " + ConnectorSession.STATEMENTS
                + " lift it for its sessions"));
      }
      return;
    }
    findings.add(new Finding(
        Finding.Level.BLOCKER,
        variable,
        session.trim() + unit + " in the connector's sessions: the server stops a statement that"
            + " runs longer, and the connector's snapshot reads each table with one SELECT: a"
            + " table it takes longer to read stops the connector (\"Query execution was"
            + " interrupted\"), for every table, and each restart starts the snapshot again. Set "
            + ConnectorSession.STATEMENTS + " as the shipped connector file for this server does"
            + " (it sets " + variable + " = 0 for the connector's sessions)"));
  }

  /** The variable that limits statements on this server. */
  static String variable(boolean mariaDb) {
    return mariaDb ? "max_statement_time" : "max_execution_time";
  }

  private static double limit(String value) {
    try {
      return value == null ? 0 : Double.parseDouble(value.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
