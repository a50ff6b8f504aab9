package dev.lakestream.launcher;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The source database of the end-to-end tests: schema {@code inventory} with {@code customers}
 * (bigint key; int, numeric, text, boolean, date, timestamp, timestamptz, bytea, uuid, jsonb) and
 * {@code orders} (composite key), a random workload of inserts, updates, deletes and primary-key
 * updates in small transactions, and the comparison of a pipeline table's main branch with {@code
 * SELECT *}, value for value.
 */
final class InventoryDatabase {

  private static final String CUSTOMERS =
      "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, qty int, price numeric(12,2), name text, active boolean,"
          + " born date, updated_at timestamp, created_at timestamptz, blob bytea, uid uuid, doc jsonb)";
  private static final String ORDERS =
      "CREATE TABLE inventory.orders (tenant int, id bigint, amount numeric(12,2), note text, PRIMARY KEY (tenant, id))";

  /** Where the database is: an in-process server or a container. */
  @FunctionalInterface
  interface Connections {
    Connection connect() throws SQLException;
  }

  private final Connections postgres;
  private final Random random;
  private final List<Long> customerIds = new ArrayList<>();
  private final List<List<Object>> orderKeys = new ArrayList<>();
  private long nextId = 1;

  InventoryDatabase(Connections postgres, long seed) {
    this.postgres = postgres;
    this.random = new Random(seed);
  }

  /** Creates the schema and tables, with {@code rows} rows in each table. */
  void create(int rows) throws Exception {
    createTables();
    try (Connection c = postgres.connect()) {
      c.setAutoCommit(false);
      for (int i = 0; i < rows; i++) {
        insertCustomer(c);
        insertOrder(c);
      }
      c.commit();
    }
  }

  /** Creates the schema and its tables, empty. */
  void createTables() throws Exception {
    try (Connection c = postgres.connect();
        Statement s = c.createStatement()) {
      for (String sql : new String[] {"CREATE SCHEMA inventory", CUSTOMERS, ORDERS}) {
        s.execute(sql);
      }
    }
  }

