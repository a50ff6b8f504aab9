package dev.lakestream.common.debezium;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

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

  private static final ObjectMapper JSON = RecordJson.JSON;

  private static final int SCHEMA_CACHE_SIZE = 64;
  /** Schema texts compared byte for byte before a record is parsed (tables a task is busy with). */
  private static final int RECENT_SCHEMAS = 8;

  private static final byte[] SCHEMA_FIELD = "{\"schema\":".getBytes(StandardCharsets.UTF_8);
  private static final byte[] PAYLOAD_FIELD = ",\"payload\":".getBytes(StandardCharsets.UTF_8);

  private volatile List<KnownSchema> recentSchemas = List.of();

  /** Parsed schemas by their JSON (compared structurally): a topic's records share a few schemas. */
  private final Map<JsonNode, ConnectSchema> schemas =
      Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<JsonNode, ConnectSchema> eldest) {
          return size() > SCHEMA_CACHE_SIZE;
        }
      });

  /** Schemas by their JSON text, as records carry them (see {@link #envelope}). */
  private final Map<ByteBuffer, ConnectSchema> schemasByText =
      Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ByteBuffer, ConnectSchema> eldest) {
          return size() > SCHEMA_CACHE_SIZE;
        }
      });

  public Optional<ChangeEvent> decode(byte[] keyBytes, byte[] valueBytes) {
    if (valueBytes == null || valueBytes.length == 0) {
      return Optional.empty();
    }
    Envelope value = envelope(valueBytes, "value");
    if (value == null) {
      JsonNode whole = parse(valueBytes, "value");
      if (whole.isNull()) {
        return Optional.empty();
      }
      value = isEnvelopeWithSchema(whole)
          ? new Envelope(parseSchema(whole.get("schema"), "value"), whole.get("payload"), null)
          : new Envelope(null, whole, null);
    }
    if (value.payload() == null || value.payload().isNull()) {
      return Optional.empty();
    }
    return Optional.of(event(value, keyBytes, null));
  }

  /**
   * A record's key or value as Kafka Connect's JsonConverter writes it, {@code
   * {"schema":S,"payload":P}}, whose schema S is known already (parsed from the same text, {@link
   * #schemaOfText}): its bytes from {@code payloadFrom} on are P and the envelope's closing brace.
   * Whatever comes before is not read.
   */
  public record Framed(ConnectSchema schema, byte[] bytes, int payloadFrom) {}

  /**
   * Decodes a record whose key and value are {@link Framed}: only their payloads are read. The same
   * change as {@link #decode(byte[], byte[])} of the whole record's bytes, or null when a payload is
   * not a JSON object ending the bytes (decode the whole record then: it gives the errors their
   * wording).
   */
  public ChangeEvent decode(Framed key, Framed value) {
    Envelope valueEnvelope = framed(value, "value");
    Envelope keyEnvelope = valueEnvelope == null ? null : framed(key, "key");
    return keyEnvelope == null ? null : event(valueEnvelope, null, keyEnvelope);
  }

  /**
   * The schema whose JSON text (as records carry it in their envelope) is {@code text}, parsed once
   * for all records that carry the same text. {@code what}: "key" or "value", for the error.
   */
  public ConnectSchema schemaOfText(byte[] text, String what) {
    try {
      return schemaAt(text, 0, text.length, what);
    } catch (IOException e) {
      throw new BadChangeException("malformed " + what + " schema: " + e.getMessage(), e);
    }
  }

  private Envelope framed(Framed framed, String what) {
    byte[] bytes = framed.bytes();
    int from = framed.payloadFrom();
    return from < bytes.length ? payloadAt(framed.schema(), bytes, from, what) : null;
  }

  /**
   * The change of a value envelope (its payload not null) and its key: {@code keyEnvelope} when
   * known, else read from {@code keyBytes} (only when the change names a row: a TRUNCATE has no
   * key).
   */
  private ChangeEvent event(Envelope value, byte[] keyBytes, Envelope keyEnvelope) {
    ConnectSchema valueSchema = value.schema();
    JsonNode payload = value.payload();
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
      return new ChangeEvent(
          op,
          JSON.createObjectNode(),
          null,
          null,
          null,
          source(payload),
          SourceTable.ofSourceBlock(payload.path("source")).orElse(null));
    }
    Envelope key = keyEnvelope != null ? keyEnvelope : keyEnvelope(keyBytes);
    ConnectSchema keySchema = key.schema();
    JsonNode keyPayload = key.payload();
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

    RowImage after = null;
    if (op.leavesRow()) {
      after = value.after();
      if (after == null) {
        JsonNode afterNode = payload.get("after");
        if (afterNode == null || !afterNode.isObject()) {
          throw new BadChangeException("op \"" + op.code() + "\" without an \"after\" row");
        }
        after = RowImage.of((ObjectNode) afterNode);
      }
      for (var it = keyPayload.fieldNames(); it.hasNext(); ) {
        String column = it.next();
        if (!after.has(column)) {
          throw new BadChangeException("\"after\" row lacks primary-key column \"" + column + "\"");
        }
      }
      // Connect's JsonConverter writes a row by its schema. A value the schema does not declare
      // has no type: its table may gain the column later, with a type the value does not fit,
      // and a batch that holds the row could then not be written.
      String undeclared = rowSchema == null ? null : after.undeclaredIn(rowSchema);
      if (undeclared != null) {
        throw new BadChangeException("\"after\" row holds column \"" + undeclared
            + "\", which the record's value schema does not declare");
      }
    }
    return new ChangeEvent(
        op,
        (ObjectNode) keyPayload,
        keySchema,
        after,
        rowSchema,
        source(payload),
        SourceTable.ofSourceBlock(payload.path("source")).orElse(null));
  }

  /** The record key's schema (null when it carries none) and payload. */
  private Envelope keyEnvelope(byte[] keyBytes) {
    if (keyBytes == null || keyBytes.length == 0) {
      throw new BadChangeException(
          "record has no key: the source table has no primary key, so its changes cannot be applied as upserts;"
              + " give the table a primary key, or name its key columns in the connector's message.key.columns"
              + " (PostgreSQL logs them with REPLICA IDENTITY FULL or USING INDEX on the table, a MySQL or"
              + " MariaDB binary log with binlog_row_image=FULL)");
    }
    Envelope known = envelope(keyBytes, "key");
    if (known != null) {
      return known;
    }
    JsonNode key = parse(keyBytes, "key");
    return isEnvelopeWithSchema(key)
        ? new Envelope(parseSchema(key.get("schema"), "key"), key.get("payload"), null)
        : new Envelope(null, key, null);
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
    long txId = source.path("txId").asLong(-1);
    return new SourcePosition(tsMs, lsn, commitLsn(source), file, pos, row, inSnapshot, txId);
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
    String text = sequence.asText();
    long[] first = new long[1];
    switch (firstOfTwoLsns(text, first)) {
      case NUMBER:
        return first[0];
      case NULL:
        return null;
      default:
        break; // another form: read it as JSON
    }
    try {
      JsonNode parsed = JSON.readTree(text);
      if (!parsed.isArray() || parsed.size() != 2) {
        return null;
      }
      JsonNode commit = parsed.get(0);
      return commit.isNull() ? null : Long.parseLong(commit.asText());
    } catch (IOException | NumberFormatException e) {
      return null;
    }
  }

  enum Read {
    NUMBER,
    NULL,
    OTHER
  }

  /**
   * Debezium writes every change's sequence as {@code ["<digits>","<digits>"]}, either element
   * possibly {@code null}: read that form directly, not with a JSON parser (one per change was 2%
   * of ingest's stream threads) nor a regular expression (1.5%). Each element is {@code null} or 1
   * to 18 ASCII digits in quotes (a long); anything else, spaces included, is {@code OTHER}.
   */
  static Read firstOfTwoLsns(String text, long[] first) {
    int last = text.length() - 1;
    if (last < 1 || text.charAt(0) != '[' || text.charAt(last) != ']') {
      return Read.OTHER;
    }
    long[] value = new long[1];
    int comma = lsnAt(text, 1, last, value);
    if (comma < 0 || comma >= last || text.charAt(comma) != ',') {
      return Read.OTHER;
    }
    long firstValue = value[0];
    if (lsnAt(text, comma + 1, last, value) != last) {
      return Read.OTHER;
    }
    if (firstValue < 0) {
      return Read.NULL;
    }
    first[0] = firstValue;
    return Read.NUMBER;
  }

  /**
   * Reads {@code null} or a quoted LSN of 1 to 18 digits at {@code at}, ending by {@code limit}:
   * its value into {@code out[0]} (-1 for null); returns where it ends, or -1 when it is neither.
   */
  private static int lsnAt(String text, int at, int limit, long[] out) {
    if (at + 4 <= limit && text.startsWith("null", at)) {
      out[0] = -1;
      return at + 4;
    }
    if (at >= limit || text.charAt(at) != '"') {
      return -1;
    }
    int i = at + 1;
    long lsn = 0;
    while (i < limit && i - at <= 18) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        break;
      }
      lsn = lsn * 10 + (c - '0');
      i++;
    }
    int digits = i - at - 1;
    if (digits < 1 || i >= limit || text.charAt(i) != '"') {
      return -1; // no digits, more than 18, or not closed by a quote
    }
    out[0] = lsn;
    return i + 1;
  }

  /**
   * A JsonConverter record with its schema: the schema, parsed, and the payload as a tree; {@code
   * after}: the payload's {@code after} object as its columns, then not in the tree (null when it
   * is in the tree, or not an object).
   */
  private record Envelope(ConnectSchema schema, JsonNode payload, RowImage after) {}

  /**
   * The payload the parser is at (its first token read). A key's is read whole. Of a value's
   * envelope only what {@link #decode} reads becomes a tree: {@code op}, {@code ts_ms}, and the
   * position fields and table names of {@code source}; {@code after} is read as its columns,
   * without a tree of them ({@link RowImage}); the rest ({@code before}, {@code transaction}, the
   * source's connector name and versions) is skipped, which still checks its syntax. Building the
   * trees of {@code before} and {@code source} was a third of decoding, the tree of {@code after}
   * a third of what remained.
   */
  private static Envelope payload(ConnectSchema schema, JsonParser parser, String what)
      throws IOException {
    if (!"value".equals(what) || parser.currentToken() != JsonToken.START_OBJECT) {
      return new Envelope(schema, JSON.readTree(parser), null);
    }
    ObjectNode node = JSON.createObjectNode();
    RowImage after = null;
    JsonToken token;
    while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
      String name = parser.currentName();
      JsonToken value = parser.nextToken();
      // A field that occurs twice keeps its last value, as a whole tree would.
      if ("after".equals(name)) {
        if (value == JsonToken.START_OBJECT) {
          after = rowImage(parser);
          node.remove(name);
        } else {
          after = null;
          node.set(name, RecordJson.node(parser, value));
        }
      } else if ("source".equals(name) && value == JsonToken.START_OBJECT) {
        node.set(name, sourceFields(parser));
      } else if (PAYLOAD_FIELDS.contains(name)) {
        node.set(name, RecordJson.node(parser, value));
      } else {
        parser.skipChildren();
      }
    }
    if (token != JsonToken.END_OBJECT) {
      throw new IOException("unexpected " + token + " in an object");
    }
    return new Envelope(schema, node, after);
  }

  /**
   * The fields of the envelope's payload that {@link #decode} reads as trees, {@code source} only
   * when it is not an object (an object's is read with {@link #sourceFields}); {@code after} is
   * read as a tree only when it is not an object either.
   */
  private static final Set<String> PAYLOAD_FIELDS = Set.of("op", "ts_ms", "source");

  /** The fields of {@code source} that {@link #source} and {@link SourceTable#ofSourceBlock} read. */
  private static final Set<String> SOURCE_FIELDS = Set.of(
      "ts_ms",
      "lsn",
      "sequence",
      "txId",
      "file",
      "pos",
      "row",
      "snapshot",
      "schema",
      "db",
      "table");

  /**
   * The row image whose object the parser is at (its start read): each top-level column's name and
   * the node a tree would hold for it, in order, without the tree.
   */
  private static RowImage rowImage(JsonParser parser) throws IOException {
    String[] names = new String[16];
    JsonNode[] values = new JsonNode[16];
    int size = 0;
    JsonToken token;
    while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
      if (size == names.length) {
        names = Arrays.copyOf(names, size * 2);
        values = Arrays.copyOf(values, size * 2);
      }
      names[size] = parser.currentName();
      values[size] = RecordJson.node(parser, parser.nextToken());
      size++;
    }
    if (token != JsonToken.END_OBJECT) {
      throw new IOException("unexpected " + token + " in an object");
    }
    return RowImage.ofColumns(names, values, size);
  }

  /**
   * The {@code source} object the parser is at, with only the fields of {@link #SOURCE_FIELDS}; a
   * field that occurs twice keeps its last value, as a whole tree would.
   */
  private static ObjectNode sourceFields(JsonParser parser) throws IOException {
    ObjectNode node = JSON.createObjectNode();
    JsonToken token;
    while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
      String name = parser.currentName();
      JsonToken value = parser.nextToken();
      if (SOURCE_FIELDS.contains(name)) {
        node.set(name, RecordJson.node(parser, value));
      } else {
        parser.skipChildren();
      }
    }
    if (token != JsonToken.END_OBJECT) {
      throw new IOException("unexpected " + token + " in an object");
    }
    return node;
  }

  /**
   * Reads {@code {"schema": {...}, "payload": ...}} without building a tree of the schema: every
   * record of a table repeats the same schema text (1 to 2 kB, most of the record), so it is
   * looked up by its bytes and parsed only the first time they are seen. Null for anything else
   * (no schema, other fields, malformed JSON): the caller then reads the record as a whole tree,
   * which also gives the errors their wording.
   */
  private Envelope envelope(byte[] bytes, String what) {
    Envelope known = knownSchemaEnvelope(bytes, what);
    if (known != null) {
      return known;
    }
    try (JsonParser parser = JSON.getFactory().createParser(bytes)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      long schemaStart = -1;
      long schemaEnd = -1;
      Envelope payload = null;
      int fields = 0;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken value = parser.nextToken();
        fields++;
        if ("schema".equals(name) && value == JsonToken.START_OBJECT && schemaStart < 0) {
          schemaStart = parser.currentTokenLocation().getByteOffset();
          parser.skipChildren();
          schemaEnd = parser.currentTokenLocation().getByteOffset() + 1;
          if (schemaStart < 0 || schemaEnd <= schemaStart || schemaEnd > bytes.length) {
            return null;
          }
        } else if ("payload".equals(name) && payload == null) {
          payload = payload(null, parser, what);
        } else {
          return null;
        }
      }
      if (fields != 2 || schemaStart < 0 || payload == null || parser.nextToken() != null) {
        return null;
      }
      // Only now the schema is parsed: the record is exactly {"schema": ..., "payload": ...}.
      ConnectSchema schema =
          schemaAt(bytes, (int) schemaStart, (int) (schemaEnd - schemaStart), what);
      return new Envelope(schema, payload.payload(), payload.after());
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * The envelope as Kafka Connect's JsonConverter writes it ({@code {"schema":S,"payload":P}}, no
   * spaces) when S is, byte for byte, a schema text seen recently: S is then not read at all, only
   * compared, and P alone is parsed. Null when the record is not of that form.
   */
  private Envelope knownSchemaEnvelope(byte[] bytes, String what) {
    if (!startsWith(bytes, 0, SCHEMA_FIELD)) {
      return null;
    }
    for (KnownSchema known : recentSchemas) {
      int end = SCHEMA_FIELD.length + known.text().length;
      if (end + PAYLOAD_FIELD.length < bytes.length
          && Arrays.equals(bytes, SCHEMA_FIELD.length, end, known.text(), 0, known.text().length)
          && startsWith(bytes, end, PAYLOAD_FIELD)) {
        return payloadAt(known.schema(), bytes, end + PAYLOAD_FIELD.length, what);
      }
    }
    return null;
  }

  /**
   * The envelope whose payload is the JSON object at {@code from} and whose closing brace ends
   * {@code bytes} (white space after it allowed), or null when they are not so.
   */
  private static Envelope payloadAt(ConnectSchema schema, byte[] bytes, int from, String what) {
    if (bytes[from] != '{') {
      return null; // an envelope's payload is an object; anything else takes the slow path
    }
    int last = bytes.length - 1;
    while (last > from && Character.isWhitespace(bytes[last])) {
      last--;
    }
    if (bytes[last] != '}') {
      return null;
    }
    try (JsonParser parser = JSON.getFactory().createParser(bytes, from, last - from)) {
      parser.nextToken();
      Envelope payload = payload(schema, parser, what);
      return payload.payload() == null || parser.nextToken() != null ? null : payload;
    } catch (IOException e) {
      return null;
    }
  }

  private static boolean startsWith(byte[] bytes, int at, byte[] prefix) {
    return bytes.length >= at + prefix.length
        && Arrays.equals(bytes, at, at + prefix.length, prefix, 0, prefix.length);
  }

  /** Remembers a schema text that came first in its record, for {@link #knownSchemaEnvelope}. */
  private void rememberSchemaText(byte[] text, ConnectSchema schema) {
    synchronized (this) {
      List<KnownSchema> next = new ArrayList<>(recentSchemas.size() + 1);
      next.add(new KnownSchema(text, schema));
      for (KnownSchema known : recentSchemas) {
        if (next.size() < RECENT_SCHEMAS && !Arrays.equals(known.text(), text)) {
          next.add(known);
        }
      }
      recentSchemas = List.copyOf(next);
    }
  }

  /** A schema's JSON text as records carry it, and the schema. */
  private record KnownSchema(byte[] text, ConnectSchema schema) {}

  /** The schema whose JSON text is {@code bytes[offset, offset + length)}, parsed once. */
  private ConnectSchema schemaAt(byte[] bytes, int offset, int length, String what)
      throws IOException {
    ConnectSchema cached =
        schemasByText.get(ByteBuffer.wrap(bytes, offset, length).slice());
    if (cached == null) {
      cached = parseSchema(JSON.readTree(bytes, offset, length), what);
      schemasByText.put(
          ByteBuffer.wrap(Arrays.copyOfRange(bytes, offset, offset + length)), cached);
    }
    if (offset == SCHEMA_FIELD.length) {
      rememberSchemaText(Arrays.copyOfRange(bytes, offset, offset + length), cached);
    }
    return cached;
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
