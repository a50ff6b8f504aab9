package dev.lakestream.launcher.source;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;

/**
 * Whether Debezium reads the {@code money} values of the connector's sessions. PostgreSQL prints
 * money in the format of the session's {@code lc_monetary} (the server's locale unless set for the
 * database or role), in snapshots and in what pgoutput streams alike. Debezium (3.6.1) reads only
 * the {@code C}/English form ({@code $1,234.56}, {@code -$1,234.56}): it drops parentheses, a
 * leading minus, one leading currency character and the commas. Of {@code 1.234,56 €}
 * (de_DE) it makes nothing, and the connector's task fails at the first such value, at every
 * restart; a form it misreads would put other numbers on the table. This check prints two values in
 * this session (run as the connector's user, it has the connector's settings) and reads them as
 * Debezium does.
 */
final class MoneyFormatCheck {

  /** The values printed and read back: a sign, thousands and cents. */
  private static final List<String> PROBES = List.of("-1234567.89", "1234567.89");

  private MoneyFormatCheck() {}

  /** Adds a blocker to {@code out} when {@code columns} (captured money columns) exist and misread. */
  static void check(Connection connection, List<String> columns, List<Finding> out)
      throws SQLException {
    if (columns.isEmpty()) {
      return;
    }
    String user;
    String locale;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_user, current_setting('lc_monetary')")) {
      rs.next();
      user = rs.getString(1);
      locale = rs.getString(2);
    }
    for (String probe : PROBES) {
      String printed;
      try (Statement s = connection.createStatement();
          ResultSet rs = s.executeQuery("SELECT '" + probe + "'::numeric::money::text")) {
        rs.next();
        printed = rs.getString(1);
      }
      Optional<BigDecimal> read = readAsDebezium(printed);
      if (read.isEmpty() || read.get().compareTo(new BigDecimal(probe)) != 0) {
        List<String> named = columns.size() > 10 ? columns.subList(0, 10) : columns;
        out.add(new Finding(
            Finding.Level.BLOCKER,
            "money",
            "column(s) " + named
                + (columns.size() > named.size()
                    ? " and " + (columns.size() - named.size()) + " more"
                    : "")
                + ": with lc_monetary " + locale + " (the sessions of " + user
                + ") PostgreSQL prints " + probe + " as '" + printed + "', which Debezium "
                + read.map(v -> "reads as " + v.toPlainString()).orElse("cannot read")
                + (read.isEmpty()
                    ? ", so the connector's task fails at the first such value, in its snapshot"
                        + " or its stream, and again at every restart"
                    : ", so the table would hold other amounts than the source")
                + ". ALTER ROLE " + user + " SET lc_monetary = 'C' (the connector's sessions"
                + " only; the applications keep theirs), then restart the connector: it reads"
                + " the changes again from its slot, none lost (README, \"Values that stop the"
                + " connector\")"));
        return;
      }
    }
  }

  /**
   * {@code printed} read the way Debezium 3.6.1 reads a money value: negative when it starts with
   * a parenthesis or a minus; the parentheses or the minus dropped, then one leading character that
   * is not a digit or a point (the currency symbol), then every comma. Empty where Debezium fails.
   */
  static Optional<BigDecimal> readAsDebezium(String printed) {
    if (printed.isEmpty()) {
      return Optional.empty();
    }
    boolean negative = printed.charAt(0) == '(' || printed.charAt(0) == '-';
    String value = printed.charAt(0) == '-' ? printed.substring(1) : printed;
    if (value.startsWith("(") && value.endsWith(")")) {
      value = value.substring(1, value.length() - 1);
    }
    if (!value.isEmpty() && !Character.isDigit(value.charAt(0)) && value.charAt(0) != '.') {
      value = value.substring(1);
    }
    value = value.replace(",", "");
    try {
      BigDecimal read = new BigDecimal(value);
      return Optional.of(negative ? read.negate() : read);
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
