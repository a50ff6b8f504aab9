package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.EmbeddedConnect;
import dev.lakestream.testkit.EmbeddedKafka;
import dev.lakestream.testkit.EmbeddedPostgres;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/**
 * The whole path on real parts: PostgreSQL with logical replication → the Debezium Postgres
 * connector in a Kafka Connect worker (registered over its REST API with {@code
 * connectors/postgres-inventory.json}) → Kafka → the ingest app → the sync app, all with
 * exactly-once. A random workload over two tables (one with a composite key) with inserts,
 * updates, deletes and primary-key updates; at the end main equals {@code SELECT *} value for value
 * and Verify passes. Prints freshness (source commit → on main) percentiles.
 */
class PostgresEndToEndTest {

  private static final int CHANGES = 10_000;
  private static final String CUSTOMERS =
      "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, qty int, price numeric(12,2), name text, active boolean,"
          + " born date, updated_at timestamp, created_at timestamptz, blob bytea, uid uuid, doc jsonb)";
  private static final String ORDERS =
      "CREATE TABLE inventory.orders (tenant int, id bigint, amount numeric(12,2), note text, PRIMARY KEY (tenant, id))";

  private final Random random = new Random(42);
  private final List<Long> customerIds = new ArrayList<>();
  private final List<List<Object>> orderKeys = new ArrayList<>();
  private long nextId = 1;

