package dev.lakestream.launcher.source;

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
import java.util.TreeSet;

/**
 * Whether the connector's snapshot reads a MySQL {@code TIMESTAMP} as the instant it is. The binary
 * log holds a {@code TIMESTAMP} as seconds since the epoch, which Debezium reads right. A snapshot
 * (the first, and every incremental one) reads it through JDBC, as text the server prints in the
 * session's time zone, which MySQL's driver turns back into an instant in the zone its {@code
 * connectionTimeZone} names ({@code SERVER}, Debezium's default: the session's own). Seen with
 * Debezium 3.6.1 on MariaDB 10.11: in a zone whose clocks go back, a value in the hour that repeats
 * arrives an hour off; with {@code connectionTimeZone=UTC} alone (the server's sessions still print
 * in the server's zone), every value arrives off by the zone's offset. With {@code
 * connectionTimeZone=UTC} and {@code forceConnectionTimeZoneToSession=true} the driver sets its
 * sessions to UTC, and every value arrives right.
 */
final class SnapshotTimeZoneCheck {

  static final String ZONE = "database.connectionTimeZone";
  static final String FORCE = "database.forceConnectionTimeZoneToSession";
  private static final String FIX = "set \"" + ZONE + "\": \"UTC\" and \"" + FORCE
      + "\": \"true\" (the shipped connector files do), then take an incremental snapshot of"
      + " the tables with TIMESTAMP columns (README, \"When main differs from the source\")";

  /** Instants at which the zones are compared: January and July, one year in ten. */
  private static final List<Instant> SAMPLES = samples();

