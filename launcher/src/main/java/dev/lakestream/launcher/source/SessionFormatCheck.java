package dev.lakestream.launcher.source;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Whether Debezium reads the text PostgreSQL prints in the connector's sessions. What pgoutput
 * streams, and some of what a snapshot reads, is each value's text form, and three types print
 * after session settings that a database or role may set (the server's locale sets the first):
 *
 * <ul>
 *   <li>{@code money} after {@code lc_monetary}: Debezium (3.6.1) reads only the C/English form
 *       ({@code -$1,234.56}); of {@code -1.234,56 €} (de_DE) it makes nothing, and the connector's
 *       task fails at the first amount, at every restart;
 *   <li>{@code bytea} after {@code bytea_output}: it reads only {@code hex}; of a streamed value in
 *       {@code escape} it makes other bytes ({@code abcd} becomes {@code 0xcd}), silently, or
 *       fails the task;
 *   <li>{@code interval} after {@code IntervalStyle}: of {@code sql_standard} ({@code +1-2 -3
 *       +4:05:06}) it reads the time and drops the years, months and days, silently.
 * </ul>
 *
 * Run as the connector's user, this check's session has the connector's settings; it prints a value
 * of each captured type and reads it as Debezium does. The fix is the role's own setting in the
 * database (which outranks the database's and the role's), changing nothing for the applications;
 * after a restart the connector decodes from its slot again what it failed on (Debezium's parser is
 * not called here: this reads as its 3.6.1 source does).
 */
final class SessionFormatCheck {

  /** The types whose text form this check judges. */
  static final Set<String> TYPES = Set.of("money", "bytea", "interval");

  /** The amounts printed and read back: a sign, thousands and cents. */
  private static final List<String> AMOUNTS = List.of("-1234567.89", "1234567.89");

  private SessionFormatCheck() {}

  /**
   * Adds a blocker to {@code out} for each type of {@code columns} (captured columns by type name)
   * that Debezium would not read as this session prints it.
   */
  static void check(Connection connection, Map<String, List<String>> columns, List<Finding> out)
      throws SQLException {
    if (columns.isEmpty()) {
      return;
    }
    String user;
    String monetary;
    String byteaOutput;
    String intervalStyle;
    String alterRole;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_user, current_setting('lc_monetary'),"
            + " current_setting('bytea_output'), current_setting('IntervalStyle'),"
            + " quote_ident(current_user), quote_ident(current_database())")) {
      rs.next();
      user = rs.getString(1);
      monetary = rs.getString(2);
      byteaOutput = rs.getString(3);
      intervalStyle = rs.getString(4);
      alterRole = "ALTER ROLE " + rs.getString(5) + " IN DATABASE " + rs.getString(6) + " SET ";
    }
    String sessions = " (the sessions of " + user + "; if the connector connects as another user,"
        + " run this check as it)";
    String fix = " (the connector's sessions only; the applications keep theirs), then restart the"
        + " connector: it decodes again from its slot what it failed on (README, \"Values that stop"
        + " the connector\")";
    if (columns.containsKey("money")) {
      for (String amount : AMOUNTS) {
        String printed;
        BigDecimal stored;
        try (Statement s = connection.createStatement();
            ResultSet rs = s.executeQuery("SELECT m::text, m::numeric FROM (SELECT '" + amount
                + "'::numeric::money AS m) amount")) {
          rs.next();
          printed = rs.getString(1);
          stored = rs.getBigDecimal(2);
        }
        Optional<BigDecimal> read = readAsDebezium(printed);
        if (read.isEmpty() || read.get().compareTo(stored) != 0) {
          out.add(new Finding(
              Finding.Level.BLOCKER,
              "money",
              columns(columns.get("money")) + ": with lc_monetary " + monetary + sessions
                  + " PostgreSQL prints " + stored.toPlainString() + " as '" + printed
                  + "', which Debezium "
                  + read.map(v -> "reads as " + v.toPlainString()
                          + ", so the table would hold other amounts than the source")
                      .orElse("cannot read, so the connector's task fails at the first such"
                          + " value, in its snapshot or its stream, and again at every restart")
                  + ". " + alterRole + "lc_monetary = 'C'" + fix));
          break;
        }
      }
    }
    if (columns.containsKey("bytea") && !"hex".equalsIgnoreCase(byteaOutput)) {
      out.add(new Finding(
          Finding.Level.BLOCKER,
          "bytea",
          columns(columns.get("bytea")) + ": with bytea_output " + byteaOutput + sessions
              + " PostgreSQL streams bytea values in a form Debezium reads as hex: of most it makes"
              + " other bytes (abcd becomes 0xcd), silently, of others nothing, and the connector's"
              + " task fails, at every restart. " + alterRole + "bytea_output = 'hex'" + fix
              + "; then snapshot again the tables whose bytea values it has sent since"));
    }
    if (columns.containsKey("interval") && "sql_standard".equalsIgnoreCase(intervalStyle)) {
      out.add(new Finding(
          Finding.Level.BLOCKER,
          "interval",
          columns(columns.get("interval")) + ": with IntervalStyle sql_standard" + sessions
              + " PostgreSQL prints '1 year 2 mons -3 days 04:05:06' as '"
              + printed(connection, "'1 year 2 mons -3 days 04:05:06'::interval") + "', of which"
              + " Debezium reads only the time: the table would hold 4 hours 5 minutes 6 seconds"
              + " (years, months and days dropped, silently), in snapshots and streamed changes"
              + " alike. " + alterRole + "IntervalStyle = 'postgres'" + fix
              + "; then snapshot again the tables whose intervals it has sent since"));
    }
  }

  /** The columns named in a finding: ten at most, then how many more. */
  private static String columns(List<String> columns) {
    List<String> named = columns.size() > 10 ? columns.subList(0, 10) : columns;
    return "column(s) " + named
        + (columns.size() > named.size()
            ? " and " + (columns.size() - named.size()) + " more"
            : "");
  }

  /** How this session prints {@code expression} (an SQL literal with its cast). */
  private static String printed(Connection connection, String expression) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT (" + expression + ")::text")) {
      rs.next();
      return rs.getString(1);
    }
  }

  /**
   * {@code printed} read the way Debezium 3.6.1 reads a money value: negative when it starts with
   * a parenthesis or a minus; a leading minus taken as an opening parenthesis; a leading opening and
   * a trailing closing parenthesis dropped (each where it is), then one leading character that is
   * not a digit or a point (the currency symbol), then every comma; a minus put before what is left.
   * Empty where Debezium fails.
   */
  static Optional<BigDecimal> readAsDebezium(String printed) {
    if (printed.isEmpty()) {
      return Optional.empty();
    }
    boolean negative = printed.charAt(0) == '(' || printed.charAt(0) == '-';
    String value = printed.charAt(0) == '-' ? "(" + printed.substring(1) + ")" : printed;
    if (value.startsWith("(")) {
      value = value.substring(1);
    }
    if (value.endsWith(")")) {
      value = value.substring(0, value.length() - 1);
    }
    if (!value.isEmpty() && !Character.isDigit(value.charAt(0)) && value.charAt(0) != '.') {
      value = value.substring(1);
    }
    value = value.replace(",", "");
    try {
      return Optional.of(new BigDecimal(negative ? "-" + value : value));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
