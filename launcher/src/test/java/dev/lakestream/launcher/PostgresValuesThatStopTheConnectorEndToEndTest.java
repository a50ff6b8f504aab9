package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * Values Debezium makes null in NOT NULL columns, on real PostgreSQL 15, Debezium 3.6.1 and Kafka
 * Connect: a numeric NaN, an unchanged TOASTed array of a type Debezium has no placeholder for, any
 * array of bit. The column's schema refuses the null: the connector's task fails at that change,
 * and again at every restart, and no table's changes reach Kafka. {@code check-source} reports such
 * columns with the remedy, and the README's steps (skip the change, mend the source, set {@code
 * fail} back) bring the tables back to the source.
 */
class PostgresValuesThatStopTheConnectorEndToEndTest {

  private static final String CONNECTOR = "inventory-postgres";
  private static final String FAILURE_MODE = "event.processing.failure.handling.mode";
  private static final TableIdentifier PRICES = TableIdentifier.of("inventory", "prices");
  private static final TableIdentifier OTHER = TableIdentifier.of("inventory", "other");

  @Test
  void aNanInANotNullColumnStopsTheConnectorUntilSkippedAndCheckSourceSaysHowToRuleItOut()
      throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        // A domain's NOT NULL binds its columns as a column's own does.
        "CREATE DOMAIN inventory.amount AS numeric(10,2) NOT NULL",
        "CREATE TABLE inventory.prices (id int PRIMARY KEY, price numeric(10,2) NOT NULL,"
            + " qty numeric NOT NULL, tags numeric[] NOT NULL, note numeric, fee inventory.amount)",
        "CREATE TABLE inventory.guarded (id int PRIMARY KEY,"
            + " price numeric(10,2) NOT NULL CHECK (price <> 'NaN'))",
        "CREATE TABLE inventory.other (id int PRIMARY KEY, v int)",
        "INSERT INTO inventory.prices VALUES (1, 1.50, 2, '{1,2.5}', NULL, 1),"
            + " (2, 3, 4, '{}', 'NaN', 2)",
        "INSERT INTO inventory.guarded VALUES (1, 1)",
        "INSERT INTO inventory.other VALUES (1, 1)")) {
      // A NaN in a nullable column arrives as null (Debezium's warning); compared as such.
      // A numeric without precision is a decimal(38,18) on the table.
      String prices = "SELECT id, price, qty::numeric(38,18), tags::numeric(38,18)[],"
          + " CASE WHEN note = 'NaN' THEN NULL ELSE note::numeric(38,18) END AS note, fee"
          + " FROM inventory.prices";
      String other = "SELECT * FROM inventory.other";
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(prices, PRICES, ID));
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(other, OTHER, ID));

      // check-source names the NOT NULL numeric columns without a constraint, not the guarded one.
      String ruleOut = "ALTER TABLE inventory.prices ADD CHECK (price <> 'NaN'),"
          + " ADD CHECK (qty NOT IN ('NaN', 'Infinity', '-Infinity')),"
          + " ADD CHECK (NOT (tags && '{NaN,Infinity,-Infinity}')), ADD CHECK (fee <> 'NaN')";
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.output())
          .contains("WARNING  inventory.prices: NOT NULL numeric column(s) [price, qty, tags, fee]:"
              + " Debezium has no decimal for a NaN (or an infinity) and makes it null")
          .contains("Rule them out: " + ruleOut + "\n")
          .doesNotContain("inventory.guarded: NOT NULL numeric");

      // The wedge: the task fails at the NaN, the other table's later change stays out of Kafka,
      // and a restart fails at the same change.
      p.postgres.execute(
          "INSERT INTO inventory.prices VALUES (7, 'NaN', 3, '{3}', NULL, 7)",
          "INSERT INTO inventory.other VALUES (7, 7)");
      long failedAt = failsAtEveryRestart(p, "price");
      assertThat(
              ConnectRestartTest.recordsIn(p.kafka.bootstrapServers(), "dbserver1.inventory.other"))
          .as("the other table's topic holds its snapshot's row only, not the change after the NaN")
          .isEqualTo(1);

      // The README's steps: skip it, correct the row, wait for the offsets to pass it, fail again.
      p.connect.patchConfig(CONNECTOR, Map.of(FAILURE_MODE, "warn"));
      p.postgres.execute("UPDATE inventory.prices SET price = 0 WHERE id = 7");
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(prices, PRICES, ID));
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(other, OTHER, ID));
      failAgainOncePast(p, failedAt);
      p.postgres.execute(
          "INSERT INTO inventory.prices VALUES (8, 8, 8, '{8}', 8, 8)",
          "INSERT INTO inventory.other VALUES (8, 8)");
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(prices, PRICES, ID));
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(other, OTHER, ID));
      assertThat(p.connect.status(CONNECTOR)).doesNotContain("FAILED");

      // check-source's constraints, applied: PostgreSQL refuses the values, and the warning is
      // gone.
      p.postgres.execute(ruleOut);
      for (String refused : List.of(
          "INSERT INTO inventory.prices VALUES (9, 'NaN', 1, '{}', NULL, 1)",
          "INSERT INTO inventory.prices VALUES (9, 1, 'Infinity', '{}', NULL, 1)",
          "INSERT INTO inventory.prices VALUES (9, 1, 1, '{1,NaN}', NULL, 1)",
          "INSERT INTO inventory.prices VALUES (9, 1, 1, '{}', NULL, 'NaN')")) {
        assertThatThrownBy(() -> p.postgres.execute(refused))
            .as(refused)
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("violates check constraint");
      }
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, Map.of()).output())
          .doesNotContain("inventory.prices: NOT NULL numeric");
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("prices", "other", "guarded"));
    }
  }

  @Test
  void arraysDebeziumSendsAsNullInNotNullColumnsStopTheConnectorUntilTheSourceIsMended()
      throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        // The stored offsets pass a skipped change with the next heartbeat: every second, not 10.
        Map.of("heartbeat.interval.ms", "1000"),
        // float8[] has no placeholder for an unchanged TOASTed value; int4[] has one.
        "CREATE TABLE inventory.series (id int PRIMARY KEY, v int, xs float8[] NOT NULL,"
            + " ns int[] NOT NULL)",
        "CREATE TABLE inventory.flags (id int PRIMARY KEY, fs bit(3)[] NOT NULL)",
        "INSERT INTO inventory.series SELECT g, 0,"
            + " (SELECT array_agg(x * 0.5 + g) FROM generate_series(1, 3000) x),"
            + " (SELECT array_agg(x + g) FROM generate_series(1, 3000) x)"
            + " FROM generate_series(1, 3) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(SERIES_ROWS, SERIES, ID));

      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.output())
          .contains("BLOCKER  inventory.series: NOT NULL column(s) [xs double precision[]]:"
              + " Debezium has no placeholder for an unchanged TOASTed value of these types"
              + " and makes it null")
          .contains("Having the connector reselect them does not help (the null is refused before"
              + " it runs). ALTER TABLE inventory.series REPLICA IDENTITY FULL\n")
          .contains("BLOCKER  inventory.flags.fs: bit(3)[] NOT NULL: Debezium makes every array of"
              + " bit null")
          // One finding for the array of bit, none of TOAST for it.
          .doesNotContain("inventory.flags: NOT NULL column(s)");

      // An UPDATE that leaves the large float8[] unchanged: the task fails, at every restart.
      p.postgres.execute("UPDATE inventory.series SET v = 1 WHERE id = 1");
      long failedAt = failsAtEveryRestart(p, "xs");

      // Skip it, give the table REPLICA IDENTITY FULL, snapshot it again: equal to the source, and
      // the same UPDATE of another row now passes.
      p.connect.patchConfig(CONNECTOR, Map.of(FAILURE_MODE, "warn"));
      failAgainOncePast(p, failedAt);
      p.postgres.execute("ALTER TABLE inventory.series REPLICA IDENTITY FULL");
      p.incrementalSnapshot("inventory.series");
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(SERIES_ROWS, SERIES, ID));
      p.postgres.execute("UPDATE inventory.series SET v = 2 WHERE id = 2");
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(SERIES_ROWS, SERIES, ID));
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, Map.of()).output())
          .doesNotContain("BLOCKER  inventory.series");

      // Any array of bit in a NOT NULL column fails the task at the row's insert.
      p.postgres.execute("INSERT INTO inventory.flags VALUES (1, '{101,011}')");
      Eventually.until(
          Duration.ofSeconds(120),
          "the connector's task failed on the array of bit",
          () -> p.connect.status(CONNECTOR).contains(NULL_REFUSED + "fs"));
      long bitAt = failingLsn(p.connect.status(CONNECTOR));
      p.connect.patchConfig(CONNECTOR, Map.of(FAILURE_MODE, "warn"));
      failAgainOncePast(p, bitAt);
      p.postgres.execute("UPDATE inventory.series SET v = 3 WHERE id = 3");
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(SERIES_ROWS, SERIES, ID));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("series"));
    }
  }

  @Test
  void valuesPrintedAsTheSessionsSettingsSayStopOrMisleadDebeziumUntilItsRoleSetsThemBack()
      throws Exception {
    String span = "'1 year 2 mons -3 days 04:05:06'";
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        "CREATE TABLE inventory.ledger (id int PRIMARY KEY, amount money NOT NULL, fee money,"
            + " data bytea, span interval)",
        "INSERT INTO inventory.ledger VALUES (1, 1234.56, NULL, '\\x00ff5c41', " + span + ")")) {
      assumeTrue(
          localeInstalled(p, "de_DE.UTF-8"),
          "the de_DE.UTF-8 locale (localedef -i de_DE -f UTF-8 de_DE.UTF-8; .ci/run makes it)");
      String ledger = "SELECT id, amount::numeric AS amount, fee::numeric AS fee, data"
          + " FROM inventory.ledger";
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(ledger, LEDGER, ID));
      assertThat(spans(p)).containsEntry(1, SPAN);

      // IntervalStyle sql_standard and bytea escaped for the database: Debezium keeps only the
      // interval's time, and makes other bytes of 'abcd', silently.
      p.postgres.execute(
          "ALTER DATABASE postgres SET IntervalStyle = 'sql_standard'",
          "ALTER DATABASE postgres SET bytea_output = 'escape'");
      p.connect.restartConnector(CONNECTOR);
      p.postgres.execute("INSERT INTO inventory.ledger VALUES (2, 2, 2, 'abcd', " + span + ")");
      Eventually.until(
          Duration.ofSeconds(120), "the second row on main", () -> spans(p).containsKey(2));
      assertThat(spans(p))
          .as("Debezium's reading of sql_standard")
          .containsEntry(2, "P0Y0M0DT4H5M6S");
      assertThat(row(p, 2).get("data"))
          .as("Debezium's reading of 'abcd' in escape form")
          .isEqualTo(ByteBuffer.wrap(new byte[] {(byte) 0xcd}));

      // Money in German as well: the next change fails the task.
      p.postgres.execute("ALTER DATABASE postgres SET lc_monetary = 'de_DE.UTF-8'");
      p.connect.restartConnector(CONNECTOR);
      p.postgres.execute(
          "INSERT INTO inventory.ledger VALUES (3, -1234567.89, 0.5, '\\x5c00', " + span + ")");
      Eventually.until(
          Duration.ofSeconds(120),
          "the connector's task failed on the amount",
          () -> p.connect.status(CONNECTOR).contains("Failed to parse money value: -1.234.567,89"));
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.exit()).isEqualTo(1);
      String sessions = " (the sessions of postgres; if the connector connects as another user, run"
          + " this check as it)";
      assertThat(check.output())
          .contains("BLOCKER  money: column(s) [inventory.ledger.amount, inventory.ledger.fee]:"
              + " with lc_monetary de_DE.UTF-8" + sessions + " PostgreSQL prints -1234567.89 as"
              + " '-1.234.567,89 €', which Debezium cannot read")
          .contains("ALTER ROLE postgres IN DATABASE postgres SET lc_monetary = 'C'")
          .contains("BLOCKER  bytea: column(s) [inventory.ledger.data]: with bytea_output escape"
              + sessions)
          .contains("ALTER ROLE postgres IN DATABASE postgres SET bytea_output = 'hex'")
          .contains("BLOCKER  interval: column(s) [inventory.ledger.span]: with IntervalStyle"
              + " sql_standard" + sessions + " PostgreSQL prints '1 year 2 mons -3 days"
              + " 04:05:06' as '+1-2 -3 +4:05:06'")
          .contains("ALTER ROLE postgres IN DATABASE postgres SET IntervalStyle = 'postgres'");

      // check-source's remedies: the connector's role prints as Debezium reads; after a restart
      // the change it failed on arrives, with the next, and a snapshot mends the misread values.
      p.postgres.execute(
          "ALTER ROLE postgres IN DATABASE postgres SET lc_monetary = 'C'",
          "ALTER ROLE postgres IN DATABASE postgres SET bytea_output = 'hex'",
          "ALTER ROLE postgres IN DATABASE postgres SET IntervalStyle = 'postgres'");
      p.connect.stopConnector(CONNECTOR);
      p.connect.resumeConnector(CONNECTOR, "RUNNING");
      p.postgres.execute("INSERT INTO inventory.ledger VALUES (4, 7, -0.01, '\\x', " + span + ")");
      Eventually.until(
          Duration.ofSeconds(120),
          "the change the task failed on, and the next, on main",
          () -> spans(p).keySet().containsAll(List.of(3, 4)));
      assertThat(row(p, 3))
          .containsEntry("amount", new BigDecimal("-1234567.89"))
          .containsEntry("data", ByteBuffer.wrap(new byte[] {0x5c, 0x00}))
          .containsEntry("span", SPAN);
      p.incrementalSnapshot("inventory.ledger");
      Eventually.until(
          Duration.ofSeconds(120),
          "every interval on main as in the source, the snapshot's included",
          () -> spans(p).equals(Map.of(1, SPAN, 2, SPAN, 3, SPAN, 4, SPAN)));
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(ledger, LEDGER, ID));
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, Map.of()).output())
          .doesNotContain("BLOCKER  money", "BLOCKER  bytea", "BLOCKER  interval");
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("ledger"));
    }
  }

  /** '1 year 2 mons -3 days 04:05:06' as the shipped interval.handling.mode=string sends it. */
  private static final String SPAN = "P1Y2M-3DT4H5M6S";

  /** The row {@code id} on main. */
  private static Map<String, Object> row(PostgresPipeline p, int id) {
    return TableRows.read(p.reader.loadTable(LEDGER), Branches.MAIN).stream()
        .filter(row -> Integer.valueOf(id).equals(row.get("id")))
        .findFirst()
        .orElseThrow();
  }

  /** The interval column on main, by id. */
  private static Map<Integer, Object> spans(PostgresPipeline p) {
    Map<Integer, Object> spans = new HashMap<>();
    for (Map<String, Object> row : TableRows.read(p.reader.loadTable(LEDGER), Branches.MAIN)) {
      spans.put((Integer) row.get("id"), row.get("span"));
    }
    return spans;
  }

  /** Whether the server can print in {@code locale} (an operating-system locale). */
  private static boolean localeInstalled(PostgresPipeline p, String locale) throws Exception {
    try {
      p.postgres.execute("SET lc_monetary = '" + locale + "'");
      return true;
    } catch (SQLException e) {
      return false;
    }
  }

  private static final TableIdentifier LEDGER = TableIdentifier.of("inventory", "ledger");
  private static final List<String> ID = List.of("id");
  private static final TableIdentifier SERIES = TableIdentifier.of("inventory", "series");
  private static final String SERIES_ROWS = "SELECT * FROM inventory.series";

  /**
   * The README's last step: once the connector's stored offsets are past the skipped change at
   * {@code lsn}, {@code fail} again (with {@code warn} set since).
   */
  private static void failAgainOncePast(PostgresPipeline p, long lsn) throws Exception {
    Eventually.until(
        Duration.ofSeconds(120),
        "the connector's stored offsets past the skipped change (lsn " + lsn + ")",
        () -> storedLsn(p.connect.offsets(CONNECTOR)) > lsn);
    p.connect.patchConfig(CONNECTOR, Map.of(FAILURE_MODE, "fail"));
  }

  /**
   * Waits until the connector's task fails on a null Debezium made of a value of {@code column},
   * restarts it, and asserts that it fails again at the same change; returns that change's position.
   */
  private static long failsAtEveryRestart(PostgresPipeline p, String column) throws Exception {
    Eventually.until(
        Duration.ofSeconds(120),
        "the connector's task failed on a null for " + column,
        () -> p.connect.status(CONNECTOR).contains(NULL_REFUSED + column));
    long failedAt = failingLsn(p.connect.status(CONNECTOR));
    p.connect.stopConnector(CONNECTOR);
    p.connect.resumeConnector(CONNECTOR, "FAILED");
    assertThat(failingLsn(p.connect.status(CONNECTOR)))
        .as("the restarted task fails at the same change")
        .isEqualTo(failedAt);
    return failedAt;
  }

  /** Connect's refusal of a null in a NOT NULL column, up to the column's name (JSON-escaped). */
  private static final String NULL_REFUSED = "Invalid value: null used for required field: \\\"";

  /** The position of the change a failed task's trace names ({@code ... lsn=N, ...}). */
  private static long failingLsn(String status) {
    Matcher lsn = Pattern.compile("[{ ]lsn=(\\d+)").matcher(status);
    assertThat(lsn.find()).as("a position in the task's trace: " + status).isTrue();
    return Long.parseLong(lsn.group(1));
  }

  /** The position in the connector's stored offsets ({@code "lsn": N}), or -1 without one. */
  private static long storedLsn(String offsets) {
    Matcher lsn = Pattern.compile("\"lsn\":(\\d+)").matcher(offsets);
    return lsn.find() ? Long.parseLong(lsn.group(1)) : -1;
  }
}
