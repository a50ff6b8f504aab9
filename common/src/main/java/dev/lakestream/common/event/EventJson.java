package dev.lakestream.common.event;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.regex.Pattern;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The versioned JSON form of the events that cross topics. Every event is a JSON object with
 * {@code "type"} and {@code "v"} (its format version); a reader accepts versions up to its own and
 * ignores fields it does not know, so a newer writer may add fields without breaking older readers.
 * A version newer than the reader knows is an error that says so.
 */
public final class EventJson {

  static final ObjectMapper MAPPER = new ObjectMapper()
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
      .setSerializationInclusion(JsonInclude.Include.NON_NULL);

  private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]*");

  private EventJson() {}

  /** {@code value}, or an error naming the missing {@code field} (an event without it cannot be applied). */
  public static <T> T required(String field, T value) {
    if (value == null) {
      throw new IllegalArgumentException("event has no \"" + field + "\"");
    }
    return value;
  }

  /**
   * {@code value} when it names a table ({@code namespace.name}), or an error naming the {@code
   * field}: an event whose table cannot be loaded would fail every attempt to apply it.
   */
  public static String table(String field, String value) {
    required(field, value);
    try {
      TableIdentifier.parse(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "event's \"" + field + "\" is not a table name: " + e.getMessage(), e);
    }
    return value;
  }

  /**
   * {@code value} when it is null or a source position in hex (whole bytes), or an error naming
   * the {@code field}.
   */
  public static String position(String field, String value) {
    if (value != null && (value.length() % 2 != 0 || !HEX.matcher(value).matches())) {
      throw new IllegalArgumentException(
          "event's \"" + field + "\" is not a source position in hex: " + value);
    }
    return value;
  }

  public static byte[] write(String type, int version, Object event) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("type", type);
    node.put("v", version);
    node.setAll((ObjectNode) MAPPER.valueToTree(event));
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static <T> T read(byte[] bytes, String type, int maxVersion, Class<T> cls) {
    try {
      JsonNode node = MAPPER.readTree(bytes);
      String actualType = node.path("type").asText(null);
      if (!type.equals(actualType)) {
        throw new IllegalArgumentException(
            "expected a \"" + type + "\" event but found type " + actualType);
      }
      int version = node.path("v").asInt(-1);
      if (version < 1 || version > maxVersion) {
        throw new IllegalArgumentException(
            "\"" + type + "\" event has format version " + version + "; this reader knows 1.."
                + maxVersion + " (upgrade the reading app before the writing one)");
      }
      ObjectNode fields = ((ObjectNode) node).deepCopy();
      fields.remove("type");
      fields.remove("v");
      return MAPPER.treeToValue(fields, cls);
    } catch (IOException e) {
      throw new IllegalArgumentException("unreadable \"" + type + "\" event: " + e.getMessage(), e);
    }
  }
}
