package dev.lakestream.launcher.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The session settings the connector's sessions run with, judged: a statement time limit, padded
 * CHAR values, a mode whose table definitions Debezium misreads, and Debezium's split of its
 * initial statements.
 */
class StatementTimeCheckTest {

  private static List<Finding> limit(String variable, String session, String global) {
    List<Finding> findings = new ArrayList<>();
    StatementTimeCheck.check(variable, session, global, findings);
    return findings;
  }

  @Test
  void noLimitIsNoFindingAndALiftedOneIsOk() {
    assertThat(limit("max_statement_time", "0.000000", "0.000000")).isEmpty();
    assertThat(limit("max_execution_time", null, null)).isEmpty();
    assertThat(limit("max_statement_time", "0.000000", "2.000000"))
        .singleElement()
        .satisfies(f -> assertThat(f.level()).isEqualTo(Finding.Level.OK));
  }

  @Test
  void aLimitInTheConnectorsSessionsIsABlocker() {
    assertThat(limit("max_statement_time", "2.000000", "2.000000"))
        .singleElement()
        .satisfies(f -> assertThat(f.toString())
            .startsWith("BLOCKER  max_statement_time: 2.000000 s in the connector's sessions: the"
                + " server stops a statement that runs longer"));
    assertThat(limit("max_execution_time", "500", "0"))
        .singleElement()
        .satisfies(f -> assertThat(f.level()).isEqualTo(Finding.Level.BLOCKER));
  }

  /** MariaDB's {@code @@sql_mode} after {@code SET sql_mode = 'ORACLE'}. */
  private static final String ORACLE = "PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ORACLE,"
      + "NO_KEY_OPTIONS,NO_TABLE_OPTIONS,NO_FIELD_OPTIONS,NO_AUTO_CREATE_USER,SIMULTANEOUS_ASSIGNMENT";

  private static List<Finding> ddl(String global, String session) {
    List<Finding> findings = new ArrayList<>();
    SqlModeDdlCheck.check(global, session, findings);
    return findings;
  }

  @Test
  void oracleInTheConnectorsSessionsIsABlockerAndOnTheServerAWarning() {
    assertThat(ddl(ORACLE, ORACLE))
        .extracting(Finding::level)
        .containsExactly(Finding.Level.BLOCKER, Finding.Level.WARNING);
    assertThat(ddl(ORACLE, ORACLE).get(0).message())
        .startsWith("ORACLE,NO_KEY_OPTIONS,NO_TABLE_OPTIONS,NO_FIELD_OPTIONS in the connector's")
        .contains("mariadb_schema.date");
    // The shipped statements' session: ORACLE and the options' modes out, ANSI_QUOTES kept.
    assertThat(ddl(ORACLE, "PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,NO_AUTO_CREATE_USER"))
        .extracting(Finding::level)
        .containsExactly(Finding.Level.OK, Finding.Level.WARNING);
    assertThat(ddl("NO_TABLE_OPTIONS", "NO_TABLE_OPTIONS"))
        .singleElement()
        .satisfies(f -> assertThat(f.level()).isEqualTo(Finding.Level.WARNING));
    assertThat(ddl("STRICT_TRANS_TABLES,ANSI_QUOTES", "STRICT_TRANS_TABLES,ANSI_QUOTES"))
        .isEmpty();
    String maxdb = "PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,MAXDB,NO_KEY_OPTIONS,"
        + "NO_TABLE_OPTIONS,NO_FIELD_OPTIONS,NO_AUTO_CREATE_USER";
    assertThat(ddl(maxdb, maxdb))
        .extracting(Finding::level)
        .containsExactly(Finding.Level.BLOCKER, Finding.Level.WARNING);
    assertThat(ddl(maxdb, maxdb).get(1).message()).contains("TIMESTAMP").contains("fail");
    // A name that only contains a mode's is not the mode.
    assertThat(ddl("ORACLE_LIKE", null)).isEmpty();
  }

  @Test
  void paddedCharKeysAreABlockerAndOtherCharColumnsAWarning() {
    List<Finding> keys = new ArrayList<>();
    PaddedCharCheck.check(
        "PAD_CHAR_TO_FULL_LENGTH",
        "STRICT_TRANS_TABLES,PAD_CHAR_TO_FULL_LENGTH",
        List.of("db.t.k"),
        List.of(),
        keys);
    assertThat(keys).singleElement().satisfies(f -> {
      assertThat(f.level()).isEqualTo(Finding.Level.BLOCKER);
      assertThat(f.message()).contains("on main twice").contains("db.t.k");
    });
    List<Finding> values = new ArrayList<>();
    PaddedCharCheck.check(
        "PAD_CHAR_TO_FULL_LENGTH", "PAD_CHAR_TO_FULL_LENGTH", List.of(), List.of("db.t.v"), values);
    assertThat(values).singleElement().satisfies(f -> assertThat(f.level())
        .isEqualTo(Finding.Level.WARNING));
    List<Finding> none = new ArrayList<>();
    PaddedCharCheck.check(
        "PAD_CHAR_TO_FULL_LENGTH", "STRICT_TRANS_TABLES", List.of("db.t.k"), List.of(), none);
    assertThat(none).singleElement().satisfies(f -> assertThat(f.level())
        .isEqualTo(Finding.Level.OK));
  }

  @Test
  void onlyStatementsThatSetSessionVariablesAreRunHere() {
    assertThat(ConnectorSession.sessionOnly("SET SESSION max_statement_time = 0"))
        .isTrue();
    assertThat(ConnectorSession.sessionOnly("set sql_mode = (SELECT 'ANSI')")).isTrue();
    assertThat(ConnectorSession.sessionOnly("SET\tNAMES utf8mb4")).isTrue();
    assertThat(ConnectorSession.sessionOnly("SET GLOBAL max_statement_time = 0"))
        .isFalse();
    assertThat(ConnectorSession.sessionOnly("SET @@global.sql_mode = ''")).isFalse();
    assertThat(ConnectorSession.sessionOnly("SET SESSION a = 0, GLOBAL b = 1")).isFalse();
    assertThat(ConnectorSession.sessionOnly("SET PERSIST max_execution_time = 0"))
        .isFalse();
    assertThat(ConnectorSession.sessionOnly("SET PASSWORD = 'x'")).isFalse();
    assertThat(ConnectorSession.sessionOnly("SET DEFAULT ROLE ALL TO u")).isFalse();
    assertThat(ConnectorSession.sessionOnly("SET STATEMENT a = 1 FOR DELETE FROM t"))
        .isFalse();
    assertThat(ConnectorSession.sessionOnly("SELECT 1")).isFalse();
    assertThat(ConnectorSession.sessionOnly("SETTLE")).isFalse();
  }

  @Test
  void initialStatementsAreSplitAsDebeziumSplitsThem() {
    assertThat(ConnectorSession.split("SET a = 1;SET b = ';;'"))
        .containsExactly("SET a = 1", "SET b = ';'");
    assertThat(ConnectorSession.split("SET a = 1; ;SET b = 2"))
        .containsExactly("SET a = 1", "SET b = 2");
    assertThat(ConnectorSession.split("SET a = 1;")).containsExactly("SET a = 1");
  }
}
