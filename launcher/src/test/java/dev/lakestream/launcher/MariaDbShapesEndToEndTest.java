package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedMariaDb;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * MySQL shapes the project's own workload never makes, on real MariaDB through Debezium's MySQL
 * connector (the shipped {@code connectors/mariadb-inventory.json}): primary keys of every kind
 * (a case-insensitive collation, unsigned {@code BIGINT} past {@code Long.MAX_VALUE}, {@code
 * BINARY}, {@code DATETIME(6)}, {@code DECIMAL}, {@code ENUM}, {@code CHAR}, two columns in
 * another order than the table's), {@code REPLACE} and {@code INSERT ... ON DUPLICATE KEY UPDATE},
 * {@code TRUNCATE}, a table truncated, dropped and created again, statements of 30,000 rows,
 * generated columns, a table name with a dot, zero dates. Each table's {@code main} and {@code
 * realtime} are compared with {@code SELECT *}; what no table can take (a table without a key, a
 * changed primary key, a type Iceberg cannot change to) is dead-lettered with its reason while the
 * other tables go on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MariaDbShapesEndToEndTest {

  private static final Duration SYNCED = Duration.ofSeconds(300);
  private static final String CONNECTOR = "inventory-mariadb";
  private static final ObjectMapper JSON = new ObjectMapper();

  private EmbeddedKafka kafka;
  private EmbeddedMariaDb mariadb;
  private TemporaryWarehouse warehouse;
  private EmbeddedConnect connect;
  private StreamsApp ingest;
  private StreamsApp sync;
  private KafkaChangeFeed feed;
  private Catalog reader;

  @BeforeAll
  void startTheStack() throws Exception {
    assumeTrue(
        EmbeddedMariaDb.installed(), "MariaDB server binaries (apt-get install mariadb-server)");
    kafka = EmbeddedKafka.start();
    mariadb = EmbeddedMariaDb.start();
    warehouse = new TemporaryWarehouse();
    // Tables with rows before the connector starts: these rows come from its snapshot.
    mariadb.execute(
        "CREATE DATABASE inventory",
        "USE inventory",
        "CREATE TABLE t_trunc (id INT PRIMARY KEY, v VARCHAR(20))",
        "INSERT INTO t_trunc SELECT seq, CONCAT('v', seq) FROM seq_1_to_50",
        "CREATE TABLE t_bin (k BINARY(16) PRIMARY KEY, v INT)",
        "INSERT INTO t_bin VALUES (UNHEX('0102'), 1)",
        "CREATE TABLE t_recreated (id INT PRIMARY KEY, a INT)",
        "INSERT INTO t_recreated VALUES (1, 1), (2, 2)",
        "CREATE TABLE t_pk (id INT PRIMARY KEY, a INT)",
        "INSERT INTO t_pk VALUES (1, 1), (2, 2)");
    PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse)
        .with(IngestConfig.TOPICS_REGEX, "dbserver2\\.inventory\\..*")
        .with(IngestConfig.CHANGELOG_TABLES, "inventory.t_fence");
    connect = EmbeddedConnect.start(
        kafka.bootstrapServers(),
        Files.createTempDirectory("connect-mariadb-").resolve("connect.offsets"),
        1000);
    ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest-mariadb-shapes"));
    sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync-mariadb-shapes"));
    feed = new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel());
    reader = warehouse.catalog();
    ingest.start();
    sync.start();
    connect.createConnector(Files.readString(MariaDbEndToEndTest.connector()), shipped());
    // No CREATE or ALTER until the snapshot ends (snapshot.locking.mode=none, see the README):
    // its tables on main, whole, say that it has.
    for (String table : List.of("t_trunc", "t_bin", "t_recreated", "t_pk")) {
      TableIdentifier id = TableIdentifier.of("inventory", table);
      Eventually.noDifference(
          SYNCED, () -> differs(table, id, KEYS.getOrDefault(table, List.of("id"))));
    }
  }

  @AfterAll
  void stopTheStack() throws Exception {
    for (AutoCloseable part :
        new AutoCloseable[] {feed, sync, ingest, connect, warehouse, mariadb, kafka}) {
      if (part != null) {
        part.close();
      }
    }
  }

  /** Each table and its key columns, as the comparison reads them. */
  private static final Map<String, List<String>> KEYS = new LinkedHashMap<>();

  static {
    KEYS.put("t_trunc", List.of("id"));
    KEYS.put("t_bin", List.of("k"));
    KEYS.put("t_recreated", List.of("id"));
    KEYS.put("t_ci", List.of("k"));
    KEYS.put("t_ubig", List.of("k"));
    KEYS.put("t_dt", List.of("k"));
    KEYS.put("t_dec", List.of("k"));
    KEYS.put("t_enum", List.of("k"));
    KEYS.put("t_char", List.of("k"));
    KEYS.put("t_two", List.of("b", "a"));
    KEYS.put("t_replace", List.of("id"));
    KEYS.put("t_bulk", List.of("id"));
    KEYS.put("t_generated", List.of("id"));
    KEYS.put("dot.ted", List.of("id"));
  }

  @Test
  @Order(1)
  void keysOfEveryKindTruncatesAndStatementsOfManyRowsEndOnMainAsInMariaDb() throws Exception {
    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_ci (k VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT)"
            + " CHARACTER SET utf8mb4",
        "CREATE TABLE t_ubig (k BIGINT UNSIGNED PRIMARY KEY, v INT)",
        "CREATE TABLE t_dt (k DATETIME(6) PRIMARY KEY, v INT)",
        "CREATE TABLE t_dec (k DECIMAL(20,4) PRIMARY KEY, v INT)",
        "CREATE TABLE t_enum (k ENUM('x','y','z') PRIMARY KEY, v INT)",
        "CREATE TABLE t_char (k CHAR(5) PRIMARY KEY, v INT)",
        "CREATE TABLE t_two (a INT, b VARCHAR(5), v INT, PRIMARY KEY (b, a))",
        "CREATE TABLE t_replace (id INT PRIMARY KEY, u INT UNIQUE, v INT)",
        "CREATE TABLE t_bulk (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE t_generated (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL,"
            + " s INT AS (a + 1) STORED, h INT INVISIBLE DEFAULT 5)",
        "CREATE TABLE `dot.ted` (id INT PRIMARY KEY, `Mixed Col` INT)",
        "CREATE TABLE t_zero (id INT PRIMARY KEY, d DATE, dt DATETIME, dn DATE NOT NULL)");
    mariadb.execute(
        "USE inventory",
        // A key that differs only by case is the same row to MySQL: moved from 'a' to 'A'.
        "INSERT INTO t_ci VALUES ('a', 1), ('b', 2)",
        "UPDATE t_ci SET k = 'A' WHERE k = 'a'",
        "UPDATE t_ci SET v = 3 WHERE k = 'B'",
        "INSERT INTO t_ubig VALUES (18446744073709551615, 1), (9223372036854775808, 2), (1, 3)",
        "UPDATE t_ubig SET v = 10 WHERE k = 18446744073709551615",
        "DELETE FROM t_ubig WHERE k = 9223372036854775808",
        "INSERT INTO t_bin VALUES (UNHEX('00112233445566778899aabbccddeeff'), 1), (UNHEX('ff'), 2)",
        "UPDATE t_bin SET v = 10 WHERE k = UNHEX('00112233445566778899aabbccddeeff')",
        "DELETE FROM t_bin WHERE v = 2",
        "UPDATE t_bin SET k = UNHEX('03') WHERE k = UNHEX('0102')",
        "INSERT INTO t_dt VALUES ('2024-01-01 10:00:00.123456', 1), ('1000-01-01 00:00:00', 2),"
            + " ('9999-12-31 23:59:59.999999', 3)",
        "UPDATE t_dt SET v = 10 WHERE v = 1",
        "DELETE FROM t_dt WHERE v = 2",
        "INSERT INTO t_dec VALUES (1.5, 1), (-99999999.1234, 2), (0, 3)",
        "UPDATE t_dec SET v = 10 WHERE v = 1",
        "DELETE FROM t_dec WHERE v = 2",
        "INSERT INTO t_enum VALUES ('x', 1), ('y', 2)",
        "UPDATE t_enum SET k = 'z' WHERE k = 'x'",
        // CHAR keys lose their trailing spaces in MySQL: 'cd  ' is 'cd'.
        "INSERT INTO t_char VALUES ('ab', 1), ('cd  ', 2), ('ef', 3)",
        "UPDATE t_char SET v = 10 WHERE k = 'ab'",
        "DELETE FROM t_char WHERE k = 'cd'",
        "INSERT INTO t_two VALUES (1, 'x', 1), (2, 'x', 2), (1, 'y', 3)",
        "UPDATE t_two SET v = 10 WHERE a = 1 AND b = 'x'",
        "UPDATE t_two SET a = 5 WHERE a = 2",
        "DELETE FROM t_two WHERE b = 'y'",
        // REPLACE deletes the rows it collides with, by either unique key.
        "INSERT INTO t_replace VALUES (1, 1, 1), (2, 2, 2), (4, 4, 4)",
        "REPLACE INTO t_replace VALUES (1, 1, 10)",
        "REPLACE INTO t_replace VALUES (3, 2, 30)",
        "REPLACE INTO t_replace VALUES (5, 4, 50), (6, 6, 60)",
        "INSERT INTO t_replace VALUES (1, 5, 5) ON DUPLICATE KEY UPDATE v = v + 100",
        "INSERT INTO t_replace VALUES (7, 7, 7) ON DUPLICATE KEY UPDATE v = v + 100",
        // Statements of 30,000 rows each.
        "INSERT INTO t_bulk SELECT seq, seq FROM seq_1_to_30000",
        "UPDATE t_bulk SET v = v + 1",
        "DELETE FROM t_bulk WHERE id % 3 = 0",
        "INSERT INTO t_generated (id, a) VALUES (1, 1), (2, 2)",
        "UPDATE t_generated SET a = 10 WHERE id = 1",
        "INSERT INTO t_generated (id, a) VALUES (3, 3)",
        "INSERT INTO `dot.ted` VALUES (1, 1), (2, 2)",
        "UPDATE `dot.ted` SET `Mixed Col` = 10 WHERE id = 1",
        // Zero dates, which sql_mode='' lets in.
        "SET SESSION sql_mode = ''",
        "INSERT INTO t_zero VALUES (1, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00'),"
            + " (2, '2024-00-10', '2024-02-00 10:00:00', '2024-05-06')",
        "SET SESSION sql_mode = DEFAULT",
        // Truncated after the snapshot and written again; then truncated, dropped and created
        // again (the truncate empties the table; a DROP alone carries nothing).
        "UPDATE t_trunc SET v = 'u' WHERE id < 10",
        "TRUNCATE TABLE t_trunc",
        "INSERT INTO t_trunc VALUES (100, 'after'), (5, 'again')",
        "UPDATE t_trunc SET v = 'after2' WHERE id = 100",
        "TRUNCATE TABLE t_recreated",
        "DROP TABLE t_recreated",
        "CREATE TABLE t_recreated (id INT PRIMARY KEY, a INT, b VARCHAR(5))",
        "INSERT INTO t_recreated VALUES (3, 3, 'x')");

    for (Map.Entry<String, List<String>> table : KEYS.entrySet()) {
      TableIdentifier id = TableIdentifier.of("inventory", table.getKey().replace('.', '_'));
      Eventually.noDifference(SYNCED, () -> differs(table.getKey(), id, table.getValue()));
      Table iceberg = reader.loadTable(id);
      Verifier.Report report = Verifier.verify(iceberg, id.toString());
      assertThat(report.passed()).as(report.toString()).isTrue();
    }

    // SELECT * leaves out the INVISIBLE column; the table has it, with its values.
    assertThat(TableRows.read(
            reader.loadTable(TableIdentifier.of("inventory", "t_generated")), Branches.MAIN))
        .hasSize(3)
        .allSatisfy(row -> assertThat(row.get("h")).isEqualTo(5));

    // Debezium turns a zero date (and a zero month or day) into null, or the epoch's day where
    // the column is NOT NULL, before ingest sees it.
    TableIdentifier zero = TableIdentifier.of("inventory", "t_zero");
    Eventually.until(
        SYNCED,
        "both rows of t_zero on main",
        () -> reader.tableExists(zero)
            && TableRows.read(reader.loadTable(zero), Branches.MAIN).size() == 2);
    Map<List<Object>, Map<String, Object>> zeros =
        TableRows.byKey(TableRows.read(reader.loadTable(zero), Branches.MAIN), List.of("id"));
    Map<String, Object> first = zeros.get(List.of(1));
    assertThat(first.get("d")).isNull();
    assertThat(first.get("dt")).isNull();
    assertThat(first.get("dn")).isEqualTo(LocalDate.EPOCH);
    Map<String, Object> second = zeros.get(List.of(2));
    assertThat(second.get("d")).isNull();
    assertThat(second.get("dt")).isNull();
    assertThat(second.get("dn")).isEqualTo(LocalDate.of(2024, 5, 6));
  }

  @Test
  @Order(2)
  void whatNoTableCanTakeIsDeadLetteredWithItsReasonAndTheOtherTablesGoOn() throws Exception {
    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_keyless (a INT, b INT)",
        "INSERT INTO t_keyless VALUES (1, 1), (1, 1)",
        "CREATE TABLE t_retyped (id INT PRIMARY KEY, a INT, d DECIMAL(5,2))",
        "INSERT INTO t_retyped VALUES (1, 1, 1.5)",
        // Wider decimal precision: Iceberg widens the column.
        "ALTER TABLE t_retyped MODIFY d DECIMAL(10,2)",
        "INSERT INTO t_retyped VALUES (2, 2, 12345678.25)");
    TableIdentifier retyped = TableIdentifier.of("inventory", "t_retyped");
    Eventually.noDifference(SYNCED, () -> differs("t_retyped", retyped, List.of("id")));
    TableIdentifier pk = TableIdentifier.of("inventory", "t_pk");
    Eventually.noDifference(SYNCED, () -> differs("t_pk", pk, List.of("id")));
    mariadb.execute(
        "USE inventory",
        "ALTER TABLE t_retyped MODIFY a VARCHAR(10)",
        "INSERT INTO t_retyped VALUES (3, 'three', 3)",
        "ALTER TABLE t_pk DROP PRIMARY KEY, ADD PRIMARY KEY (id, a)",
        "INSERT INTO t_pk VALUES (1, 5)",
        "CREATE TABLE t_after (id INT PRIMARY KEY, v INT)",
        "INSERT INTO t_after VALUES (1, 1), (2, 2)",
        "UPDATE t_after SET v = 20 WHERE id = 2");

    Map<String, String> reasons = new HashMap<>();
    Eventually.until(SYNCED, "dead letters of t_keyless, t_retyped and t_pk", () -> {
      for (ConsumerRecord<byte[], byte[]> letter : feed.readAvailable("lakestream.dlq")) {
        reasons.put(
            KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC),
            KafkaHeaders.text(letter.headers(), DeadLetters.REASON));
      }
      return reasons
          .keySet()
          .containsAll(List.of(
              "dbserver2.inventory.t_keyless",
              "dbserver2.inventory.t_retyped",
              "dbserver2.inventory.t_pk"));
    });
    assertThat(reasons.get("dbserver2.inventory.t_keyless"))
        .contains("record has no key")
        .contains("binlog_row_image=FULL");
    assertThat(reasons.get("dbserver2.inventory.t_retyped"))
        .contains("column \"a\" is int in the table but the source now sends string");
    assertThat(reasons.get("dbserver2.inventory.t_pk"))
        .contains("has key [id] but the record's key is [id, a]");
    // The tables stay as they were before what they could not take; the others go on.
    TableIdentifier after = TableIdentifier.of("inventory", "t_after");
    Eventually.noDifference(SYNCED, () -> differs("t_after", after, List.of("id")));
    assertThat(differs("t_retyped", retyped, List.of("id")))
        .as("t_retyped's row 3 was dead-lettered")
        .contains("missing [[3]]");
    assertThat(TableRows.read(reader.loadTable(pk), Branches.MAIN)).hasSize(2);
  }

  /**
   * The connector stopped and registered again resumes at its own offsets: no row written after
   * them is skipped, whether the last transaction before the stop held one row or several. (Told
   * the server is MariaDB, Debezium 3.6.1's binary-log client reads MariaDB's GTID events, and a
   * restart skipped as many rows after its offsets as the last transaction had: see {@link
   * EmbeddedMariaDb#REPORTED_VERSION}.)
   */
  @Test
  @Order(3)
  void aConnectorRestartedAtItsOwnOffsetsSkipsNoRowWrittenAfter() throws Exception {
    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_restart (id INT PRIMARY KEY, v INT)",
        "INSERT INTO t_restart VALUES (1, 1)",
        "INSERT INTO t_restart VALUES (2, 2), (3, 3), (4, 4)");
    TableIdentifier restart = TableIdentifier.of("inventory", "t_restart");
    Eventually.noDifference(SYNCED, () -> differs("t_restart", restart, List.of("id")));
    for (int round = 0; round < 2; round++) {
      registerAgain(shipped());
      int id = 10 * (round + 1);
      mariadb.execute(
          "USE inventory",
          "INSERT INTO t_restart VALUES (" + id + ", 1)",
          "INSERT INTO t_restart VALUES (" + (id + 1) + ", 2), (" + (id + 2) + ", 3)",
          "UPDATE t_restart SET v = v + 10 WHERE id < 5");
      Eventually.noDifference(SYNCED, () -> differs("t_restart", restart, List.of("id")));
    }
    // Each row came from the binary log, none from a snapshot the restarts took again.
    assertThat(feed.readAvailable("dbserver2.inventory.t_restart"))
        .isNotEmpty()
        .noneMatch(r -> r.value() != null
            && new String(r.value(), StandardCharsets.UTF_8).contains("\"op\":\"r\""));
  }

  /**
   * DDL in MariaDB's own syntax, which Debezium 3.6.1's MySQL grammar cannot parse, stops the
   * connector for every table; the README's recovery (the connector registered again with {@code
   * snapshot.mode=recovery} and {@code schema.history.internal.skip.unparseable.ddl=true}, then
   * with its own settings) brings it back, and nothing written meanwhile is lost.
   */
  @Test
  @Order(5)
  void mariaDbOnlyDdlStopsTheConnectorAndTheReadmesRecoveryLosesNothing() throws Exception {
    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_ddl (id INT PRIMARY KEY, a INT)",
        "CREATE TABLE t_beside (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL,"
            + " data VARCHAR(2048))",
        "INSERT INTO t_ddl VALUES (1, 1), (2, 2)");
    TableIdentifier ddl = TableIdentifier.of("inventory", "t_ddl");
    Eventually.noDifference(SYNCED, () -> differs("t_ddl", ddl, List.of("id")));
    mariadb.execute(
        "USE inventory",
        "ALTER TABLE t_ddl ADD COLUMN IF NOT EXISTS b INT DEFAULT 7",
        "INSERT INTO t_ddl VALUES (3, 3, 3)",
        "UPDATE t_ddl SET b = 10 WHERE id = 1",
        "INSERT INTO t_beside VALUES (1, 1)");
    assertThat(failedTask()).contains("ADD COLUMN IF NOT EXISTS");

    Map<String, String> recovery = recovery();
    registerAgain(recovery);
    // The rows from before the statement hold null in b (MariaDB gave them its default without
    // rewriting them): an incremental snapshot of the table reads it whole.
    mariadb.execute("INSERT INTO inventory.debezium_signal VALUES ('recovered', 'execute-snapshot',"
        + " '{\"data-collections\": [\"inventory.t_ddl\"],"
        + " \"type\": \"incremental\"}')");
    Eventually.noDifference(SYNCED, () -> differs("t_ddl", ddl, List.of("id")));
    Eventually.noDifference(
        SYNCED,
        () -> differs("t_beside", TableIdentifier.of("inventory", "t_beside"), List.of("id")));

    // Back to the shipped snapshot.mode, but skip.unparseable.ddl stays: the schema history now
    // holds the statement, and a connector that cannot parse it fails reading its history. Later
    // changes, parseable DDL included, arrive.
    recovery.remove("snapshot.mode");
    registerAgain(recovery);
    mariadb.execute(
        "USE inventory",
        "ALTER TABLE t_ddl ADD COLUMN c VARCHAR(5)",
        "INSERT INTO t_ddl VALUES (4, 4, 4, 'four')",
        "DELETE FROM t_ddl WHERE id = 2");
    Eventually.noDifference(SYNCED, () -> differs("t_ddl", ddl, List.of("id")));
    Table iceberg = reader.loadTable(ddl);
    Verifier.Report report = Verifier.verify(iceberg, ddl.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
  }
  /**
   * A table created in a session under {@code sql_mode=ORACLE}, with Oracle's type names, is logged
   * in them, and Debezium's grammar stops at them as at MariaDB's own syntax; the same recovery
   * brings the connector back with the table and its rows (the schema is read again from the
   * server, which prints it in MariaDB's names). {@code NO_BACKSLASH_ESCAPES}, which changes how
   * a DDL's strings are read, did not stop it.
   *
   * <p>The connector first gets rid of {@code skip.unparseable.ddl}, which the tests before left
   * on: registered under its name with {@code snapshot.mode=recovery} and a new schema history
   * topic, the history is written anew from the tables as they are, and the shipped settings
   * (which skip nothing) read it.
   */
  @Test
  @Order(9)
  void ddlUnderSqlModeOracleStopsTheConnectorAndTheReadmesRecoveryLosesNothing() throws Exception {
    TableIdentifier beside = TableIdentifier.of("inventory", "t_beside_ora");
    TableIdentifier escapes = TableIdentifier.of("inventory", "t_escapes");
    TableIdentifier oracle = TableIdentifier.of("inventory", "t_oracle");
    Map<String, String> newHistory = new HashMap<>(shipped());
    newHistory.put("schema.history.internal.kafka.topic", "dbserver2.schema-history-anew");
    Map<String, String> rebuild = new HashMap<>(newHistory);
    rebuild.put("snapshot.mode", "recovery");
    // Created before the rebuild: no DDL while a connector's (schema) snapshot may run.
    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_beside_ora (id INT PRIMARY KEY, v INT)",
        "INSERT INTO t_beside_ora VALUES (1, 1)");
    Eventually.noDifference(SYNCED, () -> differs("t_beside_ora", beside, List.of("id")));
    registerAgain(rebuild);
    // A change read after the rebuild: its snapshot of the schemas is over.
    mariadb.execute("INSERT INTO inventory.t_beside_ora VALUES (2, 2)");
    Eventually.noDifference(SYNCED, () -> differs("t_beside_ora", beside, List.of("id")));
    registerAgain(newHistory);
    mariadb.execute("INSERT INTO inventory.t_beside_ora VALUES (5, 5)");
    Eventually.noDifference(SYNCED, () -> differs("t_beside_ora", beside, List.of("id")));
    // Parseable DDL, read by the shipped settings (nothing skipped) from the new history.
    mariadb.execute(
        "USE inventory",
        "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')",
        // 'a\' is a\ here; read with backslash escapes it is a string left open, yet it parsed.
        "CREATE TABLE t_escapes (id INT PRIMARY KEY, v VARCHAR(10) DEFAULT 'a\\', w VARCHAR(10))",
        "INSERT INTO t_escapes (id, w) VALUES (1, 'b\\')");
    Eventually.noDifference(SYNCED, () -> differs("t_escapes", escapes, List.of("id")));
    Eventually.noDifference(SYNCED, () -> differs("t_beside_ora", beside, List.of("id")));
    assertThat(connect.status(CONNECTOR)).doesNotContain("FAILED");

    mariadb.execute(
        "USE inventory",
        "SET SESSION sql_mode = 'ORACLE'",
        "CREATE TABLE t_oracle (id NUMBER(10) PRIMARY KEY, name VARCHAR2(20), d DATE)",
        "INSERT INTO t_oracle VALUES (1, 'one', SYSDATE)",
        "SET SESSION sql_mode = DEFAULT",
        "INSERT INTO t_beside_ora VALUES (3, 3)");
    assertThat(failedTask()).contains("VARCHAR2");

    Map<String, String> recovery = recovery();
    recovery.put("schema.history.internal.kafka.topic", "dbserver2.schema-history-anew");
    registerAgain(recovery);
    Eventually.noDifference(SYNCED, () -> differs("t_oracle", oracle, List.of("id")));
    Eventually.noDifference(SYNCED, () -> differs("t_beside_ora", beside, List.of("id")));

    recovery.remove("snapshot.mode");
    registerAgain(recovery);
    mariadb.execute(
        "USE inventory",
        "INSERT INTO t_oracle VALUES (2, 'two', NOW())",
        "UPDATE t_oracle SET name = 'uno' WHERE id = 1",
        "INSERT INTO t_beside_ora VALUES (4, 4)");
    Eventually.noDifference(SYNCED, () -> differs("t_oracle", oracle, List.of("id")));
    Eventually.noDifference(SYNCED, () -> differs("t_beside_ora", beside, List.of("id")));
    Verifier.Report report = Verifier.verify(reader.loadTable(oracle), oracle.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
  }

  /** Waits for the connector's task to fail; returns the connector's status with the trace. */
  private String failedTask() throws Exception {
    String[] status = {""};
    Eventually.until(SYNCED, "the connector's task FAILED on the statement", () -> {
      status[0] = connect.status(CONNECTOR);
      return status[0].contains("FAILED");
    });
    return status[0];
  }

  /**
   * The README's recovery from DDL the connector cannot parse: the shipped settings with {@code
   * snapshot.mode=recovery} (the schemas read again from the server), unparseable DDL skipped,
   * and the signal table for an incremental snapshot.
   */
  private Map<String, String> recovery() {
    Map<String, String> recovery = new HashMap<>(shipped());
    recovery.put("signal.data.collection", "inventory.debezium_signal");
    recovery.put("snapshot.mode", "recovery");
    recovery.put("schema.history.internal.skip.unparseable.ddl", "true");
    return recovery;
  }

  /**
   * A MariaDB row event carries its statement's start time, in whole seconds: short transactions
   * that commit while a long statement runs are logged before the statement's row, with later
   * times. The connector set back to offsets from before all three (as a worker that crashed before
   * flushing its offsets) publishes them again. Ingest fences each replay by its binlog position
   * and does not take the short transactions' later times for a source that started over: nothing
   * is applied twice (the change log holds each change once) and main equals MariaDB.
   */
  @Test
  @Order(6)
  void replaysOfShortTransactionsLoggedBeforeALongStatementAreFencedNotTakenForANewSource()
      throws Exception {
    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_fence (id INT PRIMARY KEY, v INT)",
        "INSERT INTO t_fence VALUES (1, 1), (2, 1)");
    TableIdentifier fence = TableIdentifier.of("inventory", "t_fence");
    Eventually.noDifference(SYNCED, () -> differs("t_fence", fence, List.of("id")));
    String offsets = connect.offsets(CONNECTOR);

    CompletableFuture<Void> longStatement = CompletableFuture.runAsync(() -> {
      try {
        mariadb.execute("UPDATE inventory.t_fence SET v = 100 WHERE id = 2 AND SLEEP(8) = 0");
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    Eventually.until(Duration.ofSeconds(60), "the long UPDATE running", () -> {
      try (Connection c = mariadb.connect("inventory");
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM information_schema.PROCESSLIST"
              + " WHERE INFO LIKE 'UPDATE inventory.t_fence SET v = 100%'")) {
        return rs.next() && rs.getInt(1) > 0;
      }
    });
    // Two seconds or more after it started, in whole seconds, and well before it ends.
    Thread.sleep(2_200);
    mariadb.execute(
        "UPDATE inventory.t_fence SET v = 2 WHERE id = 1",
        "UPDATE inventory.t_fence SET v = 3 WHERE id = 1");
    longStatement.get(60, TimeUnit.SECONDS);
    Eventually.noDifference(SYNCED, () -> differs("t_fence", fence, List.of("id")));
    String topic = "dbserver2.inventory.t_fence";
    List<JsonNode> published = sources(feed.readAvailable(topic));
    assertThat(published).as("the three updates published").hasSizeGreaterThanOrEqualTo(5);
    JsonNode shortOne = bySetValue(published, 2);
    JsonNode longOne = bySetValue(published, 100);
    // The test's premise, as MariaDB logged it: the long statement's row after the short
    // transactions, with a time earlier by more than the fence's margin for a new source.
    assertThat(longOne.path("pos").asLong())
        .as("the long statement's row logged after the short transactions")
        .isGreaterThan(shortOne.path("pos").asLong());
    // The fence is kept per partition: the rows' changes must meet on one.
    assertThat(longOne.path("kafka_partition").asInt())
        .as("the long statement's row and the short transactions' on one partition")
        .isEqualTo(shortOne.path("kafka_partition").asInt());
    assertThat(shortOne.path("ts_ms").asLong() - longOne.path("ts_ms").asLong())
        .as("the short transaction's time ahead of the long statement's")
        .isGreaterThan(1_000);

    double fencedBefore = count("lakestream.ingest.fenced");
    double startedOverBefore = count("lakestream.ingest.fence.started.over");
    connect.rewindOffsets(CONNECTOR, offsets);
    Eventually.until(
        SYNCED,
        "the replays of the three updates in Kafka",
        () -> sources(feed.readAvailable(topic)).size() >= published.size() + 3);
    // A last change, after the replays in the topic: on main, it says ingest has read them.
    mariadb.execute("UPDATE inventory.t_fence SET v = 4 WHERE id = 1");
    Eventually.noDifference(SYNCED, () -> differs("t_fence", fence, List.of("id")));

    assertThat(count("lakestream.ingest.fence.started.over") - startedOverBefore)
        .as("replays taken for a source that started over")
        .isZero();
    assertThat(count("lakestream.ingest.fenced") - fencedBefore)
        .as("replays fenced")
        .isGreaterThanOrEqualTo(3);
    Map<String, Integer> logged = new HashMap<>();
    try (var rows = IcebergGenerics.read(
            reader.loadTable(TableIdentifier.of("inventory", "t_fence_changelog")))
        .build()) {
      rows.forEach(r -> logged.merge(
          r.getField("op") + " " + r.getField("key") + " " + r.getField("source_position"),
          1,
          Integer::sum));
    }
    assertThat(logged)
        .as("the change log: the two inserts and four updates, each once")
        .hasSize(6)
        .allSatisfy((change, times) -> assertThat(times).as(change).isEqualTo(1));
    Table iceberg = reader.loadTable(fence);
    Verifier.Report report = Verifier.verify(iceberg, fence.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
  }

  /**
   * A partitioned MariaDB table, the form of retention by partition: the binary log holds a
   * partition's TRUNCATE, DROP or EXCHANGE as a statement, without row events, so the shipped
   * connector reads past them, and main keeps the rows they took out and lacks the rows an exchange
   * brought in. Rows deleted through the table first are gone, as the README's remedy says. What
   * main is expected to hold is written beside the source ({@code t_part_expected}), and both
   * branches are compared with it until they equal it. Before the test that registers the
   * connector with other settings.
   */
  @Test
  @Order(4)
  void partitionsTruncatedDroppedOrExchangedChangeRowsWithoutRowEventsAndTheConnectorGoesOn()
      throws Exception {
    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_part (id INT, y INT, v VARCHAR(20), PRIMARY KEY (id, y))"
            + " PARTITION BY RANGE (y) (PARTITION p2025 VALUES LESS THAN (2026),"
            + " PARTITION p2026 VALUES LESS THAN (2027), PARTITION p2027 VALUES LESS THAN (2028),"
            + " PARTITION p2028 VALUES LESS THAN (2029))",
        "INSERT INTO t_part SELECT seq, 2025 + seq % 4, CONCAT('v', seq) FROM seq_1_to_200",
        "CREATE TABLE t_part_in (id INT, y INT, v VARCHAR(20), PRIMARY KEY (id, y))",
        "INSERT INTO t_part_in SELECT 1000 + seq, 2028, 'in' FROM seq_1_to_10");
    TableIdentifier part = TableIdentifier.of("inventory", "t_part");
    List<String> key = List.of("id", "y");
    Eventually.noDifference(SYNCED, () -> differs("t_part", part, key));

    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_part_expected AS SELECT * FROM t_part",
        // The remedy: deleted through the table, these rows are gone from main too.
        "DELETE FROM t_part WHERE y = 2028 AND id % 8 = 3",
        "DELETE FROM t_part_expected WHERE y = 2028 AND id % 8 = 3",
        "ALTER TABLE t_part TRUNCATE PARTITION p2025",
        "ALTER TABLE t_part DROP PARTITION p2026",
        "ALTER TABLE t_part EXCHANGE PARTITION p2028 WITH TABLE t_part_in",
        "INSERT INTO t_part VALUES (5000, 2027, 'mark')",
        "INSERT INTO t_part_expected VALUES (5000, 2027, 'mark')");
    Eventually.noDifference(SYNCED, () -> differs("t_part_expected", part, key));
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT (SELECT COUNT(*) FROM t_part_expected)"
            + " - (SELECT COUNT(*) FROM t_part WHERE v <> 'in'),"
            + " (SELECT COUNT(*) FROM t_part WHERE v = 'in')")) {
      rs.next();
      assertThat(rs.getInt(1))
          .as("rows truncated, dropped or exchanged out, kept on main")
          .isEqualTo(125);
      assertThat(rs.getInt(2)).as("rows exchanged in, not on main").isEqualTo(10);
    }
    assertThat(connect.status(CONNECTOR))
        .as("the shipped connector and its task")
        .doesNotContain("FAILED");
  }

  /**
   * The {@code source} block of each change record (tombstones left out), with the {@code v} it set
   * and its Kafka partition.
   */
  private static List<JsonNode> sources(List<ConsumerRecord<byte[], byte[]>> records)
      throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : records) {
      if (r.value() != null) {
        JsonNode payload = JSON.readTree(r.value()).path("payload");
        ObjectNode source = (ObjectNode) payload.path("source");
        source.set("v", payload.path("after").path("v"));
        source.put("kafka_partition", r.partition());
        out.add(source);
      }
    }
    return out;
  }

  /** The first published change that set {@code v} to {@code value}. */
  private static JsonNode bySetValue(List<JsonNode> sources, int value) {
    return sources.stream()
        .filter(s -> s.path("v").asInt(-1) == value)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no change setting v = " + value + ": " + sources));
  }

  /**
   * The binary logs the connector had not read purged while it was stopped (as {@code
   * binlog_expire_logs_seconds} or a {@code PURGE BINARY LOGS} does): the changes in them are gone,
   * and the connector refuses to start rather than skip them. The README's recovery ("A lost
   * replication slot"): the table dropped, then a {@code when_needed} snapshot, and main equals
   * MariaDB and follows it.
   */
  @Test
  @Order(7)
  void binaryLogsPurgedBeforeTheConnectorReadThemStopItAndTheReadmesRecoveryLosesNothing()
      throws Exception {
    mariadb.execute(
        "USE inventory",
        "CREATE TABLE t_purge (id INT PRIMARY KEY, v VARCHAR(20))",
        "INSERT INTO t_purge SELECT seq, CONCAT('v', seq) FROM seq_1_to_20");
    TableIdentifier purge = TableIdentifier.of("inventory", "t_purge");
    Eventually.noDifference(SYNCED, () -> differs("t_purge", purge, List.of("id")));

    connect.stopConnector(CONNECTOR);
    mariadb.execute(
        "USE inventory",
        "UPDATE t_purge SET v = 'while stopped' WHERE id <= 5",
        "DELETE FROM t_purge WHERE id BETWEEN 6 AND 10",
        "INSERT INTO t_purge SELECT seq, 'while stopped' FROM seq_21_to_25",
        "FLUSH BINARY LOGS");
    String current = binaryLogPosition().file();
    // MariaDB keeps a log a reader still has open, or that its storage engine still needs until
    // the binary log checkpoint after the flush: purged again until it is gone.
    Eventually.until(SYNCED, "the binary logs before " + current + " purged", () -> {
      mariadb.execute("PURGE BINARY LOGS TO '" + current + "'");
      try (Connection c = mariadb.connect("inventory");
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SHOW BINARY LOGS")) {
        return rs.next() && rs.getString(1).equals(current);
      }
    });
    connect.resumeConnector(CONNECTOR, "FAILED");
    assertThat(connect.status(CONNECTOR)).contains("no longer available on the server");

    // The README's recovery: the table dropped first (a snapshot alone would keep the rows
    // deleted meanwhile, as PostgresLostSlotEndToEndTest shows), then the connector registered
    // again to snapshot when needed. Only this table changed while the logs were lost: the
    // snapshot reads it alone.
    reader.dropTable(purge, false);
    Map<String, String> whenNeeded = new HashMap<>(shipped());
    whenNeeded.put("signal.data.collection", "inventory.debezium_signal");
    whenNeeded.put("schema.history.internal.skip.unparseable.ddl", "true");
    whenNeeded.put("snapshot.mode", "when_needed");
    whenNeeded.put("snapshot.include.collection.list", "inventory.t_purge");
    registerAgain(whenNeeded);
    Eventually.noDifference(SYNCED, () -> differs("t_purge", purge, List.of("id")));
    mariadb.execute("UPDATE inventory.t_purge SET v = 'after' WHERE id = 1");
    Eventually.noDifference(SYNCED, () -> differs("t_purge", purge, List.of("id")));
  }

  /**
   * The captured tables quiet while the server writes to a database the connector does not
   * capture: Debezium stores a binary-log position only with a record it writes, so without a
   * heartbeat its stored position stays at the captured tables' last change (a restart reads all
   * the rest again, and fails once it is purged); the shipped connector's heartbeat carries it on.
   */
  @Test
  @Order(8)
  void theShippedHeartbeatCarriesTheStoredPositionOnWhileTheCapturedTablesAreQuiet()
      throws Exception {
    mariadb.execute(
        "CREATE DATABASE other",
        "CREATE TABLE other.busy (id INT AUTO_INCREMENT PRIMARY KEY, v TEXT)");
    for (int i = 0; i < 10; i++) {
      mariadb.execute(
          "INSERT INTO other.busy (v) SELECT REPEAT('x', 500) FROM inventory.seq_1_to_1000");
    }
    BinaryLogPosition written = binaryLogPosition();
    // The other database stays busy while the test waits, as a server's uncaptured databases are:
    // Debezium writes a heartbeat when a binary-log event comes after its interval, so it need
    // not wait for a heartbeat event of the server itself.
    Eventually.until(
        SYNCED, "the connector's stored position at " + written + " or past it", () -> {
          mariadb.execute("INSERT INTO other.busy (v) VALUES ('still busy')");
          JsonNode offset =
              JSON.readTree(connect.offsets(CONNECTOR)).path("offsets").path(0).path("offset");
          int order = offset.path("file").asText().compareTo(written.file());
          return order > 0 || (order == 0 && offset.path("pos").asLong() >= written.position());
        });
  }

  /** A position in MariaDB's binary log. */
  private record BinaryLogPosition(String file, long position) {
    @Override
    public String toString() {
      return file + ":" + position;
    }
  }

  /** Where MariaDB writes its binary log now ({@code SHOW MASTER STATUS}). */
  private BinaryLogPosition binaryLogPosition() throws Exception {
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW MASTER STATUS")) {
      assertThat(rs.next()).isTrue();
      return new BinaryLogPosition(rs.getString(1), rs.getLong(2));
    }
  }

  /** The sum of ingest's counters named {@code name}. */
  private double count(String name) {
    return ingest.meters().find(name).counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }

  /** Null when realtime and main of {@code id} equal {@code SELECT *} of {@code table}. */
  private String differs(String table, TableIdentifier id, List<String> key) throws Exception {
    if (!reader.tableExists(id)) {
      return "no table " + id + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT * FROM `" + table + "`")) {
      ResultSetMetaData meta = rs.getMetaData();
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
          row.put(meta.getColumnName(i), asIcebergReadsIt(rs.getObject(i)));
        }
        List<Object> k = new ArrayList<>();
        key.forEach(column -> k.add(row.get(column)));
        expected.put(k, row);
      }
    }
    return SourceTableComparison.differs(reader, expected, id, key);
  }

  /** The connector settings the demo ships for this server and broker. */
  private Map<String, String> shipped() {
    return new DemoSource.MariaDb(mariadb).connectorOverrides(kafka.bootstrapServers());
  }

  /** Deletes the connector and registers it again from its JSON, with {@code overrides}. */
  private void registerAgain(Map<String, String> overrides) throws Exception {
    connect.deleteConnector(CONNECTOR);
    connect.createConnector(Files.readString(MariaDbEndToEndTest.connector()), overrides);
  }

  /** A MariaDB JDBC value as Iceberg's generic reader returns the column it is mirrored to. */
  private static Object asIcebergReadsIt(Object value) {
    if (value instanceof BigInteger unsigned) {
      return new BigDecimal(unsigned); // BIGINT UNSIGNED: decimal(20, 0)
    }
    if (value instanceof byte[] bytes) {
      return ByteBuffer.wrap(bytes);
    }
    if (value instanceof Timestamp timestamp) {
      return timestamp.toLocalDateTime(); // DATETIME: timestamp without zone
    }
    if (value instanceof java.sql.Date date) {
      return date.toLocalDate();
    }
    return value;
  }
}
