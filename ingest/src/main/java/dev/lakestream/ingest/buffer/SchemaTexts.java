package dev.lakestream.ingest.buffer;

import dev.lakestream.common.Sha256;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ConnectSchema;
import dev.lakestream.common.debezium.DebeziumDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps the Connect schema text out of the change buffer's entries. Every record of a table
 * repeats the same schema (as JsonConverter writes {@code {"schema":S,"payload":P}}), most of its
 * bytes; the buffer would hold it once per change. An entry holds instead a reference to the text,
 * which is kept once in its own changelogged store ({@value #STORE}) and spliced back when the
 * entry is read: the bytes read are the bytes the record had. An entry to be decoded is not put
 * back together: its payloads are read by the text's schema ({@link #decode}).
 *
 * <p>A compacted entry starts with a zero byte, then the text's 16-byte id (the start of its
 * SHA-256), then the record's bytes from {@code ,"payload":} on. Records of any other shape are kept
 * as they are, except one whose first byte is 0 or 1 (not JSON as Kafka Connect writes it, but a
 * record's bytes are whatever its producer sent): it is kept behind a byte 1, so that no record is
 * ever read back as something else. Entries written before this format start with neither.
 *
 * <p>The format is this version's: an older ingest reading these entries fails on them, so all
 * instances of an application are upgraded together (README, "Upgrading").
 */
final class SchemaTexts {

  static final String STORE = "change-buffer-schemas";

  private static final byte MARKER = 0;
  private static final byte ESCAPED = 1;
  private static final int ID_LENGTH = 16;
  private static final int RECENT = 8;
  private static final byte[] SCHEMA_FIELD = "{\"schema\":".getBytes(StandardCharsets.UTF_8);
  private static final byte[] PAYLOAD_FIELD = ",\"payload\":".getBytes(StandardCharsets.UTF_8);
  private static final HexFormat HEX = HexFormat.of();

  private record Known(byte[] id, byte[] text) {}

  private final KeyValueStore<String, byte[]> store;
  private final Map<String, byte[]> texts = new HashMap<>();
  /** Texts compared byte for byte before one is searched for (the tables a task is busy with). */
  private final Deque<Known> recent = new ArrayDeque<>();
  /** The schemas of the texts above (the same arrays), parsed: held entries are decoded by them. */
  private final Map<byte[], ConnectSchema> schemas = new IdentityHashMap<>();
  /** How many held entries {@link #decode} put back together to decode them whole. */
  private long wholeDecodes;

  SchemaTexts(KeyValueStore<String, byte[]> store) {
    this.store = store;
  }

  /** The entry to store for {@code change}: its key and value without their schema texts. */
  BufferedChange compact(BufferedChange change) {
    return withKeyAndValue(change, this::compact);
  }

  /** The change a stored entry holds, its schema texts spliced back; null for null. */
  BufferedChange expand(BufferedChange stored) {
    return stored == null ? null : withKeyAndValue(stored, this::expand);
  }

  private static BufferedChange withKeyAndValue(BufferedChange c, UnaryOperator<byte[]> bytes) {
    byte[] key = bytes.apply(c.key());
    byte[] value = bytes.apply(c.value());
    return key == c.key() && value == c.value()
        ? c
        : new BufferedChange(c.offset(), c.sourceTsMs(), key, value, c.previousKey());
  }

  byte[] compact(byte[] record) {
    if (record.length > 0 && (record[0] == MARKER || record[0] == ESCAPED)) {
      byte[] escaped = new byte[record.length + 1];
      escaped[0] = ESCAPED;
      System.arraycopy(record, 0, escaped, 1, record.length);
      return escaped;
    }
    if (!startsWith(record, 0, SCHEMA_FIELD)) {
      return record;
    }
    for (Known known : recent) {
      int end = SCHEMA_FIELD.length + known.text().length;
      if (end + PAYLOAD_FIELD.length <= record.length
          && Arrays.equals(record, SCHEMA_FIELD.length, end, known.text(), 0, known.text().length)
          && startsWith(record, end, PAYLOAD_FIELD)) {
        return pack(known.id(), record, end);
      }
    }
    int end = objectEnd(record, SCHEMA_FIELD.length);
    if (end < 0 || !startsWith(record, end, PAYLOAD_FIELD)) {
      return record;
    }
    Known known = remember(Arrays.copyOfRange(record, SCHEMA_FIELD.length, end));
    return pack(known.id(), record, end);
  }

  /**
   * The change a held entry holds, decoded: when its key's and value's schema texts were left out
   * (nearly always), only their payloads are read, by the schemas of the texts, and the record is not
   * put back together (at a flush that was a copy of every record's bytes and a comparison of its
   * schema text). The same change {@code decoder} reads from the record's bytes.
   */
  ChangeEvent decode(BufferedChange held, DebeziumDecoder decoder) {
    DebeziumDecoder.Framed key = framed(held.key(), decoder, "key");
    DebeziumDecoder.Framed value = key == null ? null : framed(held.value(), decoder, "value");
    ChangeEvent event = value == null ? null : decoder.decode(key, value);
    if (event != null) {
      return event;
    }
    wholeDecodes++;
    BufferedChange change = expand(held);
    return decoder.decode(change.key(), change.value()).orElseThrow();
  }

  long wholeDecodes() {
    return wholeDecodes;
  }

  /** A compacted record as the decoder reads it without its schema text, or null if not one. */
  DebeziumDecoder.Framed framed(byte[] stored, DebeziumDecoder decoder, String what) {
    if (stored.length == 0 || stored[0] != MARKER) {
      return null;
    }
    byte[] text = textOf(stored);
    ConnectSchema schema = schemas.get(text);
    if (schema == null) {
      try {
        schema = decoder.schemaOfText(text, what);
      } catch (BadChangeException e) {
        return null; // decoded whole, the record gets the error its bytes cause, if any
      }
      schemas.put(text, schema);
    }
    return new DebeziumDecoder.Framed(schema, stored, 1 + ID_LENGTH + PAYLOAD_FIELD.length);
  }

  byte[] expand(byte[] stored) {
    if (stored.length > 0 && stored[0] == ESCAPED) {
      return Arrays.copyOfRange(stored, 1, stored.length);
    }
    if (stored.length == 0 || stored[0] != MARKER) {
      return stored;
    }
    byte[] text = textOf(stored);
    int rest = stored.length - 1 - ID_LENGTH;
    byte[] out = new byte[SCHEMA_FIELD.length + text.length + rest];
    System.arraycopy(SCHEMA_FIELD, 0, out, 0, SCHEMA_FIELD.length);
    System.arraycopy(text, 0, out, SCHEMA_FIELD.length, text.length);
    System.arraycopy(stored, 1 + ID_LENGTH, out, SCHEMA_FIELD.length + text.length, rest);
    return out;
  }

  /** The schema text a compacted entry refers to. */
  private byte[] textOf(byte[] stored) {
    byte[] text = recentText(stored);
    return text != null ? text : knownText(HEX.formatHex(stored, 1, 1 + ID_LENGTH));
  }

  /** The text with this id, from memory or else from the store. */
  private byte[] knownText(String id) {
    byte[] text = texts.get(id);
    if (text == null) {
      text = store.get(id);
      if (text == null) {
        throw new IllegalStateException("a change-buffer entry refers to schema text " + id
            + ", which store " + STORE + " does not hold");
      }
      texts.put(id, text);
    }
    return text;
  }

  /**
   * The text of a compacted entry's id when it is among the recent ones (the tables a task is busy
   * with: nearly always), compared byte for byte, without building the id's hex text.
   */
  private byte[] recentText(byte[] stored) {
    for (Known known : recent) {
      if (Arrays.equals(stored, 1, 1 + ID_LENGTH, known.id(), 0, ID_LENGTH)) {
        return known.text();
      }
    }
    return null;
  }

  private Known remember(byte[] text) {
    byte[] id = Arrays.copyOf(Sha256.of(text), ID_LENGTH);
    String hex = HEX.formatHex(id);
    byte[] kept = texts.get(hex);
    if (kept == null) {
      if (store.get(hex) == null) {
        store.put(hex, text);
      }
      texts.put(hex, text);
      kept = text;
    }
    // One array per text, whichever way it is found: the parsed schemas are kept by array.
    Known known = new Known(id, kept);
    recent.addFirst(known);
    if (recent.size() > RECENT) {
      recent.removeLast();
    }
    return known;
  }

  private static byte[] pack(byte[] id, byte[] record, int end) {
    byte[] out = new byte[1 + ID_LENGTH + record.length - end];
    out[0] = MARKER;
    System.arraycopy(id, 0, out, 1, ID_LENGTH);
    System.arraycopy(record, end, out, 1 + ID_LENGTH, record.length - end);
    return out;
  }

  /**
   * Where the JSON object starting at {@code from} ends (the index after its closing brace), or -1
   * when no object starts there or it does not end.
   */
  static int objectEnd(byte[] bytes, int from) {
    if (from >= bytes.length || bytes[from] != '{') {
      return -1;
    }
    int depth = 0;
    boolean inString = false;
    for (int i = from; i < bytes.length; i++) {
      byte b = bytes[i];
      if (inString) {
        if (b == '\\') {
          i++;
        } else if (b == '"') {
          inString = false;
        }
      } else if (b == '"') {
        inString = true;
      } else if (b == '{' || b == '[') {
        depth++;
      } else if (b == '}' || b == ']') {
        depth--;
        if (depth == 0) {
          return i + 1;
        }
      }
    }
    return -1;
  }

  private static boolean startsWith(byte[] bytes, int at, byte[] prefix) {
    return bytes.length >= at + prefix.length
        && Arrays.equals(bytes, at, at + prefix.length, prefix, 0, prefix.length);
  }
}
