package dev.lakestream.ingest.toast;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ChangeOp;
import dev.lakestream.common.debezium.ConnectSchema;
import dev.lakestream.common.debezium.RowImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Finds the columns of an after-image that hold Debezium's unavailable-value placeholder: a value
 * PostgreSQL did not send because it was stored out of line (TOAST) and the update left it
 * unchanged ({@code REPLICA IDENTITY DEFAULT}). The row's real value is its previous one.
 *
 * <p>The placeholder takes the form of its column, as Debezium's PostgreSQL connector makes it: the
 * text itself for text, json, xml and the like; its UTF-8 bytes for {@code bytea} (base64 in
 * Connect's JSON, or hex or base64 text with {@code binary.handling.mode=hex|base64}); a one-element
 * array of it for arrays of text, json and bytea; the list of its bytes as numbers for {@code
 * int[]}, {@code bigint[]} and {@code date[]}; a one-element array of the name-based UUID of its
 * bytes for {@code uuid[]}; the map of it to itself for {@code hstore} (or that map's JSON text,
 * {@code hstore.handling.mode=json}, the default). Other arrays ({@code numeric[]}, {@code
 * float8[]}, {@code boolean[]}, ...) have no placeholder: Debezium sends null, which cannot be told
 * from a real null (the source check warns; {@code REPLICA IDENTITY FULL} avoids it). Only
 * top-level columns are looked at (TOAST works per column).
 *
 * <p>Only updates carry placeholders, and the create that ends a primary-key update: an insert or
 * a snapshot read sends every value. The caller decides which changes to look at.
 */
public final class UnavailableValues {

  /** Debezium's default {@code unavailable.value.placeholder}. */
  public static final String DEBEZIUM_DEFAULT = "__debezium_unavailable_value";

  private final String text;
  private final byte[] bytes;
  private final Set<String> encoded;
  /** The placeholder of a {@code uuid[]}: the name-based UUID of its bytes. */
  private final String uuid;
  /** The placeholder of an {@code hstore} as JSON text: the map of it to itself. */
  private final String hstoreJson;
  /**
   * The fewest characters a JSON string holding the placeholder can have: its text, or the fewest
   * base64 characters of its bytes (hex takes more).
   */
  private final int shortest;

  public UnavailableValues(String placeholder) {
    this.text = placeholder;
    this.bytes = placeholder.getBytes(StandardCharsets.UTF_8);
    this.encoded = Set.of(
        placeholder, Base64.getEncoder().encodeToString(bytes), HexFormat.of().formatHex(bytes));
    this.shortest = Math.min(placeholder.length(), (bytes.length * 4 + 2) / 3);
    this.uuid = UUID.nameUUIDFromBytes(bytes).toString();
    ObjectNode map = JsonNodeFactory.instance.objectNode();
    map.put(placeholder, placeholder);
    this.hstoreJson = map.toString();
  }

  public String placeholder() {
    return text;
  }

  /**
   * The columns of {@code event}'s row holding the placeholder, looked for only where Debezium can
   * put one: an update, or the create that ends a primary-key update ({@code endsKeyUpdate}). A
   * delete has no row to lack values, whatever its headers say.
   */
  public Set<String> columns(ChangeEvent event, boolean endsKeyUpdate) {
    return event.op().leavesRow() && (event.op() == ChangeOp.UPDATE || endsKeyUpdate)
        ? columns(event.afterImage(), event.rowSchema())
        : Set.of();
  }

  /**
   * The top-level columns of {@code after} holding the placeholder, in row order: looked for in its
   * columns while it has no tree, and only when one holds it from its tree, which then says exactly
   * (most rows hold none, and need no tree).
   */
  public Set<String> columns(RowImage after, ConnectSchema rowSchema) {
    if (after.flat() && !anyHolds(after, rowSchema)) {
      return Set.of();
    }
    return columns(after.tree(), rowSchema);
  }

  /**
   * Whether a column of the image (any occurrence of a name) holds the placeholder: only a string
   * as long as one can be, or an array, can.
   */
  private boolean anyHolds(RowImage after, ConnectSchema rowSchema) {
    for (int i = 0; i < after.size(); i++) {
      JsonNode value = after.value(i);
      if (value.isArray()
          || value.isObject()
          || (value.isTextual() && value.textValue().length() >= shortest)) {
        ConnectSchema.Field field = rowSchema == null ? null : rowSchema.field(after.name(i));
        if (isPlaceholder(value, field == null ? null : field.schema())) {
          return true;
        }
      }
    }
    return false;
  }

  /** The top-level columns of {@code after} holding the placeholder, in row order. */
  public Set<String> columns(ObjectNode after, ConnectSchema rowSchema) {
    Set<String> out = new LinkedHashSet<>();
    for (var it = after.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> column = it.next();
      ConnectSchema.Field field = rowSchema == null ? null : rowSchema.field(column.getKey());
      if (isPlaceholder(column.getValue(), field == null ? null : field.schema())) {
        out.add(column.getKey());
      }
    }
    return out;
  }

  private boolean isPlaceholder(JsonNode value, ConnectSchema schema) {
    if (value == null || value.isNull()) {
      return false;
    }
    if (value.isArray()) {
      if (value.size() == 1) {
        JsonNode element = value.get(0);
        return isPlaceholder(element, schema == null ? null : schema.items())
            || (element.isTextual() && uuid.equals(element.textValue()));
      }
      return isBytesAsNumbers(value);
    }
    if (value.isObject()) {
      return value.size() == 1 && text.equals(value.path(text).textValue());
    }
    if (!value.isTextual()) {
      return false;
    }
    if (hstoreJson.equals(value.textValue())) {
      return true;
    }
    if (schema != null && "bytes".equals(schema.type())) {
      try {
        return Arrays.equals(value.binaryValue(), bytes);
      } catch (IOException e) {
        return false;
      }
    }
    return encoded.contains(value.textValue());
  }

  /** Whether an array holds the placeholder's bytes as numbers, one each, in order. */
  private boolean isBytesAsNumbers(JsonNode array) {
    if (array.size() != bytes.length) {
      return false;
    }
    for (int i = 0; i < bytes.length; i++) {
      JsonNode element = array.get(i);
      if (!element.isIntegralNumber() || element.longValue() != bytes[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * A copy of {@code after} whose {@code columns} take their values from {@code previous} where it
   * holds a real one; columns {@code previous} cannot fill keep the placeholder.
   */
  public ObjectNode fill(
      ObjectNode after,
      ConnectSchema rowSchema,
      ObjectNode previous,
      ConnectSchema previousSchema,
      Set<String> columns) {
    ObjectNode filled = after.deepCopy();
    Set<String> stillMissing = columns(previous, previousSchema);
    for (String column : columns) {
      if (previous.has(column) && !stillMissing.contains(column)) {
        filled.set(column, previous.get(column));
      }
    }
    return filled;
  }
}
