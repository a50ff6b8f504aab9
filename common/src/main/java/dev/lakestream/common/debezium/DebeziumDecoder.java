package dev.lakestream.common.debezium;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Decodes a Kafka record written by Debezium through Connect's {@code JsonConverter} into a {@link
 * ChangeEvent}. Both converter settings are accepted: {@code schemas.enable=true} (each key and
 * value is {@code {"schema":..., "payload":...}}) and {@code false} (the payload alone). The record
 * key is the primary key; a record without one cannot be applied as an upsert.
 *
 * <p>A tombstone (null value, which Debezium sends after a delete for log compaction) decodes to
 * empty. Anything else that cannot be decoded throws {@link BadChangeException} naming the reason.
 * Thread-safe.
 */
public final class DebeziumDecoder {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int SCHEMA_CACHE_SIZE = 64;

  /** Parsed schemas by their JSON (compared structurally): a topic's records share a few schemas. */
  private final Map<JsonNode, ConnectSchema> schemas =
      Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<JsonNode, ConnectSchema> eldest) {
          return size() > SCHEMA_CACHE_SIZE;
        }
      });

  public Optional<ChangeEvent> decode(byte[] keyBytes, byte[] valueBytes) {
    if (valueBytes == null || valueBytes.length == 0) {
      return Optional.empty();
    }
    JsonNode value = parse(valueBytes, "value");
    if (value.isNull()) {
      return Optional.empty();
    }
    ConnectSchema valueSchema = null;
    JsonNode payload = value;
    if (isEnvelopeWithSchema(value)) {
      valueSchema = parseSchema(value.get("schema"), "value");
      payload = value.get("payload");
    }
    if (payload == null || payload.isNull()) {
      return Optional.empty();
    }
    if (!payload.isObject()) {
      throw new BadChangeException("value is not a Debezium envelope (not a JSON object)");
    }
    JsonNode opNode = payload.get("op");
    if (opNode == null || opNode.isNull()) {
      throw new BadChangeException(
          "value is not a Debezium envelope: no \"op\" field (is the ExtractNewRecordState SMT"
              + " configured? ingest needs the full envelope)");
    }
    ChangeOp op = ChangeOp.fromCode(opNode.asText());
    if (op == null) {
      throw new BadChangeException(
          "unknown op \"" + opNode.asText() + "\" (expected c, u, d, r or t)");
    }
    if (op == ChangeOp.TRUNCATE) {
      // A TRUNCATE names no row: no key, no before or after image.
      return Optional.of(
          new ChangeEvent(op, JSON.createObjectNode(), null, null, null, source(payload)));
    }

    if (keyBytes == null || keyBytes.length == 0) {
      throw new BadChangeException(
          "record has no key: the source table has no primary key, so its changes cannot be applied as upserts;"
              + " give the table a primary key, or name its key columns in the connector's message.key.columns"
              + " (with REPLICA IDENTITY FULL or USING INDEX on the table so PostgreSQL logs them)");
    }
    JsonNode key = parse(keyBytes, "key");

    ConnectSchema keySchema = null;
    JsonNode keyPayload = key;
    if (isEnvelopeWithSchema(key)) {
      keySchema = parseSchema(key.get("schema"), "key");
      keyPayload = key.get("payload");
    }
    if (keyPayload == null || !keyPayload.isObject() || keyPayload.isEmpty()) {
      throw new BadChangeException(
          "record key is not a JSON object of primary-key columns: " + abbreviate(keyPayload));
    }

    ConnectSchema rowSchema = null;
    if (valueSchema != null) {
      ConnectSchema.Field afterField = valueSchema.isStruct() ? valueSchema.field("after") : null;
      if (afterField == null || !afterField.schema().isStruct()) {
        throw new BadChangeException("value schema has no struct field \"after\"");
      }
      rowSchema = afterField.schema();
    }

    ObjectNode after = null;
    if (op.leavesRow()) {
      JsonNode afterNode = payload.get("after");
      if (afterNode == null || !afterNode.isObject()) {
        throw new BadChangeException("op \"" + op.code() + "\" without an \"after\" row");
      }
      after = (ObjectNode) afterNode;
      for (var it = keyPayload.fieldNames(); it.hasNext(); ) {
        String column = it.next();
        if (!after.has(column)) {
          throw new BadChangeException("\"after\" row lacks primary-key column \"" + column + "\"");
        }
      }
    }
    return Optional.of(
        new ChangeEvent(op, (ObjectNode) keyPayload, keySchema, after, rowSchema, source(payload)));
  }

  private static SourcePosition source(JsonNode payload) {
    JsonNode source = payload.path("source");
    long tsMs = source.path("ts_ms").asLong(payload.path("ts_ms").asLong(-1));
    Long lsn = source.hasNonNull("lsn") ? source.get("lsn").asLong() : null;
    String file = source.hasNonNull("file") ? source.get("file").asText() : null;
    long pos = source.path("pos").asLong(-1);
    long row = source.path("row").asLong(0);
    String snapshot = source.path("snapshot").asText("false");
    boolean inSnapshot = !snapshot.isEmpty() && !"false".equals(snapshot);
    return new SourcePosition(tsMs, lsn, commitLsn(source), file, pos, row, inSnapshot);
  }

  /**
   * PostgreSQL's {@code source.sequence}: a JSON array of two LSNs as strings, the last commit
   * before the change and the change's own. Null when absent or unreadable, and when the first
   * element is null: the connector has seen no commit since it started (it just restarted).
   */
  private static Long commitLsn(JsonNode source) {
    JsonNode sequence = source.get("sequence");
    if (sequence == null || !sequence.isTextual()) {
      return null;
    }
    try {
      JsonNode parsed = JSON.readTree(sequence.asText());
      if (!parsed.isArray() || parsed.size() != 2) {
        return null;
      }
      JsonNode commit = parsed.get(0);
      return commit.isNull() ? null : Long.parseLong(commit.asText());
    } catch (IOException | NumberFormatException e) {
      return null;
    }
  }

  private static boolean isEnvelopeWithSchema(JsonNode node) {
    return node.isObject() && node.size() == 2 && node.has("schema") && node.has("payload");
  }

  private ConnectSchema parseSchema(JsonNode schema, String what) {
    ConnectSchema cached = schemas.get(schema);
    if (cached != null) {
      return cached;
    }
    try {
      ConnectSchema parsed = ConnectSchema.parse(schema);
      schemas.put(schema, parsed);
      return parsed;
    } catch (IllegalArgumentException e) {
      throw new BadChangeException("malformed " + what + " schema: " + e.getMessage(), e);
    }
  }

  private static JsonNode parse(byte[] bytes, String what) {
    try {
      return JSON.readTree(bytes);
    } catch (JsonProcessingException e) {
      throw new BadChangeException(
          "malformed JSON in record " + what + ": " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new BadChangeException("unreadable record " + what + ": " + e.getMessage(), e);
    }
  }

  private static String abbreviate(JsonNode node) {
    String text = String.valueOf(node);
    return text.length() > 200 ? text.substring(0, 200) + "..." : text;
  }
}
