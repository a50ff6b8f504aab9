package dev.lakestream.launcher.source;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The session settings the connector's database sessions run with: check-source's own session (the
 * connector's user, so with the server's {@code init_connect}), after the connector's {@code
 * database.initial.statements}, which Debezium runs on each connection it opens, split as Debezium
 * splits them (on {@code ;}, {@code ;;} standing for a {@code ;}). They are run here only when each
 * is a {@code SET}; otherwise the session is read without them, and a finding says so.
 */
final class ConnectorSession {

  static final String STATEMENTS = "database.initial.statements";

  private ConnectorSession() {}

  /**
   * Runs the connector's {@code SET} statements in {@code connection} and adds a finding when they
   * fail or are not run.
   */
  static void apply(Connection connection, Map<String, String> connector, List<Finding> findings) {
    String setting = connector.get(STATEMENTS);
    if (setting == null) {
      setting = connector.get("driver.initial.statements");
    }
    if (setting == null || setting.isBlank()) {
      return;
    }
    List<String> statements = split(setting);
    if (!statements.stream().allMatch(ConnectorSession::sessionOnly)) {
      findings.add(new Finding(
          Finding.Level.INFO,
          STATEMENTS,
          "not all of them set session variables only, so they were not run here (only"
              + " SET [SESSION] name = value, without GLOBAL, PERSIST, PASSWORD, ROLE or"
              + " STATEMENT, is): the sql_mode and statement time limit below are the server's,"
              + " not what the connector's sessions have"));
      return;
    }
    try (Statement s = connection.createStatement()) {
      for (String statement : statements) {
        s.execute(statement);
      }
    } catch (SQLException e) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          STATEMENTS,
          "failed on this server (" + e.getMessage() + "): Debezium runs them on each connection"
              + " it opens, so the connector cannot start. Use the connector file made for this"
              + " server (MariaDB or MySQL)"));
    }
  }

  /**
   * Whether {@code statement} sets session variables and nothing else, so running it here changes
   * nothing beyond this session.
   */
  static boolean sessionOnly(String statement) {
    String upper = statement.strip().toUpperCase(Locale.ROOT);
    return SET.matcher(upper).lookingAt() && !SERVER_WIDE.matcher(upper).find();
  }

  private static final Pattern SET = Pattern.compile("SET\\b");
  private static final Pattern SERVER_WIDE = Pattern.compile(
      "\\b(GLOBAL|PERSIST|PERSIST_ONLY|PASSWORD|ROLE|STATEMENT)\\b|@@(GLOBAL|PERSIST)");

  /**
   * A finding when this session's user is not the connector's {@code database.user}: the server's
   * {@code init_connect} (skipped for users with SUPER) and a user's own limits then differ.
   */
  static void sameUser(Connection connection, Map<String, String> connector, List<Finding> findings)
      throws SQLException {
    String user = connector.get("database.user");
    if (user == null) {
      return;
    }
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT CURRENT_USER()")) {
      rs.next();
      String current = rs.getString(1);
      String name = current == null ? "" : current.replaceAll("@[^@]*$", "");
      if (!name.equals(user)) {
        findings.add(new Finding(
            Finding.Level.WARNING,
            "database.user",
            "this check ran as " + current + ", not as the connector's " + user + ": the sql_mode"
                + " and statement time limit below are this user's (the server's init_connect,"
                + " which it skips for users with SUPER, and a user's own MAX_STATEMENT_TIME may"
                + " differ); run check-source without --user to check as the connector's user"));
      }
    }
  }

  /** A session variable's value. */
  static String variable(Connection connection, String name) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SHOW SESSION VARIABLES LIKE '" + name + "'")) {
      return rs.next() ? rs.getString(2) : null;
    }
  }

  /** Debezium's split of its initial statements: on {@code ;}, where {@code ;;} is a {@code ;}. */
  static List<String> split(String statements) {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (int i = 0; i < statements.length(); i++) {
      char c = statements.charAt(i);
      if (c == ';' && i + 1 < statements.length() && statements.charAt(i + 1) == ';') {
        current.append(';');
        i++;
      } else if (c == ';') {
        out.add(current.toString());
        current.setLength(0);
      } else {
        current.append(c);
      }
    }
    out.add(current.toString());
    return out.stream().filter(s -> !s.isBlank()).toList();
  }
}
