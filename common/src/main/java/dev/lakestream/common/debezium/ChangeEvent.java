package dev.lakestream.common.debezium;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One row change, decoded from a Debezium envelope and its Kafka record key. The only type the rest
 * of the pipeline sees of Debezium's JSON.
 *
 * @param op what happened to the row
 * @param key the primary-key columns and their values (from the record key)
 * @param keySchema the key's Connect schema, or null when the converter embeds no schemas
 * @param after the row after the change; null for a delete
 * @param rowSchema the Connect schema of the row (the envelope's {@code after} field), or null when
 *     the converter embeds no schemas
 * @param source where the change happened in the source database
 * @param keyJson {@code key} as compact JSON text, made once: the buffer and the source fence key
 *     their state by it
 */
public record ChangeEvent(
    ChangeOp op,
    ObjectNode key,
    ConnectSchema keySchema,
    ObjectNode after,
    ConnectSchema rowSchema,
    SourcePosition source,
    String keyJson) {

  public ChangeEvent(
      ChangeOp op,
      ObjectNode key,
      ConnectSchema keySchema,
      ObjectNode after,
      ConnectSchema rowSchema,
      SourcePosition source) {
    this(op, key, keySchema, after, rowSchema, source, key.toString());
  }

  public boolean hasSchemas() {
    return rowSchema != null;
  }
}