  /**
   * Random transactions of 1 to 5 changes until {@code atLeast} changes or {@code stop}, pausing
   * {@code pauseMs} after each; records each transaction id; returns the number of changes.
   */
  int runWorkload(int atLeast, long pauseMs, List<Long> txids, BooleanSupplier stop)
      throws Exception {
    int changes = 0;
    try (Connection c = postgres.connect()) {
      c.setAutoCommit(false);
      while (changes < atLeast && !stop.getAsBoolean()) {
        int n = 1 + random.nextInt(5);
        for (int i = 0; i < n; i++) {
          changes += change(c);
        }
        try (Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT pg_current_xact_id()::text::bigint")) {
          rs.next();
          txids.add(rs.getLong(1));
        }
        c.commit();
        if (pauseMs > 0) {
          Thread.sleep(pauseMs);
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
        return update(
            c,
            "UPDATE inventory.orders SET amount = ?, note = ? WHERE tenant = ? AND id = ?",
            decimal(),
            "n" + random.nextInt(1000),
            key.get(0),
            key.get(1));
      }
      long id = customerIds.get(random.nextInt(customerIds.size()));
      return update(
          c,
          "UPDATE inventory.customers SET qty = ?, price = ?, name = ?, updated_at = ?, doc = ?::jsonb WHERE id = ?",
          random.nextInt(1000),
          decimal(),
          "c" + random.nextInt(100000),
          timestamp(),
          json(),
          id);
    }
    if (pick < 92) {
      if (orders) {
        List<Object> key = orderKeys.remove(random.nextInt(orderKeys.size()));
        return update(
            c, "DELETE FROM inventory.orders WHERE tenant = ? AND id = ?", key.get(0), key.get(1));
      }
      long id = customerIds.remove(random.nextInt(customerIds.size()));
      return update(c, "DELETE FROM inventory.customers WHERE id = ?", id);
    }
    if (orders) {
      int index = random.nextInt(orderKeys.size());
      List<Object> key = orderKeys.get(index);
      long newId = nextId++;
      orderKeys.set(index, List.of(key.get(0), newId));
      return update(
          c,
          "UPDATE inventory.orders SET id = ? WHERE tenant = ? AND id = ?",
          newId,
          key.get(0),
          key.get(1));
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
    return update(
        c,
        "INSERT INTO inventory.customers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)",
        id,
        random.nextInt(1000),
        decimal(),
        "c" + random.nextInt(100000),
        random.nextBoolean(),
        LocalDate.ofEpochDay(random.nextInt(20000)),
        timestamp(),
        OffsetDateTime.of(
            LocalDateTime.ofEpochSecond(
                1_600_000_000L + random.nextInt(100_000_000),
                random.nextInt(1_000_000) * 1000,
                ZoneOffset.UTC),
            ZoneOffset.ofHours(random.nextInt(5))),
        blob,
        new UUID(random.nextLong(), random.nextLong()),
        json());
  }

  private int insertOrder(Connection c) throws Exception {
    List<Object> key = List.of(1 + random.nextInt(4), nextId++);
    orderKeys.add(key);
    return update(
        c,
        "INSERT INTO inventory.orders VALUES (?, ?, ?, ?)",
        key.get(0),
        key.get(1),
        decimal(),
        "n" + random.nextInt(1000));
  }

  private BigDecimal decimal() {
    return BigDecimal.valueOf(random.nextInt(100_000_000) - 50_000_000L, 2);
  }

  private LocalDateTime timestamp() {
    return LocalDateTime.ofEpochSecond(
        1_600_000_000L + random.nextInt(100_000_000),
        random.nextInt(1_000_000) * 1000,
        ZoneOffset.UTC);
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

  /** Null when main of both tables equals SELECT *, else what differs. */
  /** Truncates {@code inventory.orders}; the workload inserts orders again from nothing. */
  void truncateOrders() throws Exception {
    try (Connection c = postgres.connect();
        Statement s = c.createStatement()) {
      s.execute("TRUNCATE inventory.orders");
    }
    orderKeys.clear();
  }

  String mainDiffers(Catalog reader) throws Exception {
    Map<String, List<String>> keys =
        Map.of("customers", List.of("id"), "orders", List.of("tenant", "id"));
    for (var table : keys.entrySet()) {
      TableIdentifier id = TableIdentifier.of("inventory", table.getKey());
      if (!reader.tableExists(id)) {
        return "no table " + id + " yet";
      }
      var main =
          TableRows.byKey(TableRows.read(reader.loadTable(id), Branches.MAIN), table.getValue());
      String diff = TableComparison.differences(selectStar(table.getKey(), table.getValue()), main);
      if (diff != null) {
        return id + ": " + diff;
      }
    }
    return null;
  }

  /** {@code SELECT *} by key, each value as the Java type Iceberg's generic reader returns. */
  private Map<List<Object>, Map<String, Object>> selectStar(String table, List<String> key)
      throws Exception {
    try (Connection c = postgres.connect()) {
      return SourceTableComparison.rows(c, "SELECT * FROM inventory." + table, key);
    }
  }

  /**
   * Per change of both tables (snapshot reads left out): its source commit time to the first main
   * snapshot that holds its source offset, sorted ({@link ChangeFreshness}).
   */
  List<Long> freshness(String bootstrapServers, Catalog reader) throws Exception {
    return freshness(bootstrapServers, reader, List.of("customers", "orders"));
  }

  /** The changes of both tables in their topics (snapshot reads and tombstones left out). */
  static int changesInTopics(String bootstrapServers) throws Exception {
    int n = 0;
    for (String table : List.of("customers", "orders")) {
      n += ChangeFreshness.changes(bootstrapServers, "dbserver1.inventory." + table)
          .size();
    }
    return n;
  }

  private static List<Long> freshness(String bootstrapServers, Catalog reader, List<String> tables)
      throws Exception {
    List<Long> out = new ArrayList<>();
    for (String table : tables) {
      out.addAll(ChangeFreshness.measure(
              bootstrapServers,
              "dbserver1.inventory." + table,
              reader.loadTable(TableIdentifier.of("inventory", table)),
              0)
          .main());
    }
    out.sort(null);
    return out;
  }
}
