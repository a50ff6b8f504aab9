package dev.lakestream.launcher.source;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Whether the connector reads tables' definitions as MariaDB means them. Debezium's MySQL grammar
 * parses MariaDB's native syntax (and double-quoted names when its own session has {@code
 * ANSI_QUOTES}). Seen with Debezium 3.6.1 on MariaDB 10.11:
 *
 * <ul>
 *   <li>In a session under {@code sql_mode=ORACLE}, {@code SHOW CREATE TABLE}, which a snapshot
 *       reads, prints a {@code DATE} column as {@code mariadb_schema.date}; Debezium cannot parse
 *       it and the snapshot stops the connector; {@code NO_TABLE_OPTIONS}, part of {@code ORACLE},
 *       leaves each table's character set out. The shipped connectors take these modes out of
 *       their sessions ({@code database.initial.statements}).
 *   <li>{@code MAXDB} prints a {@code TIMESTAMP} column as {@code mariadb_schema.timestamp}, with
 *       the same end. {@code MSSQL}, {@code DB2} and {@code POSTGRESQL} (measured), {@code ANSI},
 *       {@code MYSQL323} and {@code MYSQL40} (from MariaDB's source) leave options out as {@code
 *       NO_TABLE_OPTIONS} does.
 *   <li>DDL written in a session under {@code sql_mode=ORACLE} is logged as written: {@code DATE}
 *       there is a {@code DATETIME}, which Debezium reads as a {@code DATE}, so its values reach
 *       {@code main} without their time of day; Oracle's type names ({@code VARCHAR2}) stop the
 *       connector. Under {@code MAXDB} a {@code TIMESTAMP} is a {@code DATETIME}, whose values
 *       Debezium fails to convert: it sends them as null, or stops with {@code
 *       event.converting.failure.handling.mode=fail}. The server's {@code sql_mode} is every
 *       session's default.
 * </ul>
 */
final class SqlModeDdlCheck {

  static final String ORACLE = "ORACLE";
  static final String MAXDB = "MAXDB";

  /** Modes that change what {@code SHOW CREATE TABLE} prints; the shipped statements drop them. */
  static final List<String> SHOW_CREATE_MODES = List.of(
      ORACLE,
      MAXDB,
      "ANSI",
      "MSSQL",
      "DB2",
      "POSTGRESQL",
      "MYSQL323",
      "MYSQL40",
      "NO_KEY_OPTIONS",
      "NO_TABLE_OPTIONS",
      "NO_FIELD_OPTIONS");

  private SqlModeDdlCheck() {}

  /**
   * Adds a finding when the connector's sessions, or the sessions that write DDL by default, run
   * under a mode whose table definitions Debezium misreads.
   *
   * @param globalSqlMode the server's {@code sql_mode}
   * @param sessionSqlMode the {@code sql_mode} the connector's sessions run with
   */
  static void check(String globalSqlMode, String sessionSqlMode, List<Finding> findings) {
    Set<String> session = modes(sessionSqlMode);
    Set<String> global = modes(globalSqlMode);
    List<String> kept = SHOW_CREATE_MODES.stream().filter(session::contains).toList();
    List<String> unparseable = new ArrayList<>();
    if (kept.contains(ORACLE)) {
      unparseable.add("a DATE column as mariadb_schema.date");
    }
    if (kept.contains(MAXDB)) {
      unparseable.add("a TIMESTAMP column as mariadb_schema.timestamp");
    }
    if (!kept.isEmpty()) {
      findings.add(new Finding(
          unparseable.isEmpty() ? Finding.Level.WARNING : Finding.Level.BLOCKER,
          "sql_mode",
          String.join(",", kept) + " in the connector's sessions: SHOW CREATE TABLE, which its"
              + " snapshot reads, then "
              + (unparseable.isEmpty()
                  ? "leaves out options, such as a table's character set."
                  : "prints " + String.join(" and ", unparseable)
                      + ", which Debezium cannot parse: a snapshot stops the connector.")
              + " Set the shipped connector's " + ConnectorSession.STATEMENTS
              + " (it takes these modes out of its sessions)"));
    } else if (global.stream().anyMatch(SHOW_CREATE_MODES::contains)) {
      findings.add(new Finding(
          Finding.Level.OK,
          "sql_mode",
          "ORACLE, MAXDB or a mode that leaves options out of SHOW CREATE TABLE on the server:"
              + " the connector's " + ConnectorSession.STATEMENTS + " take them out of its"
              + " sessions"));
    }
    if (global.contains(ORACLE)) {
      findings.add(ddlWrittenUnder(
          ORACLE,
          "a column created as DATE there is a DATETIME and reaches main without its time of"
              + " day, and Oracle's type names (VARCHAR2, NUMBER) stop the connector."));
    }
    if (global.contains(MAXDB)) {
      findings.add(ddlWrittenUnder(
          MAXDB,
          "a column created as TIMESTAMP there is a DATETIME, whose values Debezium fails to"
              + " convert: they reach main as null, or, with the shipped"
              + " event.converting.failure.handling.mode=fail, stop the connector until a"
              + " recovery (README)."));
    }
  }

  /** The warning for a server whose default {@code mode} makes DDL Debezium misreads. */
  private static Finding ddlWrittenUnder(String mode, String misread) {
    return new Finding(
        Finding.Level.WARNING,
        "sql_mode",
        mode + " on the server, so every session writes DDL under it unless it sets another"
            + " sql_mode; Debezium reads DDL as MariaDB's own: " + misread + " Create and alter"
            + " captured tables in sessions without it (SET SESSION sql_mode = ...), or take it"
            + " out of the server's sql_mode");
  }

  private static Set<String> modes(String sqlMode) {
    return sqlMode == null
        ? Set.of()
        : Arrays.stream(sqlMode.toUpperCase(Locale.ROOT).split(","))
            .map(String::trim)
            .collect(Collectors.toSet());
  }
}
