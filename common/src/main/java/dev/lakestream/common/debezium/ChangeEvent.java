package dev.lakestream.common.debezium;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.Iterator;
import java.util.Map;

/**
 * One row change, decoded from a Debezium envelope and its Kafka record key. The only type the rest
 * of the pipeline sees of Debezium's JSON.
 *
 * @param op what happened to the row
 * @param key the primary-key columns and their values (from the record key)
 * @param keySchema the key's Connect schema, or null when the converter embeds no schemas
 * @param afterImage the row after the change, its columns as read (made a tree only when one is
 *     asked for, {@link #after()}); null for a delete
 * @param rowSchema the Connect schema of the row (the envelope's {@code after} field), or null when
 *     the converter embeds no schemas
 * @param source where the change happened in the source database
 * @param table the source table its {@code source} block names, or null when it names none
 * @param keyJson {@code key} as compact JSON text, made once: the buffer and the source fence key
 *     their state by it
 */
public record ChangeEvent(
    ChangeOp op,
    ObjectNode key,
    ConnectSchema keySchema,
    RowImage afterImage,
    ConnectSchema rowSchema,
    SourcePosition source,
    SourceTable table,
    String keyJson) {

  public ChangeEvent(
      ChangeOp op,
      ObjectNode key,
      ConnectSchema keySchema,
      RowImage afterImage,
      ConnectSchema rowSchema,
      SourcePosition source,
      SourceTable table) {
    this(op, key, keySchema, afterImage, rowSchema, source, table, keyJson(key));
  }

  /** The row after the change as a tree (built from its columns the first time); null for a delete. */
  public ObjectNode after() {
    return afterImage == null ? null : afterImage.tree();
  }

  /**
   * {@code key.toString()}, the text the buffer's and the fence's state is keyed by, written
   * directly when every column is an int, a long or a string (most keys): Jackson's {@code
   * toString} makes a writer and a generator for each key (1.5% of ingest's stream threads). The
   * same characters: strings escaped as Jackson's generator escapes them by default. Any other
   * value takes {@code toString}.
   */
  public static String keyJson(ObjectNode key) {
    StringBuilder out = new StringBuilder(32).append('{');
    JsonStringEncoder quote = JsonStringEncoder.getInstance();
    boolean first = true;
    for (Iterator<Map.Entry<String, JsonNode>> it = key.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> column = it.next();
      if (!first) {
        out.append(',');
      }
      first = false;
      out.append('"');
      quote.quoteAsString(column.getKey(), out);
      out.append("\":");
      JsonNode value = column.getValue();
      if (value instanceof TextNode) {
        out.append('"');
        quote.quoteAsString(value.textValue(), out);
        out.append('"');
      } else if (value instanceof LongNode || value instanceof IntNode) {
        out.append(value.longValue());
      } else {
        return key.toString();
      }
    }
    return out.append('}').toString();
  }

  public boolean hasSchemas() {
    return rowSchema != null;
  }
}
