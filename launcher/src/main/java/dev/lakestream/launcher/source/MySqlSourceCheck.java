package dev.lakestream.launcher.source;

import dev.lakestream.common.debezium.SourceTable;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks a MySQL or MariaDB server before the pipeline captures it, as Debezium's binlog connectors
 * need it: the binary log on, in ROW format, with FULL row images (a MINIMAL or NOBLOB image leaves
 * columns out of updates, which would come out as partial rows), a server id, and for every table
 * the connector captures (its {@code database.include.list} / {@code table.include.list}) a primary
 * key, and TIME columns (values outside 00:00..24:00, which MySQL allows, are refused by the
 * pipeline), and whether the connector's snapshot reads TIMESTAMP values in the zone the server
 * prints them in ({@link SnapshotTimeZoneCheck}), and CHAR values as the binary log holds them
 * ({@link PaddedCharCheck}), and whether a time limit on statements can stop its snapshot ({@link
 * StatementTimeCheck}). Reads server variables and {@code information_schema}, and runs the
 * connector's {@code SET} statements that change only its own session.
 */
public final class MySqlSourceCheck {

  /** Data types Iceberg takes as no key column (identifier field). */
  private static final Set<String> FLOATING_POINT = Set.of("float", "double", "real");
  /** Types Debezium sends as doubles with {@code decimal.handling.mode=double}. */
  private static final Set<String> DECIMAL = Set.of("decimal", "numeric");

  private static final Pattern MAJOR_MINOR = Pattern.compile("^(\\d+)\\.(\\d+)");
  private static final Pattern JDBC_URL = Pattern.compile("^jdbc:(mysql|mariadb):");

  private final Connection connection;
  private final Map<String, String> connector;

  public MySqlSourceCheck(Connection connection, Map<String, String> connector) {
    this.connection = connection;
    this.connector = connector;
  }

