package dev.lakestream.launcher.source;

import com.mysql.cj.util.TimeUtil;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TimeZone;
import java.util.TreeSet;

/**
 * Whether the connector's snapshot reads a MySQL {@code TIMESTAMP} as the instant it is. The binary
 * log holds a {@code TIMESTAMP} as seconds since the epoch, which Debezium reads right. A snapshot
 * (the first, and every incremental one) reads it through JDBC, as text the server prints in the
 * session's time zone, which MySQL's driver (Connector/J) turns back into an instant in the zone
 * its {@code connectionTimeZone} names: {@code SERVER}, Debezium's default, is the zone the driver
 * makes of the server's {@code time_zone} (of {@code system_time_zone} when that is {@code
 * SYSTEM}: an abbreviation such as {@code CST}, which the driver takes for Chicago). Seen with
 * Debezium 3.6.1 on MariaDB 10.11: in a zone whose clocks go back, a value in the hour that repeats
 * arrives an hour off; with {@code connectionTimeZone=UTC} alone (the server's sessions still print
 * in the server's zone), every value arrives shifted by the zone's offset. With {@code
 * connectionTimeZone=UTC} and {@code forceConnectionTimeZoneToSession=true} the driver sets its
 * sessions to UTC, and every value arrives right.
 */
final class SnapshotTimeZoneCheck {

  static final String ZONE = "database.connectionTimeZone";
  static final String FORCE = "database.forceConnectionTimeZoneToSession";
  private static final String SETTINGS = "set \"" + ZONE + "\": \"UTC\" and \"" + FORCE
      + "\": \"true\" (the shipped connector files do)";
  private static final String FIX = SETTINGS + ", then snapshot the tables with TIMESTAMP columns"
      + " again (README, \"When main differs from the source\"; a table keyed by a TIMESTAMP"
      + " column is dropped first, as its keys may be wrong)";

  /** Instants at which the zones are compared: January and July, one year in ten. */
  static final List<Instant> SAMPLES = samples();

