package dev.lakestream.ingest.toast;

import com.fasterxml.jackson.databind.JsonNode;
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

/**
 * Finds the columns of an after-image that hold Debezium's unavailable-value placeholder: a value
 * PostgreSQL did not send because it was stored out of line (TOAST) and the update left it
 * unchanged ({@code REPLICA IDENTITY DEFAULT}). The row's real value is its previous one.
 *
 * <p>The placeholder takes the form of its column: the text itself for text, json, xml and the
 * like; its UTF-8 bytes for {@code bytea} (base64 in Connect's JSON, or hex or base64 text with
 * {@code binary.handling.mode=hex|base64}); a one-element array of it for arrays. Only top-level
 * columns are looked at (TOAST works per column).
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
      if (value.isArray() || (value.isTextual() && value.textValue().length() >= shortest)) {
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
      return value.size() == 1
          && isPlaceholder(value.get(0), schema == null ? null : schema.items());
    }
    if (!value.isTextual()) {
      return false;
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
