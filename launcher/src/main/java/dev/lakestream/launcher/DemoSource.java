package dev.lakestream.launcher;

import dev.lakestream.embedded.EmbeddedMariaDb;
import dev.lakestream.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The demo's source database: started on this machine, with the table {@code inventory.customers}
 * (id, name, balance, active, updated_at), the connector that captures it, and what the demo asks
 * of it in its own SQL. PostgreSQL by default; MariaDB where its server is installed.
 */
sealed interface DemoSource extends AutoCloseable {

  /** The source for {@code demo --source NAME}. */
  static DemoSource start(String name) throws Exception {
    return switch (name.toLowerCase(Locale.ROOT)) {
      case "postgresql", "postgres" -> new Postgres(EmbeddedPostgres.start());
      case "mariadb" -> {
        if (!EmbeddedMariaDb.installed()) {
          throw new IllegalArgumentException(
              "--source mariadb needs a MariaDB server on this machine (apt-get install"
                  + " mariadb-server); none was found");
        }
        yield new MariaDb(EmbeddedMariaDb.start());
      }
      default ->
        throw new IllegalArgumentException("--source wants postgresql or mariadb, not " + name);
    };
  }

  /** Its name in the demo's lines. */
  String name();

  /** Where it listens, for the demo's lines. */
  int port();

  Connection connect() throws SQLException;

  /** Creates the schema and the empty table. */
  void createTable() throws SQLException;

  /** The SQL of the current time, for {@code updated_at}. */
  String now();

  /** The connector's JSON, from the jar's {@code connectors/}. */
  String connectorJson() throws IOException;

  /** The connector settings that point it at this server and the broker. */
  Map<String, String> connectorOverrides(String bootstrapServers);

  /** Settings both apps need for this source's topics (empty: the defaults). */
  Map<String, String> pipelineSettings();

  /**
   * Commits the connection's transaction and returns what {@link #commitTimesMs} turns into its
   * commit time.
   */
  long commit(Connection c) throws SQLException;

  /** The commit times (ms since the epoch) of the transactions {@link #commit} returned. */
  List<Long> commitTimesMs(List<Long> commits) throws SQLException;

  /**
   * The table's rows for the export: id, name, balance as exact decimal text, active, updated_at
   * as microseconds since the epoch.
   */
  String exportQuery();

  /** A line about how exact the freshness numbers are, or null. */
  String freshnessNote();

  private static String resource(String name) throws IOException {
    try (InputStream in = DemoSource.class.getResourceAsStream("/connectors/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** PostgreSQL with logical decoding; commit times from {@code track_commit_timestamp}. */
  record Postgres(EmbeddedPostgres server) implements DemoSource {
    @Override
    public String name() {
      return "PostgreSQL";
    }

    @Override
    public int port() {
      return server.port();
    }

    @Override
    public Connection connect() throws SQLException {
      return server.connect();
    }

    @Override
    public void createTable() throws SQLException {
      server.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, name text, balance"
              + " numeric(12,2), active boolean, updated_at timestamptz)");
    }

    @Override
    public String now() {
      return "now()";
    }

    @Override
    public String connectorJson() throws IOException {
      return resource("postgres-inventory.json");
    }

    @Override
    public Map<String, String> connectorOverrides(String bootstrapServers) {
      return Map.of(
          "database.hostname",
          "127.0.0.1",
          "database.port",
          Integer.toString(server.port()),
          "database.password",
          "");
    }

    @Override
    public Map<String, String> pipelineSettings() {
      return Map.of();
    }

    @Override
    public long commit(Connection c) throws SQLException {
      long txid;
      try (Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT pg_current_xact_id()::text::bigint")) {
        rs.next();
        txid = rs.getLong(1);
      }
      c.commit();
      return txid;
    }

    @Override
    public List<Long> commitTimesMs(List<Long> txids) throws SQLException {
      try (Connection c = server.connect()) {
        return commitTimesMs(c, txids);
      }
    }

    /** PostgreSQL's own commit times of transactions ({@code track_commit_timestamp}). */
    static List<Long> commitTimesMs(Connection c, List<Long> txids) throws SQLException {
      List<Long> times = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT (extract(epoch FROM"
          + " pg_xact_commit_timestamp(?::text::xid8::xid)) * 1000)::bigint")) {
        for (long txid : txids) {
          ps.setLong(1, txid);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            times.add(rs.getLong(1));
          }
        }
      }
      return times;
    }

    @Override
    public String exportQuery() {
      return "SELECT id, name, balance::text, active,"
          + " (extract(epoch FROM updated_at) * 1000000)::bigint FROM inventory.customers";
    }

    @Override
    public String freshnessNote() {
      return null;
    }

    @Override
    public void close() throws Exception {
      server.close();
    }
  }

  /**
   * MariaDB with a ROW binary log, captured by Debezium's MySQL connector
   * ({@code connectors/mariadb-inventory.json}). Its binary log stamps whole seconds, so a
   * transaction's commit time is the client's clock when the commit returned.
   */
  record MariaDb(EmbeddedMariaDb server) implements DemoSource {
    @Override
    public String name() {
      return "MariaDB";
    }

    @Override
    public int port() {
      return server.port();
    }

    @Override
    public Connection connect() throws SQLException {
      return server.connect("inventory");
    }

    @Override
    public void createTable() throws SQLException {
      server.execute(
          "CREATE DATABASE inventory",
          "CREATE TABLE inventory.customers (id BIGINT PRIMARY KEY, name TEXT, balance"
              + " DECIMAL(12,2), active BOOLEAN, updated_at TIMESTAMP(6) NULL) CHARACTER SET"
              + " utf8mb4");
    }

    @Override
    public String now() {
      return "NOW(6)";
    }

    @Override
    public String connectorJson() throws IOException {
      return resource("mariadb-inventory.json");
    }

    @Override
    public Map<String, String> connectorOverrides(String bootstrapServers) {
      return Map.of(
          "database.hostname", "127.0.0.1",
          "database.port", Integer.toString(server.port()),
          "database.user", server.user(),
          "database.password", server.password(),
          "schema.history.internal.kafka.bootstrap.servers", bootstrapServers);
    }

    @Override
    public Map<String, String> pipelineSettings() {
      return Map.of("ingest.topics.regex", "dbserver2\\.inventory\\..*");
    }

    @Override
    public long commit(Connection c) throws SQLException {
      c.commit();
      return System.currentTimeMillis();
    }

    @Override
    public List<Long> commitTimesMs(List<Long> commits) {
      return commits;
    }

    @Override
    public String exportQuery() {
      return "SELECT id, name, CAST(balance AS CHAR), active,"
          + " CAST(UNIX_TIMESTAMP(updated_at) * 1000000 AS SIGNED) FROM inventory.customers";
    }

    @Override
    public String freshnessNote() {
      return "MariaDB's binary log stamps whole seconds: a change's source time is the start of its"
          + " second, so these are upper bounds (up to 1 s high)";
    }

    @Override
    public void close() throws Exception {
      server.close();
    }
  }
}
