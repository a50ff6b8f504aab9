package dev.lakestream.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * A source table for generated change streams: its Debezium topic, columns and primary key.
 * Immutable; {@link #withColumn} gives the table after an {@code ALTER TABLE ... ADD COLUMN}.
 */
public record TestTable(
    String serverName, String schema, String name, List<Column> columns, List<String> key) {

  /** One column. */
  public record Column(String name, ColumnType type) {}

  public TestTable {
    columns = List.copyOf(columns);
    key = List.copyOf(key);
  }

  /** Debezium's topic for the table: {@code <server>.<schema>.<table>}. */
  public String topic() {
    return serverName + "." + schema + "." + name;
  }

  public TestTable withColumn(String column, ColumnType type) {
    List<Column> more = new ArrayList<>(columns);
    more.add(new Column(column, type));
    return new TestTable(serverName, schema, name, more, key);
  }

  public Column column(String column) {
    return columns.stream().filter(c -> c.name().equals(column)).findFirst().orElseThrow();
  }

  /** A table with a bigint key and a column of every type the type mapping is tested with. */
  public static TestTable wide(String schema, String name) {
    return new TestTable(
        "dbserver1",
        schema,
        name,
        List.of(
            new Column("id", ColumnType.INT64),
            new Column("name", ColumnType.STRING),
            new Column("qty", ColumnType.INT32),
            new Column("price", ColumnType.DECIMAL_12_2),
            new Column("active", ColumnType.BOOLEAN),
            new Column("born", ColumnType.DATE),
            new Column("updated_at", ColumnType.MICRO_TIMESTAMP),
            new Column("created_at", ColumnType.ZONED_TIMESTAMP),
            new Column("uid", ColumnType.UUID_TYPE),
            new Column("doc", ColumnType.JSON),
            new Column("blob", ColumnType.BYTES),
            new Column("score", ColumnType.FLOAT64)),
        List.of("id"));
  }

  /** A table with a composite key (tenant, id). */
  public static TestTable compositeKey(String schema, String name) {
    return new TestTable(
        "dbserver1",
        schema,
        name,
        List.of(
            new Column("tenant", ColumnType.INT32),
            new Column("id", ColumnType.INT64),
            new Column("name", ColumnType.STRING),
            new Column("amount", ColumnType.DECIMAL_12_2),
            new Column("seen", ColumnType.MICRO_TIMESTAMP)),
        List.of("tenant", "id"));
  }

  /** A table keyed by a random UUID (PostgreSQL's {@code gen_random_uuid()}). */
  public static TestTable uuidKeyed(String schema, String name) {
    return new TestTable(
        "dbserver1",
        schema,
        name,
        List.of(
            new Column("id", ColumnType.UUID_TYPE),
            new Column("name", ColumnType.STRING),
            new Column("qty", ColumnType.INT32),
            new Column("tag", ColumnType.UUID_TYPE)),
        List.of("id"));
  }

  /** A table of documents: a bigint key, a small int column and a text of about 1 kB. */
  public static TestTable documents(String schema, String name) {
    return new TestTable(
        "dbserver1",
        schema,
        name,
        List.of(
            new Column("id", ColumnType.INT64),
            new Column("small", ColumnType.INT32),
            new Column("body", ColumnType.LONG_TEXT)),
        List.of("id"));
  }

  /** A table keyed by a text column {@code code}, with a bigint {@code n}. */
  public static TestTable textKeyed(String schema, String name) {
    return new TestTable(
        "dbserver1",
        schema,
        name,
        List.of(new Column("code", ColumnType.STRING), new Column("n", ColumnType.INT64)),
        List.of("code"));
  }

  /** A table whose JSON needs no schema to read: bigint, text, double, boolean. */
  public static TestTable plain(String schema, String name) {
    return new TestTable(
        "dbserver1",
        schema,
        name,
        List.of(
            new Column("id", ColumnType.INT64),
            new Column("name", ColumnType.STRING),
            new Column("score", ColumnType.FLOAT64),
            new Column("active", ColumnType.BOOLEAN)),
        List.of("id"));
  }
}