  private static final DateTimeFormatter SQL_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT);

  private SnapshotTimeZoneCheck() {}

  /**
   * What the server says of its zone: its global {@code time_zone} (as the connector's sessions
   * start), {@code system_time_zone}, and the offsets of {@code time_zone} at {@link #SAMPLES}
   * (null when the server could not convert to it).
   */
  record Server(String timeZone, String systemTimeZone, List<ZoneOffset> offsets) {}

  /**
   * Adds a finding about how the connector's snapshot reads {@code TIMESTAMP} columns.
   *
   * @param timestampColumns the captured {@code TIMESTAMP} columns, as {@code db.table.column}
   */
  static void check(
      Connection connection,
      Map<String, String> connector,
      List<String> timestampColumns,
      List<Finding> findings)
      throws SQLException {
    String forced = forcedZoneName(connector);
    List<ZoneOffset> forcedOffsets =
        forced == null ? null : offsets(connection, "'" + forced + "'");
    findings.add(judge(
        connector, server(connection), forced == null || forcedOffsets != null, timestampColumns));
  }

  /**
   * The finding, from the connector's settings and what the server said; {@code serverKnowsForced}
   * is whether the server can set its sessions to a named zone the connector forces on them.
   */
  static Finding judge(
      Map<String, String> connector,
      Server server,
      boolean serverKnowsForced,
      List<String> timestampColumns) {
    String setting = driverSetting(connector, "connectionTimeZone");
    boolean force = yes(driverSetting(connector, "forceConnectionTimeZoneToSession"));
    boolean serverMode = setting == null || setting.isBlank() || setting.equals("SERVER");
    String shown = setting == null ? "SERVER (Debezium's default)" : setting;
    Finding.Level level =
        timestampColumns.isEmpty() ? Finding.Level.WARNING : Finding.Level.BLOCKER;
    String columns = timestampColumns.isEmpty()
        ? "no captured table has a TIMESTAMP column now (a later one would)"
        : "captured TIMESTAMP column(s): " + Finding.names(timestampColumns);
    if (setting != null && setting.equals("LOCAL")) {
      return new Finding(
          Finding.Level.WARNING,
          ZONE,
          "LOCAL: the driver reads the server's TIMESTAMP text in the Connect worker's own time"
              + " zone, which this check cannot see; where it is not the server's, every TIMESTAMP"
              + " a snapshot reads arrives shifted by the difference; " + columns + ". To fix: "
              + FIX);
    }
    // The zone the driver reads the server's text in.
    ZoneId read;
    if (serverMode) {
      String name = "SYSTEM".equalsIgnoreCase(server.timeZone())
          ? server.systemTimeZone()
          : server.timeZone();
      try {
        read = TimeZone.getTimeZone(TimeUtil.getCanonicalTimeZone(name, null)).toZoneId();
      } catch (RuntimeException e) {
        return new Finding(
            Finding.Level.BLOCKER,
            ZONE,
            shown + ": the driver reads TIMESTAMP text in the server's zone, and cannot make one"
                + " of the server's " + describe(server) + " (" + e.getMessage() + "): the"
                + " connector fails. To fix: " + SETTINGS);
      }
    } else {
      try {
        read = TimeZone.getTimeZone(ZoneId.of(setting)).toZoneId();
      } catch (DateTimeException e) {
        return new Finding(
            Finding.Level.BLOCKER,
            ZONE,
            setting + ": not a time zone MySQL's driver reads (" + e.getMessage() + "), the"
                + " connector cannot connect. To fix: " + SETTINGS);
      }
    }
    if (force && !serverMode) {
      if (read.getRules().isFixedOffset()) {
        return new Finding(
            Finding.Level.OK,
            ZONE,
            shown + ": the connector's sessions print and read TIMESTAMP values in " + read
                + ", a fixed offset");
      }
      if (!serverKnowsForced) {
        return new Finding(
            Finding.Level.BLOCKER,
            ZONE,
            shown + ": the driver sets its sessions to this zone, which the server does not know"
                + " (no time zone tables for it): the connector fails. To fix: " + SETTINGS);
      }
      return varies(offsetsOf(read))
          ? new Finding(
              level,
              ZONE,
              shown + ": the connector's snapshot reads TIMESTAMP values as text in " + read
                  + ", whose clocks go back: a value in an hour that repeats arrives an hour"
                  + " off (streamed changes are right); " + columns + ". To fix: " + FIX)
          : new Finding(
              Finding.Level.OK,
              ZONE,
              shown + ": the connector's sessions print and read TIMESTAMP values in " + read
                  + ", without a change of offset at the times checked");
    }
    if (server.offsets() == null) {
      return new Finding(
          Finding.Level.INFO,
          ZONE,
          shown + ": the server's time zone offsets could not be read (CONVERT_TZ gave null),"
              + " so whether a snapshot reads TIMESTAMP values right was not checked");
    }
    // The server prints in its own zone (the driver does not set the session's).
    List<ZoneOffset> printed = server.offsets();
    List<ZoneOffset> readOffsets = offsetsOf(read);
    TreeSet<Integer> shifts = new TreeSet<>();
    for (int i = 0; i < SAMPLES.size(); i++) {
      shifts.add(printed.get(i).getTotalSeconds() - readOffsets.get(i).getTotalSeconds());
    }
    shifts.remove(0);
    if (!shifts.isEmpty()) {
      return new Finding(
          level,
          ZONE,
          shown + (serverMode ? "" : ", without " + FORCE + "=true") + ": the server prints a"
              + " session's TIMESTAMP values in its zone (" + describe(server) + ") and the"
              + " connector's driver reads them as " + read + ", so every TIMESTAMP a snapshot"
              + " reads arrives shifted by " + hours(shifts) + " (streamed changes are right); "
              + columns + ". To fix: " + FIX);
    }
    if (varies(printed)) {
      return new Finding(
          level,
          ZONE,
          shown + ": the connector's snapshot reads TIMESTAMP values as text in "
              + describe(server) + ", whose clocks go back: a value in an hour that repeats"
              + " arrives an hour off (streamed changes are right); " + columns + ". To fix: "
              + FIX);
    }
    return new Finding(
        Finding.Level.OK,
        ZONE,
        shown + ": snapshots read TIMESTAMP values in " + describe(server) + ", a fixed offset ("
            + printed.get(0) + ")");
  }

  /**
   * A setting passed to the connector's JDBC driver. Debezium merges its {@code database.} and
   * {@code driver.} settings, and a {@code database.} one comes first.
   */
  private static String driverSetting(Map<String, String> connector, String name) {
    String value = connector.get("database." + name);
    return value != null ? value : connector.get("driver." + name);
  }

  /** Connector/J's booleans: {@code true} or {@code yes}, in any case. */
  private static boolean yes(String value) {
    return value != null && (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("yes"));
  }

  /** The named zone (not a fixed offset) the connector sets its sessions to, or null. */
  private static String forcedZoneName(Map<String, String> connector) {
    String setting = driverSetting(connector, "connectionTimeZone");
    if (!yes(driverSetting(connector, "forceConnectionTimeZoneToSession"))
        || setting == null
        || setting.isBlank()
        || setting.equals("SERVER")
        || setting.equals("LOCAL")) {
      return null;
    }
    try {
      ZoneId zone = TimeZone.getTimeZone(ZoneId.of(setting)).toZoneId();
      return zone.getRules().isFixedOffset() ? null : setting.replace("'", "''");
    } catch (DateTimeException e) {
      return null;
    }
  }

  private static String describe(Server server) {
    return "SYSTEM".equalsIgnoreCase(server.timeZone())
        ? "SYSTEM, the operating system's " + server.systemTimeZone()
        : server.timeZone();
  }

  private static Server server(Connection connection) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT @@global.time_zone, @@system_time_zone")) {
      rs.next();
      return new Server(
          rs.getString(1), rs.getString(2), offsets(connection, "@@global.time_zone"));
    }
  }

  /** The offsets of {@code zone} (an SQL expression) at {@link #SAMPLES}, or null if unknown. */
  private static List<ZoneOffset> offsets(Connection connection, String zone) throws SQLException {
    StringBuilder sql = new StringBuilder("SELECT ");
    for (Instant sample : SAMPLES) {
      sql.append(sql.length() > 7 ? ", " : "")
          .append("CONVERT_TZ('")
          .append(SQL_TIME.format(sample.atOffset(ZoneOffset.UTC)))
          .append("', '+00:00', ")
          .append(zone)
          .append(")");
    }
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery(sql.toString())) {
      rs.next();
      List<ZoneOffset> out = new ArrayList<>();
      for (int i = 0; i < SAMPLES.size(); i++) {
        String local = rs.getString(1 + i);
        if (local == null) {
          return null;
        }
        LocalDateTime there = LocalDateTime.parse(local.substring(0, 19).replace(' ', 'T'));
        long seconds = Duration.between(
                SAMPLES.get(i).atOffset(ZoneOffset.UTC).toLocalDateTime(), there)
            .getSeconds();
        out.add(ZoneOffset.ofTotalSeconds((int) seconds));
      }
      return out;
    }
  }

  /** Java's offsets of {@code zone} at {@link #SAMPLES}. */
  static List<ZoneOffset> offsetsOf(ZoneId zone) {
    return SAMPLES.stream().map(zone.getRules()::getOffset).toList();
  }

  private static boolean varies(List<ZoneOffset> offsets) {
    return new TreeSet<>(offsets).size() > 1;
  }

  private static List<Instant> samples() {
    List<Instant> out = new ArrayList<>();
    for (int year = 1975; year <= 2035; year += 10) {
      out.add(LocalDateTime.of(year, 1, 15, 12, 0).toInstant(ZoneOffset.UTC));
      out.add(LocalDateTime.of(year, 7, 15, 12, 0).toInstant(ZoneOffset.UTC));
    }
    return List.copyOf(out);
  }

  private static String hours(TreeSet<Integer> seconds) {
    List<String> out = new ArrayList<>();
    for (int s : seconds) {
      int minutes = Math.abs(s) / 60;
      out.add((s < 0 ? "-" : "+")
          + (minutes % 60 == 0
              ? (minutes / 60) + " h"
              : String.format(Locale.ROOT, "%d:%02d h", minutes / 60, minutes % 60)));
    }
    return String.join(" or ", out);
  }
}
