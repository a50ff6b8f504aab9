package dev.lakestream.testkit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Set;

/**
 * Writes generated changes as Debezium's Postgres connector does through Connect's JSON converter:
 * key and value, with embedded schemas ({@code schemas.enable=true}) or without. The tombstone
 * after a delete has a null value.
 */
public final class DebeziumJson {

  /** Debezium's default {@code unavailable.value.placeholder}. */
  public static final String UNAVAILABLE = "__debezium_unavailable_value";

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private DebeziumJson() {}

  public static byte[] key(Change change, boolean withSchema) {
    if (change.isTruncate()) {
      return null; // Debezium sends a TRUNCATE without a key
    }
    TestTable table = change.table();
    ObjectNode payload = F.objectNode();
    ArrayNode fields = F.arrayNode();
    for (int i = 0; i < table.key().size(); i++) {
      TestTable.Column column = table.column(table.key().get(i));
      payload.set(column.name(), column.type().json(change.key().get(i)));
      fields.add(column.type().schema(column.name(), false));
    }
    if (!withSchema) {
      return bytes(payload);
    }
    ObjectNode schema = F.objectNode();
    schema.put("type", "struct");
    schema.set("fields", fields);
    schema.put("optional", false);
    schema.put("name", table.topic() + ".Key");
    return bytes(envelope(schema, payload));
  }

  public static byte[] value(Change change, boolean withSchema) {
    return value(change, withSchema, Set.of());
  }

  /**
   * The value as Debezium's Postgres connector writes an update of a table with {@code REPLICA
   * IDENTITY DEFAULT} whose {@code toasted} columns are stored out of line: an update that leaves
   * such a value unchanged carries {@link #UNAVAILABLE} in its place (the UTF-8 bytes of it for a
   * bytes column), and no before-image.
   */
  public static byte[] value(Change change, boolean withSchema, Set<String> toasted) {
    if (change.isTombstone()) {
      return null;
    }
    TestTable table = change.table();
    ObjectNode payload = F.objectNode();
    payload.set("before", row(table, change.before()));
    payload.set("after", row(table, change.after()));
    if (change.op() == 'u' && !toasted.isEmpty()) {
      payload.putNull("before");
      ObjectNode after = (ObjectNode) payload.get("after");
      for (String column : toasted) {
        Object value = change.after().get(column);
        if (value != null && value.equals(change.before().get(column))) {
          after.put(
              column,
              table.column(column).type() == ColumnType.BYTES
                  ? Base64.getEncoder().encodeToString(UNAVAILABLE.getBytes(StandardCharsets.UTF_8))
                  : UNAVAILABLE);
        }
      }
    }
    ObjectNode source = payload.putObject("source");
    source.put("version", "3.6.1.Final");
    source.put("connector", "postgresql");
    source.put("name", table.serverName());
    source.put("ts_ms", change.sourceTsMs());
    source.put("snapshot", change.op() == 'r' ? "true" : "false");
    source.put("db", "postgres");
    source.put("schema", table.schema());
    source.put("table", table.name());
    source.put("lsn", change.lsn());
    // Debezium's [last commit LSN, LSN]; here every change is its own transaction.
    source.put("sequence", "[\"" + change.lsn() + "\",\"" + change.lsn() + "\"]");
    payload.put("op", change.isTruncate() ? "t" : String.valueOf(change.op()));
    payload.put("ts_ms", change.sourceTsMs() + 3);
    if (!withSchema) {
      return bytes(payload);
    }
    ObjectNode schema = F.objectNode();
    schema.put("type", "struct");
    ArrayNode fields = schema.putArray("fields");
    fields.add(rowSchema(table, "before"));
    fields.add(rowSchema(table, "after"));
    ObjectNode sourceSchema = fields.addObject();
    sourceSchema.put("type", "struct");
    ArrayNode sourceFields = sourceSchema.putArray("fields");
    sourceFields.add(simple("string", "version", false));
    sourceFields.add(simple("string", "connector", false));
    sourceFields.add(simple("string", "name", false));
    sourceFields.add(simple("int64", "ts_ms", false));
    sourceFields.add(simple("string", "snapshot", true));
    sourceFields.add(simple("string", "db", false));
    sourceFields.add(simple("string", "schema", false));
    sourceFields.add(simple("string", "table", false));
    sourceFields.add(simple("string", "sequence", true));
    sourceFields.add(simple("int64", "lsn", true));
    sourceSchema.put("optional", false);
    sourceSchema.put("name", "io.debezium.connector.postgresql.Source");
    sourceSchema.put("field", "source");
    fields.add(simple("string", "op", false));
    fields.add(simple("int64", "ts_ms", true));
    schema.put("optional", false);
    schema.put("name", table.topic() + ".Envelope");
    schema.put("version", 2);
    return bytes(envelope(schema, payload));
  }

  private static ObjectNode rowSchema(TestTable table, String field) {
    ObjectNode s = F.objectNode();
    s.put("type", "struct");
    ArrayNode fields = s.putArray("fields");
    for (TestTable.Column column : table.columns()) {
      fields.add(column.type().schema(column.name(), !table.key().contains(column.name())));
    }
    s.put("optional", true);
    s.put("name", table.topic() + ".Value");
    s.put("field", field);
    return s;
  }

  private static ObjectNode row(TestTable table, Map<String, Object> values) {
    if (values == null) {
      return null;
    }
    ObjectNode row = F.objectNode();
    for (TestTable.Column column : table.columns()) {
      Object v = values.get(column.name());
      row.set(column.name(), v == null ? F.nullNode() : column.type().json(v));
    }
    return row;
  }

  private static ObjectNode simple(String type, String field, boolean optional) {
    ObjectNode s = F.objectNode();
    s.put("type", type);
    s.put("optional", optional);
    s.put("field", field);
    return s;
  }

  /**
   * {@code value} (with its schema) as the connector writes a change of the first transaction it
   * streams after a restart: it has seen no commit yet, so {@code source.sequence} has no last
   * commit LSN ({@code [null, "lsn"]}).
   */
  public static byte[] withoutCommitLsn(byte[] value) {
    try {
      ObjectNode envelope = (ObjectNode) MAPPER.readTree(value);
      ObjectNode source = (ObjectNode) envelope.get("payload").get("source");
      source.put("sequence", "[null,\"" + source.get("lsn").asLong() + "\"]");
      return bytes(envelope);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static ObjectNode envelope(ObjectNode schema, ObjectNode payload) {
    ObjectNode e = F.objectNode();
    e.set("schema", schema);
    e.set("payload", payload);
    return e;
  }

  private static byte[] bytes(ObjectNode node) {
    try {
      return MAPPER.writeValueAsString(node).getBytes(StandardCharsets.UTF_8);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
