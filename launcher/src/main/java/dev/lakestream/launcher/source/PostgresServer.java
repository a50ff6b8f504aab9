package dev.lakestream.launcher.source;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/**
 * What the checks read of the PostgreSQL server itself: its version (read once), its settings, and
 * the connector's publication.
 */
final class PostgresServer {

  private final Connection connection;
  private final Map<String, String> connector;
  private int version;

  /** {@code connector}: the connector's configuration (its {@code config} object), or empty. */
  PostgresServer(Connection connection, Map<String, String> connector) {
    this.connection = connection;
    this.connector = connector;
  }

  String publication() {
    return connector.getOrDefault("publication.name", "dbz_publication");
  }

  /** Whether the connector's publication sends stored generated columns (PostgreSQL 18's option). */
  boolean publishesGeneratedColumns() throws SQLException {
    if (version() < 180000) {
      return false;
    }
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT pubgencols FROM pg_publication WHERE pubname = ?")) {
      ps.setString(1, publication());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && "s".equals(rs.getString(1));
      }
    }
  }

  int version() throws SQLException {
    if (version == 0) {
      version = Integer.parseInt(setting("server_version_num"));
    }
    return version;
  }

  String setting(String name) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SHOW " + name)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
