package dev.lakestream.launcher;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A PostgreSQL query's rows compared with an Iceberg table's, on both branches: by key, each value
 * as Iceberg's generic reader returns it, in every column the query returns (a column only the
 * Iceberg table has is not compared).
 */
final class SourceTableComparison {

  private SourceTableComparison() {}

  /** Null when realtime and main of {@code id} equal the rows of {@code query}; else what differs. */
  static String differs(
      Catalog reader,
      InventoryDatabase.Connections source,
      String query,
      TableIdentifier id,
      List<String> key)
      throws Exception {
    if (!reader.tableExists(id)) {
      return "no table " + id + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected;
    try (Connection c = source.connect()) {
      expected = rows(c, query, key);
    }
    return differs(reader, expected, id, key);
  }

  /** Null when realtime and main of {@code id} hold the {@code expected} rows; else what differs. */
  static String differs(
      Catalog reader,
      Map<List<Object>, Map<String, Object>> expected,
      TableIdentifier id,
      List<String> key) {
    Table table = reader.loadTable(id);
    for (String branch : List.of(Branches.REALTIME, Branches.MAIN)) {
      String diff = TableComparison.differences(
          expected, TableRows.byKey(TableRows.read(table, branch), key));
      if (diff != null) {
        return branch + ": " + diff;
      }
    }
    return null;
  }

  /** The rows of {@code query}, by key. */
  static Map<List<Object>, Map<String, Object>> rows(Connection c, String query, List<String> key)
      throws Exception {
    Map<List<Object>, Map<String, Object>> rows = new HashMap<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
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
      // Arrays of these are lists of the same Java values on the table.
      case "_int4", "_int8", "_float4", "_float8", "_numeric", "_bool", "_text" ->
        Arrays.asList((Object[]) rs.getArray(i).getArray());
      case "date" -> rs.getObject(i, LocalDate.class);
      case "timestamp" -> rs.getObject(i, LocalDateTime.class);
      case "timestamptz" ->
        rs.getObject(i, OffsetDateTime.class).withOffsetSameInstant(ZoneOffset.UTC);
      case "bytea" -> ByteBuffer.wrap(rs.getBytes(i));
      case "uuid" -> rs.getObject(i, UUID.class);
      case "bool" -> rs.getBoolean(i);
      default -> rs.getString(i);
    };
  }

  /**
   * Null when {@code differences} finds none, else {@code table} and what it found (or its error):
   * what {@code Eventually.noDifference} waits on.
   */
  static String differing(String table, Callable<List<String>> differences) {
    try {
      List<String> found = differences.call();
      return found.isEmpty() ? null : table + ": " + found;
    } catch (Exception e) {
      return table + ": " + e;
    }
  }

  /** Adds to {@code out} the columns ({@code key.column}) in which a source row and main's differ. */
  @FunctionalInterface
  interface ColumnCheck {
    void compare(int key, ResultSet source, Map<String, Object> main, List<String> out)
        throws SQLException;
  }

  /**
   * The values of table {@code id}'s main that differ from the rows of {@code query} (its first
   * column the table's int key {@code id}), as {@code check} finds them, and {@code key.row} for a
   * row on one side only; {@code no table} while the table does not exist.
   */
  static List<String> byColumn(
      Catalog reader, Connection source, String query, TableIdentifier id, ColumnCheck check)
      throws Exception {
    if (!reader.tableExists(id)) {
      return List.of("no table " + id.name());
    }
    Map<Integer, Map<String, Object>> main = new TreeMap<>();
    for (Map<String, Object> row : TableRows.read(reader.loadTable(id), Branches.MAIN)) {
      main.put((Integer) row.get("id"), row);
    }
    List<String> out = new ArrayList<>();
    try (Statement s = source.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      while (rs.next()) {
        int key = rs.getInt(1);
        Map<String, Object> row = main.remove(key);
        if (row == null) {
          out.add(key + ".row");
        } else {
          check.compare(key, rs, row, out);
        }
      }
    }
    main.keySet().forEach(key -> out.add(key + ".row"));
    return out;
  }
}
