package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * MariaDB end to end on real parts (MariaDB from Debian's package, binary log in ROW format →
 * Debezium's MySQL connector 3.6.1, with MySQL's JDBC driver, in Kafka Connect with the shipped
 * {@code connectors/mariadb-inventory.json} → ingest → sync; Debezium's MariaDB connector is not
 * published at 3.6.1): a table with a column of every MySQL type, edge values included, read by
 * the snapshot and streamed, and a workload of
 * inserts, updates, deletes, primary-key updates and one large transaction. {@code main} is
 * compared with {@code SELECT *} value for value, the expected values derived here from MariaDB's
 * own output. A server whose binary log keeps MINIMAL row images is refused, by the connector and
 * by {@code check-source}, so no partial row ever reaches a table.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration SYNCED = Duration.ofSeconds(240);

  private EmbeddedKafka kafka;
  private EmbeddedMariaDb mariadb;
  private TemporaryWarehouse warehouse;
  private EmbeddedConnect connect;
  private Path connectOffsets;
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
    mariadb.execute(
        "CREATE DATABASE inventory",
        ZOO_TABLE,
        ZOO_TABLE.replace("inventory.zoo", "inventory." + ZOO_SNAPSHOT),
        CUSTOMERS_TABLE,
        COUNTERS_TABLE,
        flagsTable("flags_at_snapshot"),
        "CREATE TABLE " + SIGNALS + " (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL,"
            + " data VARCHAR(2048))");
    // Read by the connector's snapshot, through JDBC: the zoo's rows are streamed.
    for (String row : ZOO_ROWS) {
      mariadb.execute("INSERT INTO inventory." + ZOO_SNAPSHOT + " VALUES " + row);
    }
    PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse)
        .with(IngestConfig.TOPICS_REGEX, "dbserver2\\.inventory\\..*");
    connectOffsets = Files.createTempDirectory("connect-mariadb-").resolve("connect.offsets");
    connect = EmbeddedConnect.start(kafka.bootstrapServers(), connectOffsets, 1000);
    ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest-mariadb"));
    sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync-mariadb"));
    feed = new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel());
    reader = warehouse.catalog();
    ingest.start();
    sync.start();
    connect.createConnector(Files.readString(connector()), connectorOverrides(mariadb));
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

  private record CheckSource(int exit, String out) {}

  /** {@code check-source} against {@code db} with the shipped connector file, as a user runs it. */
  private static CheckSource checkSource(EmbeddedMariaDb db) throws Exception {
    return checkSource(db, Map.of());
  }

  /** {@code check-source} with the shipped MariaDB connector, {@code overrides} set in it. */
  private static CheckSource checkSource(EmbeddedMariaDb db, Map<String, String> overrides)
      throws Exception {
    ObjectNode json = (ObjectNode) new ObjectMapper().readTree(Files.readString(connector()));
    overrides.forEach(((ObjectNode) json.get("config"))::put);
    Path file = Files.createTempFile("connector-", ".json");
    Files.writeString(file, json.toString());
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int exit = CheckSourceCommand.run(
        new String[] {
          "--jdbc", db.jdbcUrl(""), "--connector", file.toString(),
          "--user", db.user(), "--password", db.password()
        },
        new PrintStream(bytes, true, StandardCharsets.UTF_8),
        Map.of());
    return new CheckSource(exit, bytes.toString(StandardCharsets.UTF_8));
  }

  /** The shipped connector's overrides for {@code db}, with Debezium's signal table named. */
  private Map<String, String> connectorOverrides(EmbeddedMariaDb db) {
    Map<String, String> overrides =
        new HashMap<>(new DemoSource.MariaDb(db).connectorOverrides(kafka.bootstrapServers()));
    overrides.put("signal.data.collection", SIGNALS);
    return overrides;
  }

  static Path connector() {
    return PostgresEndToEndTest.connectorsDir().resolve("mariadb-inventory.json");
  }

  // ---------------------------------------------------------------------------------------------
  // Every type

  private static final String ZOO_TABLE = "CREATE TABLE inventory.zoo (id INT PRIMARY KEY,"
      + " ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT,"
      + " miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED, de DECIMAL(20,6),"
      + " fl FLOAT, db DOUBLE, b1 BIT(1), b8 BIT(8), ch CHAR(5), vc VARCHAR(20), tx TEXT, bl BLOB, d DATE,"
      + " tm TIME, tm6 TIME(6), dt DATETIME, dt6 DATETIME(6), ts TIMESTAMP(3) NULL, y YEAR, j JSON,"
      + " e ENUM('sad','ok','happy'), st SET('a','b','c')) CHARACTER SET utf8mb4";

  /** The zoo's table whose rows the connector reads in its snapshot. */
  private static final String ZOO_SNAPSHOT = "zoo_snapshot";

  /** Debezium's signal table, which the README's incremental snapshot writes to. */
  private static final String SIGNALS = "inventory.debezium_signal";

  private static final String[] ZOO_ROWS = {
    // Minimums.
    "(1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, -99999999999999.999999,"
        + " -3.4e38, -1.7976931348623157e308, b'0', b'00000000', 'ab', 'v', 'emoji 😀 עברית مرحبا', x'00ff00',"
        + " '1000-01-01', '00:00:00', '00:00:00.000001', '1000-01-01 00:00:00', '1000-01-01 00:00:00.000000',"
        + " '1970-01-01 00:00:01.000', 1901, '{\"a\": [1, 2.5, null]}', 'sad', '')",
    // Maximums.
    "(2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807,"
        + " 18446744073709551615, 99999999999999.999999, 3.4e38, 1.7976931348623157e308, b'1', b'11111111',"
        + " 'abcde', 'twenty characters!!!', 'x', x'ffffffff', '9999-12-31', '23:59:59', '23:59:59.999999',"
        + " '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', 2155, '[]', 'happy',"
        + " 'a,b,c')",
    // Every column NULL.
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
        + " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    // Empty values and zeros.
    "(4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -0.0, b'0', b'00000101', '', '', '', x'', '1970-01-01', '12:00:00',"
        + " '12:00:00.5', '1970-01-01 00:00:00', '1970-01-01 00:00:00.000001', '2000-01-01 00:00:00.000', 2000,"
        + " '{}', 'ok', 'b')",
    // Ordinary values.
    "(5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 3.5, 1.5, 2.25, b'1', b'10110111', 'abc', 'def', 'ghi', x'0102',"
        + " '2024-02-29', '10:15:30', '10:15:30.123456', '2024-02-29 10:15:30', '2024-02-29 10:15:30.123456',"
        + " '2024-02-29 10:15:30.123', 2024, '{\"k\": \"v\"}', 'ok', 'a,c')",
  };

  /** Values no Iceberg type can hold: each row is refused whole, with the column named. */
  private static final Map<Integer, String> REFUSED = Map.of(
      6, "INSERT INTO inventory.zoo (id, tm) VALUES (6, '-01:00:00')",
      7, "INSERT INTO inventory.zoo (id, tm6) VALUES (7, '838:59:59')");

  /**
   * The zoo's rows as the connector's snapshot reads them, through JDBC rather than from the binary
   * log: every value as the binary log gives it.
   */
  @Test
  void everyMariaDbTypeReadBySnapshotMirrorsValueForValue() throws Exception {
    TableIdentifier zoo = TableIdentifier.of("inventory", ZOO_SNAPSHOT);
    Eventually.noDifference(SYNCED, () -> zooDiffers(zoo));
  }

  /**
   * An incremental snapshot (the README's way to read a table again) reads every MariaDB type as
   * the source holds it: values changed with the binary log off reach the table only through it.
   */
  @Test
  void anIncrementalSnapshotReadsEveryMariaDbTypeAsTheSourceHoldsIt() throws Exception {
    TableIdentifier zoo = TableIdentifier.of("inventory", ZOO_SNAPSHOT);
    Eventually.noDifference(SYNCED, () -> zooDiffers(zoo));
    mariadb.execute(
        "SET SESSION sql_log_bin = 0",
        "UPDATE inventory." + ZOO_SNAPSHOT + " SET vc = 'unlogged', d = '2001-02-03',"
            + " tm6 = '01:02:03.456789', dt6 = '2001-02-03 04:05:06.789012' WHERE id = 5");
    assertThat(zooDiffers(zoo)).as("the unlogged update, not on main yet").contains("[5].vc");
    mariadb.execute("INSERT INTO " + SIGNALS + " VALUES ('zoo-again', 'execute-snapshot',"
        + " '{\"data-collections\": [\"inventory." + ZOO_SNAPSHOT + "\"],"
        + " \"type\": \"incremental\"}')");
    Eventually.noDifference(SYNCED, () -> zooDiffers(zoo));
  }

  @Test
  void everyMariaDbTypeMirrorsValueForValueAndWhatIcebergCannotHoldIsDeadLettered()
      throws Exception {
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement()) {
      for (String row : ZOO_ROWS) {
        s.execute("INSERT INTO inventory.zoo VALUES " + row);
      }
      for (String insert : REFUSED.values()) {
        s.execute(insert);
      }
    }
    TableIdentifier zoo = TableIdentifier.of("inventory", "zoo");
    Eventually.noDifference(SYNCED, () -> zooDiffers(zoo));

    mariadb.execute(
        "UPDATE inventory.zoo SET db = -0.0, tx = 'changed ✓', d = '2000-02-29', st = 'c' WHERE id = 1",
        "DELETE FROM inventory.zoo WHERE id = 2",
        "UPDATE inventory.zoo SET ti = NULL, tx = NULL, j = NULL, bl = NULL WHERE id = 5");
    try (Connection c = mariadb.connect("inventory")) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute("INSERT INTO inventory.zoo (id, tx, de) VALUES (9, 'new', 0.5)");
        s.execute("UPDATE inventory.zoo SET de = 7 WHERE id = 9");
      }
      c.commit();
    }
    Eventually.noDifference(SYNCED, () -> zooDiffers(zoo));

    Table table = reader.loadTable(zoo);
    Verifier.Report report = Verifier.verify(table, zoo.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();

    Map<String, String> reasons = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> letter : feed.read("lakestream.dlq", REFUSED.size())) {
      String key = letter.key() == null
          ? "null"
          : JSON.readTree(letter.key()).path("payload").toString();
      reasons.put(
          KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC) + " " + key,
          KafkaHeaders.text(letter.headers(), DeadLetters.REASON));
    }
    assertThat(reasons.get("dbserver2.inventory.zoo {\"id\":6}")).contains("column \"tm\"");
    assertThat(reasons.get("dbserver2.inventory.zoo {\"id\":7}")).contains("column \"tm6\"");
  }

  /** Null when main of inventory.zoo equals SELECT * (less the refused rows), else what differs. */
  private String zooDiffers(TableIdentifier id) throws Exception {
    if (!reader.tableExists(id)) {
      return "no table " + id + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT *, CAST(biu AS CHAR) AS biu_text, CAST(de AS CHAR) AS de_text,"
                + " b8 + 0 AS b8_int, HEX(bl) AS bl_hex, CAST(tm AS CHAR) AS tm_text, CAST(tm6 AS CHAR) AS tm6_text,"
                + " CAST(dt AS CHAR) AS dt_text, CAST(dt6 AS CHAR) AS dt6_text,"
                + " CAST(UNIX_TIMESTAMP(ts) * 1000 AS SIGNED) AS ts_millis, CAST(d AS CHAR) AS d_text"
                + " FROM inventory." + id.name() + " WHERE id NOT IN (6, 7)")) {
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", rs.getInt("id"));
        row.put("ti", intOrNull(rs, "ti"));
        row.put("tiu", intOrNull(rs, "tiu"));
        row.put("si", intOrNull(rs, "si"));
        row.put("siu", intOrNull(rs, "siu"));
        row.put("mi", intOrNull(rs, "mi"));
        row.put("miu", intOrNull(rs, "miu"));
        row.put("i", intOrNull(rs, "i"));
        row.put("iu", rs.getObject("iu") == null ? null : rs.getLong("iu"));
        row.put("bi", rs.getObject("bi") == null ? null : rs.getLong("bi"));
        row.put(
            "biu",
            rs.getString("biu_text") == null ? null : new BigDecimal(rs.getString("biu_text")));
        row.put(
            "de",
            rs.getString("de_text") == null
                ? null
                : new BigDecimal(rs.getString("de_text")).setScale(6));
        row.put("fl", rs.getObject("fl") == null ? null : rs.getFloat("fl"));
        row.put("db", rs.getObject("db") == null ? null : rs.getDouble("db"));
        row.put("b1", rs.getObject("b1") == null ? null : rs.getBoolean("b1"));
        // BIT(n) is mirrored as its n bits, leading zeros kept (as PostgreSQL's bit(n)).
        row.put(
            "b8",
            rs.getObject("b8_int") == null
                ? null
                : String.format("%8s", Long.toBinaryString(rs.getLong("b8_int")))
                    .replace(' ', '0'));
        row.put("ch", rs.getString("ch"));
        row.put("vc", rs.getString("vc"));
        row.put("tx", rs.getString("tx"));
        row.put(
            "bl",
            rs.getString("bl_hex") == null ? null : ByteBuffer.wrap(hex(rs.getString("bl_hex"))));
        row.put(
            "d", rs.getString("d_text") == null ? null : LocalDate.parse(rs.getString("d_text")));
        row.put(
            "tm",
            rs.getString("tm_text") == null ? null : LocalTime.parse(rs.getString("tm_text")));
        row.put(
            "tm6",
            rs.getString("tm6_text") == null ? null : LocalTime.parse(rs.getString("tm6_text")));
        row.put("dt", dateTime(rs.getString("dt_text")));
        row.put("dt6", dateTime(rs.getString("dt6_text")));
        row.put(
            "ts",
            rs.getObject("ts_millis") == null
                ? null
                : Instant.ofEpochMilli(rs.getLong("ts_millis")).atOffset(ZoneOffset.UTC));
        row.put("y", intOrNull(rs, "y"));
        row.put("j", rs.getString("j"));
        row.put("e", rs.getString("e"));
        row.put("st", rs.getString("st"));
        expected.put(List.of(rs.getInt("id")), row);
      }
    }
    Map<List<Object>, Map<String, Object>> actual =
        TableRows.byKey(TableRows.read(reader.loadTable(id), Branches.MAIN), List.of("id"));
    return TableComparison.differences(expected, actual);
  }

  // ---------------------------------------------------------------------------------------------
  // A workload

  private static final String CUSTOMERS_TABLE =
      "CREATE TABLE inventory.customers (id BIGINT PRIMARY KEY,"
          + " name VARCHAR(40) NOT NULL, qty INT, price DECIMAL(12,2), updated DATETIME(6)) CHARACTER SET utf8mb4";

  @Test
  void insertsUpdatesDeletesKeyUpdatesAndALargeTransactionEndOnMainAsInMariaDb() throws Exception {
    Random random = new Random(19);
    try (Connection c = mariadb.connect("inventory")) {
      c.setAutoCommit(false);
      try (PreparedStatement insert =
          c.prepareStatement("INSERT INTO customers VALUES (?, ?, ?, ?, NOW(6))")) {
        // One large transaction: 20,000 rows.
        for (int id = 1; id <= 20_000; id++) {
          insert.setLong(1, id);
          insert.setString(2, "customer " + id);
          insert.setInt(3, random.nextInt(1000));
          insert.setBigDecimal(4, BigDecimal.valueOf(random.nextInt(100_000), 2));
          insert.addBatch();
          if (id % 1000 == 0) {
            insert.executeBatch();
          }
        }
      }
      c.commit();
      try (Statement s = c.createStatement()) {
        for (int round = 0; round < 200; round++) {
          long id = 1 + random.nextInt(20_000);
          switch (random.nextInt(4)) {
            case 0 ->
              s.execute("UPDATE customers SET qty = qty + 1, updated = NOW(6) WHERE id = " + id);
            case 1 -> s.execute("DELETE FROM customers WHERE id = " + id);
            // A primary-key update: Debezium sends a delete of the old key and a create of the new.
            case 2 ->
              s.execute("UPDATE customers SET id = " + (100_000 + round) + " WHERE id = " + id);
            default ->
              s.execute("INSERT INTO customers VALUES (" + (200_000 + round)
                  + ", 'late', 1, 1.00, NOW(6))");
          }
          c.commit();
        }
      }
    }
    TableIdentifier customers = TableIdentifier.of("inventory", "customers");
    Eventually.noDifference(SYNCED, () -> customersDiffer(customers));
    Verifier.Report report = Verifier.verify(reader.loadTable(customers), customers.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
  }

  // ---------------------------------------------------------------------------------------------
  // BOOLEAN, which MySQL keeps as TINYINT(1)

  private static String flagsTable(String name) {
    return "CREATE TABLE inventory." + name + " (id INT PRIMARY KEY, bo BOOLEAN, t TINYINT(1))";
  }

  /**
   * Debezium reads the schema of a table that exists when it starts from the server ({@code
   * tinyint(1)}) and of one created later from the DDL ({@code BOOLEAN}); the shipped connectors'
   * {@code TinyIntOneToBooleanConverter} makes both {@code boolean}, so a table's type does not
   * depend on when the connector first saw it.
   */
  @Test
  void booleansAreBooleansWhetherTheTableWasThereAtTheSnapshotOrCreatedLater() throws Exception {
    // Created once the connector streams the binary log, so it learns the table from the DDL. A
    // table created while the snapshot runs is in neither the snapshot nor the log it reads.
    Eventually.until(SYNCED, "the connector reading MariaDB's binary log", this::binlogIsRead);
    mariadb.execute(flagsTable("flags_created_later"));
    for (String name : List.of("flags_at_snapshot", "flags_created_later")) {
      mariadb.execute(
          "INSERT INTO inventory." + name + " VALUES (1, TRUE, 1), (2, FALSE, 0), (3, NULL, NULL)",
          "UPDATE inventory." + name + " SET bo = NOT bo WHERE id = 2");
    }
    for (String name : List.of("flags_at_snapshot", "flags_created_later")) {
      TableIdentifier id = TableIdentifier.of("inventory", name);
      Eventually.noDifference(SYNCED, () -> {
        if (!reader.tableExists(id)) {
          return "no table " + id + " yet";
        }
        Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
        try (Connection c = mariadb.connect("inventory");
            Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT id, bo, t FROM " + name)) {
          while (rs.next()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", rs.getInt("id"));
            row.put("bo", rs.getObject("bo") == null ? null : rs.getBoolean("bo"));
            row.put("t", rs.getObject("t") == null ? null : rs.getBoolean("t"));
            expected.put(List.of(rs.getInt("id")), row);
          }
        }
        return TableComparison.differences(
            expected,
            TableRows.byKey(TableRows.read(reader.loadTable(id), Branches.MAIN), List.of("id")));
      });
      assertThat(reader.loadTable(id).schema().findType("bo").toString()).isEqualTo("boolean");
    }
  }

  /**
   * The shipped converter sends a TINYINT(1) above 0 as true: two rows whose keys differ only in a
   * TINYINT(1) column holding 1 and 2 arrive under one key, so the table would keep one of them.
   * {@code check-source} makes such a key column a blocker and a value column a warning, and
   * leaves out what the converter's selector leaves out.
   */
  @Test
  void tinyIntOneKeysCollapseToOneBooleanAndAreBlockersForCheckSource() throws Exception {
    try (EmbeddedMariaDb db = EmbeddedMariaDb.start(Map.of());
        EmbeddedConnect other = EmbeddedConnect.start(kafka.bootstrapServers());
        KafkaChangeFeed topics =
            new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel())) {
      db.execute(
          "CREATE DATABASE inventory",
          "CREATE TABLE inventory.kinds (id INT, kind TINYINT(1), note TINYINT(1),"
              + " PRIMARY KEY (id, kind))",
          "CREATE TABLE inventory.flags (id INT PRIMARY KEY, bo BOOLEAN)",
          "INSERT INTO inventory.kinds VALUES (0, 0, 0)");
      CheckSource blocked = checkSource(db);
      assertThat(blocked.exit()).as(blocked.out()).isEqualTo(1);
      assertThat(blocked.out())
          .contains(
              "BLOCKER  inventory.kinds: TINYINT(1) key column(s) [kind] arrive as booleans",
              "WARNING  inventory.kinds: TINYINT(1) column(s) [note] arrive as booleans",
              "WARNING  inventory.flags: TINYINT(1) column(s) [bo] arrive as booleans");
      CheckSource selected = checkSource(db, Map.of("boolean.selector", "inventory\\.flags\\.bo"));
      assertThat(selected.exit()).as(selected.out()).isZero();
      assertThat(selected.out())
          .contains("WARNING  inventory.flags: TINYINT(1) column(s) [bo]")
          .doesNotContain("inventory.kinds: TINYINT(1)");

      String topic = "tinyint.inventory.kinds";
      register(other, db, Files.readString(connector()), "tinyint", Map.of());
      snapshotEnded(topics, topic);
      db.execute("INSERT INTO inventory.kinds VALUES (1, 1, 1), (1, 2, 2)");
      List<String> keys = new ArrayList<>();
      Eventually.until(SYNCED, "the two rows of id 1 in Kafka", () -> {
        topics.readAvailable(topic).stream()
            .filter(r -> r.value() != null && r.key() != null)
            .map(r -> new String(r.key(), StandardCharsets.UTF_8))
            .filter(k -> k.contains("\"id\":1"))
            .forEach(keys::add);
        return keys.size() == 2;
      });
      assertThat(keys.get(1))
          .as("the keys of rows (1, 1) and (1, 2)")
          .isEqualTo(keys.get(0))
          .contains("\"kind\":true");
      other.deleteConnector("tinyint");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // A connector restarted from older offsets

  /** Whether a replica connection (the connector's binlog client) is reading the binary log. */
  private boolean binlogIsRead() throws Exception {
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")) {
      return rs.next() && rs.getInt(1) > 0;
    }
  }

  private static final String COUNTERS_TABLE =
      "CREATE TABLE inventory.counters (id BIGINT PRIMARY KEY," + " version BIGINT NOT NULL)";

  /**
   * The worker stops and a new one starts from offsets it had flushed a round earlier (as after a
   * crash with a long {@code offset.flush.interval.ms}): the connector publishes again, from the
   * older binlog position, inserts, updates and deletes that main already holds. Ingest fences
   * them by binlog position: no deleted row comes back, no row goes back to an older version, and
   * what is written after the restart arrives.
   */
  @Test
  void aConnectorRestartedFromOlderOffsetsReplaysWhatMainHoldsAndNothingComesBack()
      throws Exception {
    TableIdentifier counters = TableIdentifier.of("inventory", "counters");
    long version = 0;
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement()) {
      for (long id = 1; id <= 300; id++) {
        s.execute("INSERT INTO counters VALUES (" + id + ", " + ++version + ")");
      }
      Eventually.noDifference(SYNCED, () -> countersDiffer(counters));
      Eventually.until(
          Duration.ofSeconds(60), "Connect's offsets file", () -> Files.exists(connectOffsets));
      Thread.sleep(2_000); // one more flush of the offsets: they now cover the inserts
      Path flushedEarlier = EmbeddedConnect.copyOffsets(
          connectOffsets,
          connectOffsets.resolveSibling("connect.offsets.earlier"),
          Duration.ofSeconds(30));
      // Changes after the saved offsets: they will be published twice.
      for (long id = 1; id <= 300; id++) {
        if (id % 3 == 0) {
          s.execute("DELETE FROM counters WHERE id = " + id);
        } else {
          s.execute("UPDATE counters SET version = " + ++version + " WHERE id = " + id);
        }
      }
      Eventually.noDifference(SYNCED, () -> countersDiffer(counters));
      double fencedBefore = fenced();
      connect.close();
      Files.copy(flushedEarlier, connectOffsets, StandardCopyOption.REPLACE_EXISTING);
      connect = EmbeddedConnect.start(kafka.bootstrapServers(), connectOffsets, 1000);
      connect.createConnector(Files.readString(connector()), connectorOverrides(mariadb));
      for (long id = 301; id <= 350; id++) {
        s.execute("INSERT INTO counters VALUES (" + id + ", " + ++version + ")");
      }
      Eventually.noDifference(SYNCED, () -> countersDiffer(counters));
      // Each change the connector published more than once was applied once: the rest fenced.
      long distinct = 300 + 300 + 50;
      long[] published = {0};
      Eventually.until(SYNCED, "every replayed change fenced by its binlog position", () -> {
        published[0] = feed.readAvailable("dbserver2.inventory.counters").stream()
            .filter(r -> r.value() != null)
            .count();
        return fenced() - fencedBefore == published[0] - distinct;
      });
      System.out.printf(
          "MariaDB connector restart: %d changes published for %d made, %.0f replayed changes"
              + " fenced, %d rows on main%n",
          published[0],
          distinct,
          fenced() - fencedBefore,
          TableRows.read(reader.loadTable(counters), Branches.MAIN).size());
      assertThat(published[0])
          .as("changes published again after the restart")
          .isGreaterThan(distinct);
    }
    Verifier.Report report = Verifier.verify(reader.loadTable(counters), counters.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
  }

  private double fenced() {
    return ingest.meters().find("lakestream.ingest.fenced").counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }

  private String countersDiffer(TableIdentifier id) throws Exception {
    if (!reader.tableExists(id)) {
      return "no table " + id + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, version FROM counters")) {
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", rs.getLong("id"));
        row.put("version", rs.getLong("version"));
        expected.put(List.of(rs.getLong("id")), row);
      }
    }
    Map<List<Object>, Map<String, Object>> actual =
        TableRows.byKey(TableRows.read(reader.loadTable(id), Branches.MAIN), List.of("id"));
    return TableComparison.differences(expected, actual);
  }

  private String customersDiffer(TableIdentifier id) throws Exception {
    if (!reader.tableExists(id)) {
      return "no table " + id + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = mariadb.connect("inventory");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT id, name, qty, price, CAST(updated AS CHAR) AS updated FROM customers")) {
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", rs.getLong("id"));
        row.put("name", rs.getString("name"));
        row.put("qty", intOrNull(rs, "qty"));
        row.put("price", rs.getBigDecimal("price"));
        row.put("updated", dateTime(rs.getString("updated")));
        expected.put(List.of(rs.getLong("id")), row);
      }
    }
    Map<List<Object>, Map<String, Object>> actual =
        TableRows.byKey(TableRows.read(reader.loadTable(id), Branches.MAIN), List.of("id"));
    return TableComparison.differences(expected, actual);
  }

  // ---------------------------------------------------------------------------------------------
  // A server that would send partial rows

  /**
   * A MariaDB server whose version says "MariaDB" is a blocker: Debezium's binary-log client then
   * reads MariaDB's GTID events, and a restarted connector skips rows ({@code
   * MariaDbShapesEndToEndTest}); the servers of these tests report one without the word.
   */
  @Test
  void aMariaDbServerThatSaysSoInItsVersionIsABlockerForCheckSource() throws Exception {
    assertThat(checkSource(mariadb).out()).doesNotContain("BLOCKER  version");
    try (EmbeddedMariaDb saysSo =
        EmbeddedMariaDb.start(Map.of("version", "5.7.19-MariaDB-10.11"))) {
      CheckSource blocked = checkSource(saysSo);
      assertThat(blocked.exit()).as(blocked.out()).isEqualTo(1);
      assertThat(blocked.out())
          .contains("BLOCKER  version: 5.7.19-MariaDB-10.11: says MariaDB", "skips the first rows")
          .doesNotContain("SHOW BINARY LOG STATUS");
    }
    try (EmbeddedMariaDb own = EmbeddedMariaDb.start(Map.of("version", "10.11.6-log"))) {
      CheckSource blocked = checkSource(own);
      assertThat(blocked.exit()).as(blocked.out()).isEqualTo(1);
      assertThat(blocked.out())
          .contains("BLOCKER  version: 10.11.6-log: Debezium", "SHOW BINARY LOG STATUS")
          .doesNotContain("says MariaDB");
    }
  }

  /**
   * A server that compresses its binary log ({@code log_bin_compress=ON}) writes a row event longer
   * than {@code log_bin_compress_min_len} (256 bytes) compressed, and the connector's binary-log
   * reader drops it without an error: the row never reaches Kafka. {@code check-source} makes it a
   * blocker.
   */
  @Test
  void aCompressedBinaryLogLosesRowsAndIsABlockerForCheckSource() throws Exception {
    try (EmbeddedMariaDb compressing = EmbeddedMariaDb.start(Map.of("log-bin-compress", "ON"));
        EmbeddedConnect other = EmbeddedConnect.start(kafka.bootstrapServers());
        KafkaChangeFeed topics =
            new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel())) {
      compressing.execute(
          "CREATE DATABASE inventory",
          "CREATE TABLE inventory.t (id INT PRIMARY KEY, v TEXT)",
          "INSERT INTO inventory.t VALUES (0, 'read by the snapshot')");
      CheckSource blocked = checkSource(compressing);
      assertThat(blocked.exit()).as(blocked.out()).isEqualTo(1);
      assertThat(blocked.out())
          .contains("BLOCKER  log_bin_compress: ON: row events longer than", "drops them");
      assertThat(checkSource(mariadb).out()).doesNotContain("log_bin_compress");

      String topic = "compressed.inventory.t";
      register(other, compressing, Files.readString(connector()), "compressed", Map.of());
      snapshotEnded(topics, topic);
      compressing.execute(
          "INSERT INTO inventory.t VALUES (1, REPEAT('large ', 200))",
          "INSERT INTO inventory.t VALUES (2, 'small')",
          "INSERT INTO inventory.t VALUES (3, 'small')");
      List<String> values = new ArrayList<>();
      Eventually.until(SYNCED, "the small rows written after the large one in Kafka", () -> {
        topics.readAvailable(topic).stream()
            .filter(r -> r.value() != null)
            .forEach(r -> values.add(new String(r.value(), StandardCharsets.UTF_8)));
        return values.stream().filter(v -> v.contains("\"v\":\"small\"")).count() == 2;
      });
      assertThat(values)
          .as("the large row's insert, written before them")
          .noneMatch(v -> v.contains("large large"));
      other.deleteConnector("compressed");
    }
  }

  @Test
  void aBinaryLogWithMinimalRowImagesIsRefusedByTheConnectorAndByCheckSource() throws Exception {
    try (EmbeddedMariaDb minimal = EmbeddedMariaDb.start(
            Map.of("binlog-row-image", "MINIMAL", "binlog-expire-logs-seconds", "86400"));
        EmbeddedConnect other = EmbeddedConnect.start(kafka.bootstrapServers())) {
      minimal.execute(
          "CREATE DATABASE inventory",
          "CREATE TABLE inventory.t (id INT PRIMARY KEY, v TEXT)",
          // A partitioned table: check-source says what its partition statements publish.
          "CREATE TABLE inventory.p (id INT, y INT, PRIMARY KEY (id, y)) PARTITION BY RANGE (y)"
              + " (PARTITION a VALUES LESS THAN (2026), PARTITION b VALUES LESS THAN MAXVALUE)");
      Map<String, String> overrides = new HashMap<>(connectorOverrides(minimal));
      overrides.put("topic.prefix", "minimal");
      overrides.put("schema.history.internal.kafka.topic", "minimal.schema-history");
      assertThatThrownBy(() -> other.createConnector(Files.readString(connector()), overrides))
          .hasMessageContaining("binlog_row_image");

      CheckSource blocked = checkSource(minimal);
      assertThat(blocked.exit()).as(blocked.out()).isEqualTo(1);
      assertThat(blocked.out())
          .contains("BLOCKER  binlog_row_image: MINIMAL", "partial row")
          .contains("INFO     binlog_expire_logs_seconds: 86400 (24.0 h): a connector stopped or"
              + " behind longer finds the changes it had not read purged, and its task fails at"
              + " start")
          .contains("OK       inventory.p: partitioned: a TRUNCATE, DROP or EXCHANGE PARTITION"
              + " publishes no row change")
          .doesNotContain("inventory.t: partitioned");
    }
    CheckSource ok = checkSource(mariadb);
    assertThat(ok.exit()).as(ok.out()).isZero();
    assertThat(ok.out())
        .contains(
            "OK       binlog_row_image: FULL",
            "INFO     binlog_expire_logs_seconds: 0: the server sets no expiry of its binary logs",
            "inventory.customers: key [id]",
            "WARNING  inventory.zoo.tm: TIME");
  }

  /**
   * MariaDB's own column types ({@code UUID}, {@code INET6}, {@code INET4}) stop Debezium's MySQL
   * connector, for every table, when it reads the definition of a table that has one, captured or
   * not. {@code check-source} names those tables with the types to change to; with the settings it
   * names (the tables left out, unparseable definitions passed over), the connector reads the other
   * tables, and goes on past rows and definitions of the tables it leaves out.
   */
  @Test
  void mariaDbsOwnTypesStopTheConnectorAndCheckSourceNamesTheTablesAndTheWayOut() throws Exception {
    try (EmbeddedMariaDb own = EmbeddedMariaDb.start(Map.of());
        EmbeddedConnect other = EmbeddedConnect.start(kafka.bootstrapServers());
        KafkaChangeFeed topics =
            new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel())) {
      own.execute(
          "CREATE DATABASE inventory",
          "CREATE DATABASE network",
          "CREATE TABLE inventory.devices (id INT PRIMARY KEY, serial UUID)",
          "CREATE TABLE inventory.plain (id INT PRIMARY KEY, v TEXT)",
          "INSERT INTO inventory.plain VALUES (1, 'a')",
          "CREATE TABLE network.hosts (id INT PRIMARY KEY, v6 INET6, v4 INET4)");
      CheckSource blocked = checkSource(own);
      assertThat(blocked.exit()).as(blocked.out()).isEqualTo(1);
      assertThat(blocked.out())
          .contains("BLOCKER  inventory.devices: column(s) serial UUID (make it CHAR(36)):"
              + " MariaDB's own type(s), which Debezium's MySQL connector cannot parse; it stops,"
              + " for every table")
          .contains("BLOCKER  network.hosts (not captured): column(s) v6 INET6 (make it"
              + " VARCHAR(39)), v4 INET4 (make it VARCHAR(15))")
          .contains("or set schema.history.internal.skip.unparseable.ddl=true (the connector"
              + " then passes over a definition it cannot parse");
      String skip = "schema.history.internal.skip.unparseable.ddl";
      Map<String, String> wayOut =
          Map.of("table.exclude.list", "inventory\\.devices", skip, "true");
      CheckSource fixed = checkSource(own, wayOut);
      assertThat(fixed.out()).as(fixed.out()).doesNotContain("MariaDB's own type");
      // Reading only captured tables' definitions in the snapshot is not enough: an ALTER of a
      // table left out, in the binary log, stops the connector all the same.
      assertThat(checkSource(
                  own,
                  Map.of(
                      "table.exclude.list", "inventory\\.devices",
                      "schema.history.internal.store.only.captured.tables.ddl", "true"))
              .out())
          .contains("BLOCKER  inventory.devices (not captured)", "BLOCKER  network.hosts");

      String shipped = Files.readString(connector());
      assertThat(failure(other, own, shipped, "owntypes", Map.of(), () -> {}))
          .as("the shipped connector, stopped by the definitions its snapshot reads")
          .contains("couldn't be parsed", "`serial` uuid");

      register(other, own, shipped, "owntypesout", wayOut);
      Eventually.until(SYNCED, "the snapshot's row of inventory.plain in Kafka", () -> !topics
          .readAvailable("owntypesout.inventory.plain")
          .isEmpty());
      own.execute(
          "INSERT INTO inventory.devices VALUES (1, UUID())",
          "ALTER TABLE inventory.devices ADD COLUMN mac INET6",
          "CREATE TABLE network.routes (id INT PRIMARY KEY, via INET4)",
          "INSERT INTO network.hosts VALUES (1, '::1', '10.0.0.1')",
          "INSERT INTO inventory.plain VALUES (2, 'b')");
      Eventually.until(
          SYNCED,
          "the streamed row of inventory.plain in Kafka, after the rows of the tables left out",
          () -> topics.readAvailable("owntypesout.inventory.plain").size() == 2);
      assertThat(other.status("owntypesout")).doesNotContain("FAILED");
      other.deleteConnector("owntypesout");
    }
  }

  /**
   * MariaDB's tables that stop Debezium's MySQL connector, for every table: a system-versioned
   * table (its definition, in the snapshot), a captured sequence (its {@code NEXTVAL}'s row), a
   * {@code COMPRESSED} column (its row, in any database). {@code check-source} reports each, and
   * stops reporting the first two once the connector leaves them out.
   */
  @Test
  void mariaDbTablesTheConnectorCannotReadStopItAndAreBlockersForCheckSource() throws Exception {
    try (EmbeddedMariaDb own = EmbeddedMariaDb.start(Map.of());
        EmbeddedConnect other = EmbeddedConnect.start(kafka.bootstrapServers());
        KafkaChangeFeed topics =
            new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel())) {
      own.execute(
          "CREATE DATABASE inventory",
          "CREATE DATABASE archive",
          "CREATE TABLE inventory.t (id INT PRIMARY KEY)",
          "INSERT INTO inventory.t VALUES (1)",
          "CREATE SEQUENCE inventory.ids",
          "CREATE TABLE inventory.kept (id INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING",
          "CREATE TABLE archive.notes (id INT PRIMARY KEY, body BLOB COMPRESSED,"
              + " kind ENUM('plain', 'compressed'))");
      String seen =
          "BLOCKER  inventory.ids: a sequence: its NEXTVAL writes a row the connector has no"
              + " schema for";
      String versioned = "BLOCKER  inventory.kept: system-versioned: Debezium's MySQL connector"
          + " cannot parse its definition (WITH SYSTEM VERSIONING)";
      String compressed = "BLOCKER  archive.notes: COMPRESSED column(s) body: the connector's"
          + " binary-log reader cannot decode their type";
      CheckSource blocked = checkSource(own);
      assertThat(blocked.exit()).as(blocked.out()).isEqualTo(1);
      assertThat(blocked.out()).contains(seen, versioned, compressed);

      String shipped = Files.readString(connector());
      String skip = "schema.history.internal.skip.unparseable.ddl";
      // The shipped connector: the versioned table's definition stops its snapshot.
      assertThat(failure(other, own, shipped, "cannot-read-1", Map.of(), () -> {}))
          .contains("WITH SYSTEM");
      // The versioned table left out: a NEXTVAL of the captured sequence stops it.
      Map<String, String> versionedOut =
          Map.of("table.exclude.list", "inventory\\.kept", skip, "true");
      assertThat(checkSource(own, versionedOut).out())
          .contains(seen, compressed)
          .doesNotContain("system-versioned");
      assertThat(failure(other, own, shipped, "cannot-read-2", versionedOut, () -> {
            snapshotEnded(topics, "cannot-read-2.inventory.t");
            own.execute("INSERT INTO inventory.t VALUES (NEXTVAL(inventory.ids) + 10)");
          }))
          .contains("inventory.ids whose schema isn't known");
      // Both left out: the connector reads past a NEXTVAL, and stops at the compressed column's
      // row.
      Map<String, String> bothOut =
          Map.of("table.exclude.list", "inventory\\.kept,inventory\\.ids", skip, "true");
      assertThat(checkSource(own, bothOut).out())
          .contains(compressed)
          .doesNotContain("system-versioned", "a sequence");
      assertThat(failure(other, own, shipped, "cannot-read-3", bothOut, () -> {
            snapshotEnded(topics, "cannot-read-3.inventory.t");
            own.execute(
                "INSERT INTO inventory.kept VALUES (1, 1)",
                "UPDATE inventory.kept SET x = 2",
                "INSERT INTO inventory.t VALUES (NEXTVAL(inventory.ids) + 100)");
            Eventually.until(
                SYNCED,
                "the row written with NEXTVAL in Kafka",
                () -> topics.readAvailable("cannot-read-3.inventory.t").stream()
                    .anyMatch(r -> r.value() != null
                        && new String(r.value(), StandardCharsets.UTF_8).contains("\"op\":\"c\"")));
            own.execute("INSERT INTO archive.notes (id, body) VALUES (1, 'text')");
          }))
          .contains("ColumnType.byCode(int)");
    }
  }

  /**
   * Waits for the last record of the connector's snapshot on {@code topic}, so that what the test
   * writes next is streamed: the connector counts as running before its snapshot has read anything.
   */
  private static void snapshotEnded(KafkaChangeFeed topics, String topic) throws Exception {
    Eventually.until(
        SYNCED, "the snapshot's last record on " + topic, () -> topics.readAvailable(topic).stream()
            .anyMatch(r -> r.value() != null
                && new String(r.value(), StandardCharsets.UTF_8)
                    .contains("\"snapshot\":\"last\"")));
  }

  /** A statement against {@code db} that may throw. */
  private interface SourceStatements {
    void run() throws Exception;
  }

  /**
   * The trace of the task of the shipped connector registered as {@code name} (its topic prefix
   * too) with {@code overrides}, after its snapshot and {@code then}: it must fail.
   */
  private String failure(
      EmbeddedConnect worker,
      EmbeddedMariaDb db,
      String shipped,
      String name,
      Map<String, String> overrides,
      SourceStatements then)
      throws Exception {
    boolean running = true;
    try {
      register(worker, db, shipped, name, overrides);
    } catch (IllegalStateException failedAtOnce) {
      // Registering waits for the task: it may see it fail, or running before it does.
      assertThat(failedAtOnce).hasMessageStartingWith("connector " + name + " failed: ");
      running = false;
    }
    if (running) {
      then.run();
    }
    Eventually.until(SYNCED, "connector " + name + "'s task to fail", () -> worker
        .status(name)
        .contains("\"FAILED\""));
    String status = worker.status(name);
    worker.deleteConnector(name);
    return status;
  }

  /** Registers the shipped connector as {@code name} (its topic prefix too) for {@code db}. */
  private void register(
      EmbeddedConnect worker,
      EmbeddedMariaDb db,
      String shipped,
      String name,
      Map<String, String> overrides)
      throws Exception {
    Map<String, String> settings = new HashMap<>(connectorOverrides(db));
    settings.remove("signal.data.collection");
    settings.putAll(overrides);
    settings.put("topic.prefix", name);
    settings.put("schema.history.internal.kafka.topic", name + ".schema-history");
    worker.createConnector(shipped.replace("\"inventory-mariadb\"", "\"" + name + "\""), settings);
  }

  /**
   * A captured column named {@code _pos} and a floating-point key (ingest refuses the tables'
   * changes) are blockers.
   */
  @Test
  void columnNamesAndKeysIcebergCannotTakeAreBlockersForCheckSource() throws Exception {
    try (EmbeddedMariaDb db = EmbeddedMariaDb.start(Map.of())) {
      db.execute(
          "CREATE DATABASE inventory",
          "CREATE TABLE inventory.positions (id INT PRIMARY KEY, _pos INT, _file TEXT)",
          "CREATE TABLE inventory.measures (x DOUBLE PRIMARY KEY, v TEXT)",
          "CREATE TABLE inventory.priced (sku DECIMAL(10,0) PRIMARY KEY, v TEXT)");
      CheckSource blocked = checkSource(db);
      assertThat(blocked.exit()).as(blocked.out()).isEqualTo(1);
      assertThat(blocked.out())
          .contains("BLOCKER  inventory.positions: column(s) [_pos]: ingest refuses every change")
          .contains("\"column.exclude.list\": \"inventory\\\\.positions\\\\._pos\"")
          .contains("BLOCKER  inventory.measures: key column(s) [x double]: Iceberg takes no"
              + " floating-point column as a key")
          .doesNotContain("BLOCKER  inventory.priced", "decimal.handling.mode");
      // A DECIMAL key arrives as a double once the connector sends decimals as doubles.
      CheckSource doubles = checkSource(
          db, Map.of("decimal.handling.mode", "double", "time.precision.mode", "connect"));
      assertThat(doubles.out())
          .contains("BLOCKER  inventory.priced: key column(s) [sku decimal]: Iceberg takes no"
              + " floating-point column as a key")
          .contains("a DECIMAL key arrives as a double with the connector's"
              + " decimal.handling.mode=double: set it to precise")
          .contains("WARNING  decimal.handling.mode: double: Debezium sends decimal")
          .contains("WARNING  time.precision.mode: connect: Debezium sends times and timestamps in"
              + " milliseconds");
      // The driver and the fetch size an earlier mariadb-inventory.json set.
      CheckSource earlier = checkSource(
          db,
          Map.of(
              "database.jdbc.driver", "org.mariadb.jdbc.Driver",
              "database.protocol", "jdbc:mariadb",
              "snapshot.fetch.size", "2048"));
      assertThat(earlier.out())
          .contains("BLOCKER  database.jdbc.driver: org.mariadb.jdbc.Driver: the connector's"
              + " snapshot of a table with a DATE, TIME, DATETIME or TIMESTAMP column stops the"
              + " connector");
      assertThat(checkSource(db, Map.of("snapshot.fetch.size", "2048")).out())
          .contains("WARNING  snapshot.fetch.size: 2048: the snapshot reads binary rows");
      assertThat(blocked.out()).doesNotContain("database.jdbc.driver", "snapshot.fetch.size");
    }
  }

  private static Integer intOrNull(ResultSet rs, String column) throws Exception {
    return rs.getObject(column) == null ? null : rs.getInt(column);
  }

  private static LocalDateTime dateTime(String text) {
    return text == null ? null : LocalDateTime.parse(text.replace(' ', 'T'));
  }

  private static byte[] hex(String hex) {
    return HexFormat.of().parseHex(hex);
  }
}