  @Test
  void postgresThroughDebeziumIngestAndSyncEqualsSelectStar() throws Exception {
    assumeTrue(EmbeddedPostgres.available(), "PostgreSQL server binaries are not installed");
    long started = System.currentTimeMillis();
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      postgres.execute("CREATE SCHEMA inventory", CUSTOMERS, ORDERS);
      try (Connection c = postgres.connect()) {
        c.setAutoCommit(false);
        for (int i = 0; i < 200; i++) {
          insertCustomer(c);
          insertOrder(c);
        }
        c.commit();
      }
      Map<String, String> settings = new HashMap<>();
      settings.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
      settings.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
      settings.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, "1");
      settings.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
      settings.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
      settings.put("metadata.max.age.ms", "1000");
      settings.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "3");
      settings.put(IngestConfig.TOPICS_REGEX, "dbserver1\\.inventory\\..*");
      settings.put(IngestConfig.FLUSH_INTERVAL_MS, "500");
      settings.put(IngestConfig.COMMIT_INTERVAL_MS, "100");
      settings.put(SyncConfig.BACKSTOP_MS, "2000");
      settings.put(PipelineConfig.METRICS_PORT, "0");
      warehouse.catalogProperties().forEach((k, v) -> settings.put(PipelineConfig.CATALOG_PREFIX + k, v));
      PipelineConfig shared = new PipelineConfig(settings);

      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(app(shared, "sync"));
          KafkaChangeFeed feed = new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel())) {
        Catalog reader = warehouse.catalog();
        ingest.start();
        sync.start();
        connect.createConnector(
            Files.readString(connectorsDir().resolve("postgres-inventory.json")),
            Map.of("database.hostname", "127.0.0.1", "database.port", Integer.toString(postgres.port()), "database.password", ""));
        // The snapshot arrives first; then the workload, one change at a time as users make them.
        Eventually.noDifference(Duration.ofSeconds(120), () -> mainDiffers(postgres, reader));
        long workloadStart = System.currentTimeMillis();
        List<Long> txids = new ArrayList<>();
        int changes = runWorkload(postgres, txids);
        long workloadMs = System.currentTimeMillis() - workloadStart;
        Eventually.noDifference(Duration.ofSeconds(180), () -> mainDiffers(postgres, reader));
        long convergedMs = System.currentTimeMillis() - workloadStart;

        for (String table : List.of("customers", "orders")) {
          TableIdentifier id = TableIdentifier.of("inventory", table);
          Verifier.Report report = Verifier.verify(reader.loadTable(id), id.toString());
          assertThat(report.passed()).as(report.toString()).isTrue();
        }
        List<Long> freshness = freshness(postgres, txids, feed.read("lakestream.main-commits", 1));
        Collections.sort(freshness);
        System.out.printf(
            "E2E: %d changes in %d transactions in %.1f s (%.0f changes/s); main == SELECT * %.1f s after the workload began;"
                + " freshness source commit -> main (ms, %d changes): p50=%d p95=%d p99=%d max=%d; whole test %.1f s%n",
            changes, txids.size(), workloadMs / 1000.0, changes * 1000.0 / workloadMs, convergedMs / 1000.0,
            freshness.size(), pct(freshness, 50), pct(freshness, 95), pct(freshness, 99),
            freshness.get(freshness.size() - 1), (System.currentTimeMillis() - started) / 1000.0);
        assertThat(changes).isGreaterThanOrEqualTo(CHANGES);
        assertThat(freshness).hasSizeGreaterThan(txids.size() / 2);
      }
    }
  }

  private static PipelineConfig app(PipelineConfig shared, String id) throws Exception {
    return shared.with(StreamsConfig.APPLICATION_ID_CONFIG, id)
        .with(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams-").toString());
  }

  private static Path connectorsDir() {
    Path here = Path.of("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("connectors"))) {
        return p.resolve("connectors");
      }
    }
    throw new IllegalStateException("no connectors/ folder above " + here);
  }

  /** Random transactions of 1 to 5 changes; returns the number of changes. */
  private int runWorkload(EmbeddedPostgres postgres, List<Long> txids) throws Exception {
    int changes = 0;
    try (Connection c = postgres.connect()) {
      c.setAutoCommit(false);
      while (changes < CHANGES) {
        int n = 1 + random.nextInt(5);
        for (int i = 0; i < n; i++) {
          changes += change(c);
        }
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_current_xact_id()::text::bigint")) {
          rs.next();
          txids.add(rs.getLong(1));
        }
        c.commit();
        if (txids.size() % 50 == 0) {
          Thread.sleep(20);
        }
      }
    }
    return changes;
  }

  private int change(Connection c) throws Exception {
    int pick = random.nextInt(100);
    boolean orders = random.nextInt(3) == 0;
    if (pick < 35 || (orders ? orderKeys.isEmpty() : customerIds.isEmpty())) {
      return orders ? insertOrder(c) : insertCustomer(c);
    }
    if (pick < 75) {
      if (orders) {
        List<Object> key = orderKeys.get(random.nextInt(orderKeys.size()));
        return update(c, "UPDATE inventory.orders SET amount = ?, note = ? WHERE tenant = ? AND id = ?",
            decimal(), "n" + random.nextInt(1000), key.get(0), key.get(1));
      }
      long id = customerIds.get(random.nextInt(customerIds.size()));
      return update(c, "UPDATE inventory.customers SET qty = ?, price = ?, name = ?, updated_at = ?, doc = ?::jsonb WHERE id = ?",
          random.nextInt(1000), decimal(), "c" + random.nextInt(100000), timestamp(), json(), id);
    }
    if (pick < 92) {
      if (orders) {
        List<Object> key = orderKeys.remove(random.nextInt(orderKeys.size()));
        return update(c, "DELETE FROM inventory.orders WHERE tenant = ? AND id = ?", key.get(0), key.get(1));
      }
      long id = customerIds.remove(random.nextInt(customerIds.size()));
      return update(c, "DELETE FROM inventory.customers WHERE id = ?", id);
    }
    if (orders) {
      int index = random.nextInt(orderKeys.size());
      List<Object> key = orderKeys.get(index);
      long newId = nextId++;
      orderKeys.set(index, List.of(key.get(0), newId));
      return update(c, "UPDATE inventory.orders SET id = ? WHERE tenant = ? AND id = ?", newId, key.get(0), key.get(1));
    }
    int index = random.nextInt(customerIds.size());
    long oldId = customerIds.get(index);
    long newId = nextId++;
    customerIds.set(index, newId);
    return update(c, "UPDATE inventory.customers SET id = ? WHERE id = ?", newId, oldId);
  }

  private int insertCustomer(Connection c) throws Exception {
    long id = nextId++;
    customerIds.add(id);
    byte[] blob = new byte[1 + random.nextInt(12)];
    random.nextBytes(blob);
    return update(c,
        "INSERT INTO inventory.customers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)",
        id, random.nextInt(1000), decimal(), "c" + random.nextInt(100000), random.nextBoolean(),
        LocalDate.ofEpochDay(random.nextInt(20000)), timestamp(),
        OffsetDateTime.of(LocalDateTime.ofEpochSecond(1_600_000_000L + random.nextInt(100_000_000), random.nextInt(1_000_000) * 1000, ZoneOffset.UTC), ZoneOffset.ofHours(random.nextInt(5))),
        blob, new UUID(random.nextLong(), random.nextLong()), json());
  }

  private int insertOrder(Connection c) throws Exception {
    List<Object> key = List.of(1 + random.nextInt(4), nextId++);
    orderKeys.add(key);
    return update(c, "INSERT INTO inventory.orders VALUES (?, ?, ?, ?)", key.get(0), key.get(1), decimal(), "n" + random.nextInt(1000));
  }

  private BigDecimal decimal() {
    return BigDecimal.valueOf(random.nextInt(100_000_000) - 50_000_000L, 2);
  }

  private LocalDateTime timestamp() {
    return LocalDateTime.ofEpochSecond(1_600_000_000L + random.nextInt(100_000_000), random.nextInt(1_000_000) * 1000, ZoneOffset.UTC);
  }

  private String json() {
    return "{\"n\": " + random.nextInt(1000) + ", \"tags\": [\"t" + random.nextInt(10) + "\"]}";
  }

  private static int update(Connection c, String sql, Object... args) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        Object a = args[i];
        if (a instanceof LocalDateTime t) {
          ps.setTimestamp(i + 1, Timestamp.valueOf(t));
        } else if (a instanceof OffsetDateTime t) {
          ps.setObject(i + 1, t, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
          ps.setObject(i + 1, a);
        }
      }
      return ps.executeUpdate();
    }
  }

  private static String mainDiffers(EmbeddedPostgres postgres, Catalog reader) throws Exception {
    Map<String, List<String>> keys = Map.of("customers", List.of("id"), "orders", List.of("tenant", "id"));
    for (var table : keys.entrySet()) {
      TableIdentifier id = TableIdentifier.of("inventory", table.getKey());
      if (!reader.tableExists(id)) {
        return "no table " + id + " yet";
      }
      var main = TableRows.byKey(TableRows.read(reader.loadTable(id), Branches.MAIN), table.getValue());
      String diff = TableComparison.differences(selectStar(postgres, table.getKey(), table.getValue()), main);
      if (diff != null) {
        return id + ": " + diff;
      }
    }
    return null;
  }

  /** {@code SELECT *} by key, each value as the Java type Iceberg's generic reader returns. */
  private static Map<List<Object>, Map<String, Object>> selectStar(EmbeddedPostgres postgres, String table, List<String> key)
      throws Exception {
    Map<List<Object>, Map<String, Object>> rows = new HashMap<>();
    try (Connection c = postgres.connect(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT * FROM inventory." + table)) {
      ResultSetMetaData meta = rs.getMetaData();
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
          row.put(meta.getColumnName(i), value(rs, i, meta.getColumnTypeName(i)));
        }
        List<Object> k = new ArrayList<>();
        key.forEach(col -> k.add(row.get(col)));
        rows.put(k, row);
      }
    }
    return rows;
  }

  private static Object value(ResultSet rs, int i, String type) throws Exception {
    if (rs.getObject(i) == null) {
      return null;
    }
    return switch (type) {
      case "int4" -> rs.getInt(i);
      case "int8" -> rs.getLong(i);
      case "numeric" -> rs.getBigDecimal(i);
      case "date" -> rs.getObject(i, LocalDate.class);
      case "timestamp" -> rs.getObject(i, LocalDateTime.class);
      case "timestamptz" -> rs.getObject(i, OffsetDateTime.class).withOffsetSameInstant(ZoneOffset.UTC);
      case "bytea" -> ByteBuffer.wrap(rs.getBytes(i));
      case "uuid" -> rs.getObject(i, UUID.class);
      case "bool" -> rs.getBoolean(i);
      default -> rs.getString(i);
    };
  }

  /**
   * Per source transaction: its commit time (PostgreSQL's own, track_commit_timestamp) to the commit
   * time of the first main snapshot of its table whose newest source commit time reaches it.
   */
  private static List<Long> freshness(EmbeddedPostgres postgres, List<Long> txids, List<ConsumerRecord<byte[], byte[]>> commits)
      throws Exception {
    List<MainCommitted> main = commits.stream().map(r -> MainCommitted.fromJson(r.value())).toList();
    List<Long> out = new ArrayList<>();
    try (Connection c = postgres.connect();
        PreparedStatement ps = c.prepareStatement("SELECT (extract(epoch FROM pg_xact_commit_timestamp(?::text::xid8::xid)) * 1000)::bigint")) {
      for (long txid : txids) {
        ps.setLong(1, txid);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          long committed = rs.getLong(1);
          main.stream()
              .filter(m -> m.maxSourceTsMs() >= committed)
              .mapToLong(MainCommitted::committedAtMs)
              .min()
              .ifPresent(at -> out.add(at - committed));
        }
      }
    }
    return out;
  }

  private static long pct(List<Long> sorted, int p) {
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
  }
}