  public List<Finding> run() throws SQLException {
    List<Finding> findings = new ArrayList<>();
    ConverterCheck.check(connector, findings);
    CaptureSettingsCheck.checkMySql(connector, findings);
    // Only MariaDB has the variable.
    boolean mariaDb = variable("gtid_domain_id") != null;
    snapshotReads(findings, mariaDb);
    String logBin = variable("log_bin");
    if (!"ON".equalsIgnoreCase(logBin) && !"1".equals(logBin)) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          "log_bin",
          "the binary log is off (" + logBin + "): start the server with log-bin"));
    }
    String format = variable("binlog_format");
    findings.add(
        "ROW".equalsIgnoreCase(format)
            ? new Finding(Finding.Level.OK, "binlog_format", "ROW")
            : new Finding(
                Finding.Level.BLOCKER, "binlog_format", format + ": set binlog_format=ROW"));
    String image = variable("binlog_row_image");
    findings.add(
        image == null || "FULL".equalsIgnoreCase(image)
            ? new Finding(Finding.Level.OK, "binlog_row_image", "FULL")
            : new Finding(
                Finding.Level.BLOCKER,
                "binlog_row_image",
                image + ": an update would carry only some columns"
                    + " and arrive as a partial row; set binlog_row_image=FULL (Debezium refuses to start otherwise)"));
    expiry(findings);
    String compression = variable("binlog_transaction_compression");
    if ("ON".equalsIgnoreCase(compression) || "1".equals(compression)) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          "binlog_transaction_compression",
          "ON: Debezium gives the rows of a compressed transaction one binary-log position, so"
              + " ingest cannot tell a change in it from a replay; set"
              + " binlog_transaction_compression=OFF"));
    }
    droppedRowEvents(findings, mariaDb);
    String version = variable("version");
    if (mariaDb && version != null) {
      mariaDbVersion(version, findings);
    }
    String serverId = variable("server_id");
    if ("0".equals(serverId)) {
      findings.add(new Finding(
          Finding.Level.BLOCKER, "server_id", "0: set a server id so replication can attach"));
    }
    CapturedTables captured = CapturedTables.binlog(connector);
    if (mariaDb) {
      unparsedTypes(captured, findings);
      unreadTables(captured, findings);
    }
    List<String[]> tables = tables();
    List<String> timestampColumns = new ArrayList<>();
    List<String> charKeys = new ArrayList<>();
    List<String> charColumns = new ArrayList<>();
    TableNames.check(
        tables.stream()
            .filter(t -> captured.captures(t[0], t[1]))
            .map(t -> new SourceTable(t[0], t[1]))
            .toList(),
        findings);
    for (String[] table : tables) {
      String name = table[0] + "." + table[1];
      if (!captured.captures(table[0], table[1])) {
        continue;
      }
      List<String> key = primaryKey(table[0], table[1]);
      Optional<List<String>> messageKey = captured.messageKeyColumns(table[0], table[1]);
      findings.add(
          key.isEmpty() && messageKey.isPresent()
              ? new Finding(
                  Finding.Level.OK, name, "no primary key; message.key.columns " + messageKey.get())
              : key.isEmpty()
                  ? new Finding(
                      Finding.Level.BLOCKER,
                      name,
                      "no primary key: ingest dead-letters every change of the table"
                          + " (add one, or set message.key.columns in the connector)")
                  : new Finding(Finding.Level.OK, name, "key " + key));
      if (Boolean.parseBoolean(table[2])) {
        findings.add(new Finding(
            Finding.Level.OK,
            name,
            "partitioned: a TRUNCATE, DROP or EXCHANGE PARTITION publishes no row change, so main"
                + " keeps or lacks those rows (README, \"MySQL and MariaDB\")"));
      }
      List<String[]> columns = columns(table[0], table[1]);
      List<String> capturedColumns = columns.stream()
          .map(c -> c[0])
          .filter(c -> !captured.leavesOut(table[0], table[1], c))
          .toList();
      ReservedColumnNames.check(name, capturedColumns).ifPresent(findings::add);
      columns.stream()
          .filter(c -> "timestamp".equalsIgnoreCase(c[1]) && capturedColumns.contains(c[0]))
          .forEach(c -> timestampColumns.add(name + "." + c[0]));
      List<String> keyColumns = messageKey.orElse(key);
      captured.maskedKey(table[0], table[1], keyColumns, name).ifPresent(findings::add);
      columns.stream()
          .filter(c -> "char".equalsIgnoreCase(c[1]) && capturedColumns.contains(c[0]))
          .forEach(
              c -> (keyColumns.contains(c[0]) ? charKeys : charColumns).add(name + "." + c[0]));
      boolean decimalsAsDoubles = ConverterCheck.decimalsAsDoubles(connector);
      List<String> badKey = columns.stream()
          .filter(c -> keyColumns.contains(c[0])
              && (FLOATING_POINT.contains(c[1].toLowerCase(Locale.ROOT))
                  || (decimalsAsDoubles && DECIMAL.contains(c[1].toLowerCase(Locale.ROOT)))))
          .map(c -> c[0] + " " + c[1])
          .toList();
      if (!badKey.isEmpty()) {
        findings.add(new Finding(
            Finding.Level.BLOCKER,
            name,
            "key column(s) " + badKey + ": Iceberg takes no floating-point column as a key"
                + " (identifier field), so ingest dead-letters every change of the table. Change"
                + " the column's type (DECIMAL), or key the table by other unique columns (the"
                + " connector's message.key.columns)"
                + (decimalsAsDoubles
                    ? "; a DECIMAL key arrives as a double with the connector's"
                        + " decimal.handling.mode=double: set it to precise"
                    : "")));
      }
      TinyIntBooleanCheck.check(
          connector,
          table[0],
          table[1],
          columns.stream().filter(c -> capturedColumns.contains(c[0])).toList(),
          keyColumns,
          findings);
      for (String column : columns.stream()
          .filter(c -> "time".equals(c[1].toLowerCase(Locale.ROOT)))
          .map(c -> c[0])
          .toList()) {
        findings.add(
            new Finding(
                Finding.Level.WARNING,
                name + "." + column,
                "TIME: values below 00:00:00 or from"
                    + " 24:00:00 on (MySQL allows -838:59:59..838:59:59) have no Iceberg time and are dead-lettered"));
      }
    }
    SnapshotTimeZoneCheck.check(connection, connector, timestampColumns, findings);
    // The sql_mode and the statement time limit the connector's sessions run with.
    ConnectorSession.sameUser(connection, connector, findings);
    ConnectorSession.apply(connection, connector, findings);
    String globalSqlMode = variable("sql_mode");
    String sessionSqlMode = ConnectorSession.variable(connection, "sql_mode");
    PaddedCharCheck.check(globalSqlMode, sessionSqlMode, charKeys, charColumns, findings);
    SqlModeDdlCheck.check(globalSqlMode, sessionSqlMode, findings);
    String limit = StatementTimeCheck.variable(mariaDb);
    StatementTimeCheck.check(
        limit, ConnectorSession.variable(connection, limit), variable(limit), findings);
    return findings;
  }

  /**
   * A MariaDB server's version as Debezium 3.6.1's MySQL connector reads it: from 8.4 on it asks
   * for {@code SHOW BINARY LOG STATUS}, which MariaDB does not have; with the word "MariaDB" its
   * binary-log client reads MariaDB's GTID events, and a restarted connector skips rows.
   */
  private static void mariaDbVersion(String version, List<Finding> findings) {
    String advice = " Report a MySQL 5.7 version without the word MariaDB (my.cnf: [mariadb]"
        + " version=5.7.19-log; clients that look at the version then see MySQL 5.7)";
    Matcher number = MAJOR_MINOR.matcher(version);
    if (number.find()) {
      int major = Integer.parseInt(number.group(1));
      int minor = Integer.parseInt(number.group(2));
      if (major > 8 || (major == 8 && minor >= 4)) {
        findings.add(new Finding(
            Finding.Level.BLOCKER,
            "version",
            version + ": Debezium 3.6.1's MySQL connector reads it as MySQL 8.4 or later and asks"
                + " for SHOW BINARY LOG STATUS, which MariaDB does not have: it fails to start."
                + advice));
      }
    }
    if (version.toLowerCase(Locale.ROOT).contains("mariadb")) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          "version",
          version + ": says MariaDB, so the connector's binary-log client reads MariaDB's GTID"
              + " events, and a restarted connector skips the first rows written after its"
              + " offsets. Tables mirrored while the version said so may lack rows: drop them and"
              + " snapshot them again (README, \"When main differs from the source\")." + advice));
    }
  }

  /**
   * How long the server keeps its binary logs: a connector stopped (or behind) longer than that
   * finds the changes it had not read purged, and its task fails at start.
   */
  private void expiry(List<Finding> findings) throws SQLException {
    long seconds = 0;
    try {
      String set = variable("binlog_expire_logs_seconds");
      if (set != null) {
        seconds = Long.parseLong(set.trim());
      }
      String days = variable("expire_logs_days");
      if (seconds <= 0 && days != null) {
        seconds = Math.round(Double.parseDouble(days.trim()) * 86_400);
      }
    } catch (NumberFormatException e) {
      return;
    }
    findings.add(
        seconds <= 0
            ? new Finding(
                Finding.Level.INFO,
                "binlog_expire_logs_seconds",
                "0: the server sets no expiry of its binary logs (a managed service may purge them"
                    + " on its own retention; purge only what the connector has read)")
            : new Finding(
                Finding.Level.INFO,
                "binlog_expire_logs_seconds",
                seconds + " (" + String.format(Locale.ROOT, "%.1f", seconds / 3600.0) + " h):"
                    + " a connector stopped or behind longer finds the changes it had not read"
                    + " purged, and its task fails at start (README, \"A lost replication"
                    + " slot\")"));
  }

  /**
   * Server settings under which the binary log holds row events that Debezium 3.6.1's binlog
   * reader skips without an error (so {@code main} would miss those changes), or row events without
   * a position of their own (so a later change of a key in a transaction looks like a replay).
   */
  private void droppedRowEvents(List<Finding> findings, boolean mariaDb) throws SQLException {
    if (mariaDb && isOn(variable("log_bin_compress"))) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          "log_bin_compress",
          "ON: row events longer than log_bin_compress_min_len are written compressed, and"
              + " Debezium's binary-log reader drops them without an error: main would miss those"
              + " inserts, updates and deletes. Set log_bin_compress=OFF; binary logs written with"
              + " it on need a new snapshot"));
    }
    String legacyPositions = variable("binlog_legacy_event_pos");
    if (mariaDb && legacyPositions != null && !isOn(legacyPositions)) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          "binlog_legacy_event_pos",
          legacyPositions + " (MariaDB 11.4's default): the row events of a transaction carry no"
              + " position of their own, so its changes share one and ingest takes a later change"
              + " of a key for a replay of an earlier one; set binlog_legacy_event_pos=ON"));
    }
    String rowValues = variable("binlog_row_value_options");
    if (rowValues != null && rowValues.toUpperCase(Locale.ROOT).contains("PARTIAL_JSON")) {
      findings.add(
          new Finding(
              Finding.Level.BLOCKER,
              "binlog_row_value_options",
              rowValues
                  + ": updates of JSON columns may be logged as partial updates, which Debezium"
                  + " drops: main would keep those rows as they were; set binlog_row_value_options=''"));
    }
  }

  private static boolean isOn(String value) {
    return "ON".equalsIgnoreCase(value) || "1".equals(value);
  }

  private String variable(String name) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SHOW GLOBAL VARIABLES LIKE '" + name + "'")) {
      return rs.next() ? rs.getString(2) : null;
    }
  }

  /**
   * MariaDB's own column types, which the DDL parser of Debezium 3.6.1's MySQL connector does not
   * know, with the type a column can be changed to.
   */
  private static final Map<String, String> UNPARSED_TYPES =
      Map.of("uuid", "CHAR(36)", "inet6", "VARCHAR(39)", "inet4", "VARCHAR(15)");

  private static final String SKIP_UNPARSEABLE = "schema.history.internal.skip.unparseable.ddl";

  /** The server's own databases, which no connector captures, as an SQL list. */
  private static final String SYSTEM_DATABASES =
      "('mysql', 'information_schema', 'performance_schema', 'sys')";

  /**
   * The columns of MariaDB's own types in the base tables whose definitions stop the connector: it
   * cannot parse them, and stops, for every table (seen with Debezium 3.6.1 on MariaDB 10.11), when
   * it reads one, in its snapshot (every table on the server, captured or not) or at a {@code
   * CREATE} or {@code ALTER} in the binary log. With {@code ...skip.unparseable.ddl} it passes over
   * them, which serves a table it does not capture; a captured table's changes then stop it (its
   * schema is unknown).
   */
  private void unparsedTypes(CapturedTables captured, List<Finding> findings) throws SQLException {
    boolean skipUnparseable = Boolean.parseBoolean(connector.get(SKIP_UNPARSEABLE));
    Map<String, List<String>> byTable = new LinkedHashMap<>();
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT c.table_schema, c.table_name, c.column_name,"
            + " c.data_type FROM information_schema.columns c JOIN information_schema.tables t"
            + " ON t.table_schema = c.table_schema AND t.table_name = c.table_name"
            + " WHERE t.table_type = 'BASE TABLE' AND LOWER(c.data_type) IN ('uuid', 'inet6', 'inet4')"
            + " AND c.table_schema NOT IN " + SYSTEM_DATABASES
            + " ORDER BY c.table_schema, c.table_name, c.ordinal_position")) {
      while (rs.next()) {
        String database = rs.getString(1);
        String table = rs.getString(2);
        boolean capturedTable = captured.captures(database, table);
        if (capturedTable || !skipUnparseable) {
          String type = rs.getString(4).toLowerCase(Locale.ROOT);
          byTable
              .computeIfAbsent(
                  database + "." + table + (capturedTable ? "" : " (not captured)"),
                  k -> new ArrayList<>())
              .add(rs.getString(3) + " " + type.toUpperCase(Locale.ROOT) + " (make it "
                  + UNPARSED_TYPES.get(type) + ")");
        }
      }
    }
    for (Map.Entry<String, List<String>> table : byTable.entrySet()) {
      boolean capturedTable = !table.getKey().endsWith(" (not captured)");
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          table.getKey(),
          "column(s) " + String.join(", ", table.getValue()) + ": MariaDB's own type(s), which"
              + " Debezium's MySQL connector cannot parse; it stops, for every table, when it"
              + " reads the table's definition (in its snapshot, and at a CREATE or ALTER of the"
              + " table in the binary log). "
              + (capturedTable
                  ? "Change the column(s) to the type(s) named, or leave the table out"
                      + " (table.exclude.list) and set " + SKIP_UNPARSEABLE + "=true"
                  : "Change the column(s) to the type(s) named, or set " + SKIP_UNPARSEABLE
                      + "=true (the connector then passes over a definition it cannot parse,"
                      + " also of a captured table, whose changes then stop it: check the"
                      + " connector after an ALTER of a captured table)")));
    }
  }

  /**
   * MariaDB's tables that stop Debezium 3.6.1's MySQL connector, for every table (each seen on
   * MariaDB 10.11): a captured sequence (a {@code NEXTVAL} writes a row of a table whose schema it
   * does not know), a system-versioned table whose definition it reads (it cannot parse {@code WITH
   * SYSTEM VERSIONING}), and a {@code COMPRESSED} column in any table on the server (its binary-log
   * reader cannot decode the column's type; leaving the table out does not help).
   */
  private void unreadTables(CapturedTables captured, List<Finding> findings) throws SQLException {
    boolean skipUnparseable = Boolean.parseBoolean(connector.get(SKIP_UNPARSEABLE));
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT table_schema, table_name, table_type"
            + " FROM information_schema.tables WHERE table_type IN ('SEQUENCE', 'SYSTEM VERSIONED')"
            + " AND table_schema NOT IN " + SYSTEM_DATABASES
            + " ORDER BY table_schema, table_name")) {
      while (rs.next()) {
        String database = rs.getString(1);
        String table = rs.getString(2);
        boolean capturedTable = captured.captures(database, table);
        String name = database + "." + table;
        if ("SEQUENCE".equals(rs.getString(3))) {
          if (capturedTable) {
            findings.add(new Finding(
                Finding.Level.BLOCKER,
                name,
                "a sequence: its NEXTVAL writes a row the connector has no schema for, and it stops,"
                    + " for every table. Leave it out (table.exclude.list)"
                    + (skipUnparseable
                        ? ""
                        : "; a CREATE SEQUENCE in the binary log stops it too unless "
                            + SKIP_UNPARSEABLE + "=true")));
          }
        } else if (capturedTable || !skipUnparseable) {
          findings.add(new Finding(
              Finding.Level.BLOCKER,
              name + (capturedTable ? "" : " (not captured)"),
              "system-versioned: Debezium's MySQL connector cannot parse its definition (WITH"
                  + " SYSTEM VERSIONING) and stops, for every table, when it reads it in its"
                  + " snapshot. "
                  + (capturedTable
                      ? "Leave it out (table.exclude.list) and set " + SKIP_UNPARSEABLE + "=true"
                      : "Set " + SKIP_UNPARSEABLE + "=true")));
        }
      }
    }
    Map<String, List<String>> compressed = new LinkedHashMap<>();
    try (Statement s = connection.createStatement();
        // MariaDB prints a compressed column's type as "blob /*M!100301 COMPRESSED*/"; an ENUM or
        // SET may hold the word among its values.
        ResultSet rs = s.executeQuery("SELECT c.table_schema, c.table_name, c.column_name"
            + " FROM information_schema.columns c JOIN information_schema.tables t"
            + " ON t.table_schema = c.table_schema AND t.table_name = c.table_name"
            + " WHERE t.table_type IN ('BASE TABLE', 'SYSTEM VERSIONED')"
            + " AND c.data_type NOT IN ('enum', 'set') AND c.column_type LIKE '%COMPRESSED*/%'"
            + " AND c.table_schema NOT IN " + SYSTEM_DATABASES
            + " ORDER BY c.table_schema, c.table_name, c.ordinal_position")) {
      while (rs.next()) {
        compressed
            .computeIfAbsent(rs.getString(1) + "." + rs.getString(2), k -> new ArrayList<>())
            .add(rs.getString(3));
      }
    }
    for (Map.Entry<String, List<String>> table : compressed.entrySet()) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          table.getKey(),
          "COMPRESSED column(s) " + String.join(", ", table.getValue()) + ": the connector's"
              + " binary-log reader cannot decode their type, and the connector stops, for every"
              + " table, at the table's first change, captured or not. ALTER TABLE "
              + table.getKey() + " MODIFY each column without COMPRESSED"));
    }
  }

  /** The base tables outside the server's own databases: schema, name, and whether partitioned. */
  private List<String[]> tables() throws SQLException {
    List<String[]> out = new ArrayList<>();
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT table_schema, table_name, create_options"
            + " FROM information_schema.tables"
            + " WHERE table_type = 'BASE TABLE' AND table_schema NOT IN"
            + " " + SYSTEM_DATABASES
            + " ORDER BY table_schema, table_name")) {
      while (rs.next()) {
        String options = rs.getString(3);
        out.add(new String[] {
          rs.getString(1),
          rs.getString(2),
          String.valueOf(
              options != null && options.toLowerCase(Locale.ROOT).contains("partitioned"))
        });
      }
    }
    return out;
  }

  private List<String> primaryKey(String schema, String table) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT column_name FROM information_schema.key_column_usage"
            + " WHERE constraint_name = 'PRIMARY' AND table_schema = '" + escape(schema)
            + "' AND table_name = '"
            + escape(table) + "' ORDER BY ordinal_position")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  /**
   * How the connector's snapshot reads temporal columns: Debezium 3.6.1 reads {@code DATE}, {@code
   * TIME}, {@code DATETIME} and {@code TIMESTAMP} as blobs, which MariaDB's JDBC driver refuses
   * (the connector stops), and MySQL's driver gives a MariaDB {@code TIME} read in binary rows (a
   * positive {@code snapshot.fetch.size}) without its fraction, and {@code 00:00:00} as null.
   */
  private void snapshotReads(List<Finding> findings, boolean mariaDb) {
    String driver = connector.getOrDefault("database.jdbc.driver", "").trim();
    if (driver.startsWith("org.mariadb.")) {
      findings.add(new Finding(
          Finding.Level.BLOCKER,
          "database.jdbc.driver",
          driver + ": the connector's snapshot of a table with a DATE, TIME, DATETIME or"
              + " TIMESTAMP column stops the connector (\"cannot be decoded as Blob\"). Use"
              + " Debezium's default, MySQL's driver (remove database.jdbc.driver and"
              + " database.protocol), without snapshot.fetch.size"));
      return;
    }
    String fetch = connector.getOrDefault("snapshot.fetch.size", "").trim();
    if (mariaDb && fetch.matches("\\d+") && Long.parseLong(fetch) > 0) {
      findings.add(new Finding(
          Finding.Level.WARNING,
          "snapshot.fetch.size",
          fetch + ": the snapshot reads binary rows, and on MariaDB a TIME column's values lose"
              + " their fraction of a second (00:00:00 becomes null) in the snapshot's rows; leave"
              + " it unset (rows read as text)"));
    }
  }

  /** The table's columns, each its name, data type and column type, in order. */
  private List<String[]> columns(String schema, String table) throws SQLException {
    List<String[]> out = new ArrayList<>();
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT column_name, data_type, column_type FROM information_schema.columns"
                + " WHERE table_schema = '" + escape(schema) + "' AND table_name = '"
                + escape(table) + "'"
                + " ORDER BY ordinal_position")) {
      while (rs.next()) {
        out.add(new String[] {rs.getString(1), rs.getString(2), rs.getString(3)});
      }
    }
    return out;
  }

  private static String escape(String s) {
    return s.replace("'", "''");
  }

  /** Whether {@code jdbcUrl} is a MySQL or MariaDB one. */
  public static boolean handles(String jdbcUrl) {
    return JDBC_URL.matcher(jdbcUrl).find();
  }
}