  private static final DateTimeFormatter SQL_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT);

  private SnapshotTimeZoneCheck() {}

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
    String zoneSetting = driverSetting(connector, "connectionTimeZone");
    boolean force =
        Boolean.parseBoolean(driverSetting(connector, "forceConnectionTimeZoneToSession"));
    String shown = zoneSetting == null ? "SERVER (Debezium's default)" : zoneSetting;
    boolean serverZone = zoneSetting == null
        || zoneSetting.isBlank()
        || zoneSetting.trim().equalsIgnoreCase("SERVER");
    if (!serverZone && zoneSetting.trim().equalsIgnoreCase("LOCAL")) {
      findings.add(new Finding(
          Finding.Level.WARNING,
          ZONE,
          "LOCAL: the driver reads the server's TIMESTAMP text in the Connect worker's own time"
              + " zone, which this check cannot see; where it is not the server's, every TIMESTAMP"
              + " a snapshot reads arrives off by the difference: " + FIX));
      return;
    }
    ZoneId readZone = null;
    if (!serverZone) {
      try {
        readZone = ZoneId.of(zoneSetting.trim());
      } catch (DateTimeException e) {
        findings.add(new Finding(
            Finding.Level.WARNING,
            ZONE,
            zoneSetting + ": not a time zone MySQL's driver reads (" + e.getMessage() + "): "
                + FIX));
        return;
      }
    }
    ServerZone server = serverZone(connection);
    if (server == null) {
      findings.add(new Finding(
          Finding.Level.INFO,
          ZONE,
          shown + ": the server's time zone offsets could not be read (CONVERT_TZ gave null),"
              + " so whether a snapshot reads TIMESTAMP values right was not checked"));
      return;
    }
    // The zone the server prints a session's TIMESTAMP text in, and the zone the driver reads it
    // in.
    List<ZoneOffset> printed = new ArrayList<>();
    List<ZoneOffset> read = new ArrayList<>();
    for (int i = 0; i < SAMPLES.size(); i++) {
      ZoneOffset serverOffset = server.offsets().get(i);
      ZoneOffset forced = readZone == null ? null : readZone.getRules().getOffset(SAMPLES.get(i));
      printed.add(force && forced != null ? forced : serverOffset);
      read.add(forced == null ? serverOffset : forced);
    }
    String columns = timestampColumns.isEmpty()
        ? "no captured table has a TIMESTAMP column now (a later one would)"
        : "captured TIMESTAMP column(s): " + list(timestampColumns);
    Finding.Level level =
        timestampColumns.isEmpty() ? Finding.Level.WARNING : Finding.Level.BLOCKER;
    TreeSet<Long> offBy = new TreeSet<>();
    for (int i = 0; i < SAMPLES.size(); i++) {
      offBy.add((long) printed.get(i).getTotalSeconds() - read.get(i).getTotalSeconds());
    }
    offBy.remove(0L);
    if (!offBy.isEmpty()) {
      findings.add(new Finding(
          level,
          ZONE,
          shown + (force ? "" : " without " + FORCE + "=true") + ": the server prints a"
              + " session's TIMESTAMP values in its zone (" + server.name() + ") and the"
              + " connector's driver reads them as " + readZone + ", so every TIMESTAMP a snapshot"
              + " reads arrives shifted by " + hours(offBy) + " (streamed changes are right); "
              + columns + ". To fix: " + FIX));
      return;
    }
    if (new TreeSet<>(printed).size() > 1) {
      String zone = force && readZone != null ? readZone.toString() : server.name();
      findings.add(new Finding(
          level,
          ZONE,
          shown + ": the connector's snapshot reads TIMESTAMP values as text in " + zone
              + ", whose clocks go back: a value in an hour that repeats arrives an hour off"
              + " (streamed changes are right); " + columns + ". To fix: " + FIX));
      return;
    }
    findings.add(new Finding(
        Finding.Level.OK,
        ZONE,
        shown + ": snapshots read TIMESTAMP values in "
            + (force && readZone != null ? readZone : server.name()) + ", a fixed offset ("
            + printed.get(0) + ")"));
  }

  /** A setting passed to the connector's JDBC driver: Debezium's {@code driver.} prefix wins. */
  private static String driverSetting(Map<String, String> connector, String name) {
    String value = connector.get("driver." + name);
    return value != null ? value : connector.get("database." + name);
  }

  /** The server's global time zone, as its sessions start, and its offsets at {@link #SAMPLES}. */
  private record ServerZone(String name, List<ZoneOffset> offsets) {}

  private static ServerZone serverZone(Connection connection) throws SQLException {
    StringBuilder sql = new StringBuilder("SELECT @@global.time_zone, @@system_time_zone");
    for (Instant sample : SAMPLES) {
      sql.append(", CONVERT_TZ('")
          .append(SQL_TIME.format(sample.atOffset(ZoneOffset.UTC)))
          .append("', '+00:00', @@global.time_zone)");
    }
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery(sql.toString())) {
      rs.next();
      String zone = rs.getString(1);
      String name = "SYSTEM".equalsIgnoreCase(zone)
          ? "SYSTEM, the operating system's " + rs.getString(2)
          : zone;
      List<ZoneOffset> offsets = new ArrayList<>();
      for (int i = 0; i < SAMPLES.size(); i++) {
        String local = rs.getString(3 + i);
        if (local == null) {
          return null;
        }
        LocalDateTime there = LocalDateTime.parse(local.substring(0, 19).replace(' ', 'T'));
        long seconds = Duration.between(
                SAMPLES.get(i).atOffset(ZoneOffset.UTC).toLocalDateTime(), there)
            .getSeconds();
        offsets.add(ZoneOffset.ofTotalSeconds((int) seconds));
      }
      return new ServerZone(name, offsets);
    }
  }

  private static List<Instant> samples() {
    List<Instant> out = new ArrayList<>();
    for (int year = 1975; year <= 2035; year += 10) {
      out.add(LocalDateTime.of(year, 1, 15, 12, 0).toInstant(ZoneOffset.UTC));
      out.add(LocalDateTime.of(year, 7, 15, 12, 0).toInstant(ZoneOffset.UTC));
    }
    return List.copyOf(out);
  }

  private static String hours(TreeSet<Long> seconds) {
    List<String> out = new ArrayList<>();
    for (long s : seconds) {
      out.add((s > 0 ? "+" : "") + (s % 3600 == 0 ? (s / 3600) + " h" : s + " s"));
    }
    return String.join(" or ", out);
  }

  private static String list(List<String> names) {
    return names.size() <= 5
        ? String.join(", ", names)
        : String.join(", ", names.subList(0, 5)) + " and " + (names.size() - 5) + " more";
  }
}
