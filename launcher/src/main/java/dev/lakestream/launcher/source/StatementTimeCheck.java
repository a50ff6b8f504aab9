package dev.lakestream.launcher.source;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

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

  static final String STATEMENTS = "database.initial.statements";

  private StatementTimeCheck() {}

  /**
   * Adds a finding when the server limits statements and the connector's sessions keep the limit.
   *
   * @param variable {@code max_statement_time} (MariaDB) or {@code max_execution_time} (MySQL)
   * @param value the variable's global value, or null when the server has none
   */
  static void check(
      String variable, String value, Map<String, String> connector, List<Finding> findings) {
    double limit;
    try {
      limit = value == null ? 0 : Double.parseDouble(value.trim());
    } catch (NumberFormatException e) {
      return;
    }
    if (limit <= 0) {
      return;
    }
    String shown =
        variable + "=" + value.trim() + (variable.equals("max_execution_time") ? " ms" : " s");
    Pattern lifted = Pattern.compile("(?i)\\b" + Pattern.quote(variable) + "\\s*=\\s*0(?![.\\d])");
    if (lifted.matcher(connector.getOrDefault(STATEMENTS, "")).find()) {
      findings.add(new Finding(
          Finding.Level.OK,
          variable,
          shown + ": the connector's " + STATEMENTS + " lift it for its sessions"));
      return;
    }
    findings.add(new Finding(
        Finding.Level.BLOCKER,
        variable,
        shown + ": the server stops a statement that runs longer, and the connector's snapshot"
            + " reads each table with one SELECT: a table it takes longer to read stops the"
            + " connector (\"Query execution was interrupted\"), for every table, and each restart"
            + " starts the snapshot again. Set " + STATEMENTS + " as the shipped connector file"
            + " for this server does (it sets " + variable + " = 0 for the connector's"
            + " sessions)"));
  }

  /** The variable that limits statements on this server. */
  static String variable(boolean mariaDb) {
    return mariaDb ? "max_statement_time" : "max_execution_time";
  }
}
