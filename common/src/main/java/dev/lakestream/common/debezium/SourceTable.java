package dev.lakestream.common.debezium;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.Optional;

/**
 * The table a Debezium change event says it comes from, in its envelope's {@code source} block:
 * {@code schema} and {@code table} from PostgreSQL, {@code db} and {@code table} from MySQL and
 * MariaDB (whose databases are its schemas).
 *
 * @param schema the schema, or for MySQL the database
 * @param table the table
 */
public record SourceTable(String schema, String table) {

  /**
   * The source table a record's value names, read from its JSON ({@code schemas.enable} either
   * way); empty when it names none (a heartbeat, a schema change event) or is not JSON. Reads the
   * whole value: for a topic's first record, not for every change.
   */
  public static Optional<SourceTable> of(byte[] value) {
    if (value == null) {
      return Optional.empty();
    }
    JsonNode whole;
    try {
      whole = RecordJson.JSON.readTree(value);
    } catch (IOException e) {
      return Optional.empty();
    }
    if (whole == null || !whole.isObject()) {
      return Optional.empty();
    }
    JsonNode payload = whole.has("schema") && whole.has("payload") ? whole.get("payload") : whole;
    return ofSourceBlock(payload.path("source"));
  }

  /** The source table an envelope's {@code source} block names; empty when it names none. */
  public static Optional<SourceTable> ofSourceBlock(JsonNode source) {
    JsonNode schema = source.hasNonNull("schema") ? source.get("schema") : source.path("db");
    JsonNode table = source.path("table");
    if (!schema.isTextual()
        || !table.isTextual()
        || schema.textValue().isEmpty()
        || table.textValue().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new SourceTable(schema.textValue(), table.textValue()));
  }
}
