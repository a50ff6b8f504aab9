package dev.lakestream.common.debezium;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Kafka Connect schema as Connect's {@code JsonConverter} embeds it ({@code schemas.enable=true}):
 * a type, an optional logical name (for example {@code io.debezium.time.MicroTimestamp}), its
 * parameters, and the fields, items or key/value schemas of composite types.
 *
 * <p>Immutable. Parsed once per distinct schema; {@link #fingerprint()} identifies equal schemas so
 * callers can cache what they derive from one.
 */
public record ConnectSchema(
    String type,
    String name,
    boolean optional,
    Map<String, String> parameters,
    List<Field> fields,
    ConnectSchema items,
    ConnectSchema keys,
    ConnectSchema values,
    String fingerprint,
    Map<String, Field> fieldsByName) {

  /** One field of a struct schema. */
  public record Field(String name, ConnectSchema schema) {}

  public boolean isStruct() {
    return "struct".equals(type);
  }

  /** The field of that name (the first, should a schema repeat a name), or null. */
  public Field field(String fieldName) {
    return fieldsByName.get(fieldName);
  }

  /** Parses a Connect JSON schema node; throws {@link IllegalArgumentException} when it is not one. */
  public static ConnectSchema parse(JsonNode node) {
    if (node == null || !node.isObject() || !node.hasNonNull("type")) {
      throw new IllegalArgumentException("not a Connect schema (no \"type\"): " + abbreviate(node));
    }
    String type = node.get("type").asText();
    String name = node.hasNonNull("name") ? node.get("name").asText() : null;
    boolean optional = node.path("optional").asBoolean(false);
    Map<String, String> parameters = new LinkedHashMap<>();
    node.path("parameters")
        .fields()
        .forEachRemaining(e -> parameters.put(e.getKey(), e.getValue().asText()));
    List<Field> fields = new ArrayList<>();
    if ("struct".equals(type)) {
      for (JsonNode f : node.path("fields")) {
        if (!f.hasNonNull("field")) {
          throw new IllegalArgumentException(
              "struct field without a \"field\" name: " + abbreviate(f));
        }
        fields.add(new Field(f.get("field").asText(), parse(f)));
      }
    }
    ConnectSchema items = "array".equals(type) ? parse(node.get("items")) : null;
    ConnectSchema keys = "map".equals(type) ? parse(node.get("keys")) : null;
    ConnectSchema values = "map".equals(type) ? parse(node.get("values")) : null;
    // Row conversion looks every column up by name: a map, not a scan of a wide table's fields.
    Map<String, Field> byName = new LinkedHashMap<>();
    fields.forEach(f -> byName.putIfAbsent(f.name(), f));
    return new ConnectSchema(
        type,
        name,
        optional,
        Collections.unmodifiableMap(parameters),
        List.copyOf(fields),
        items,
        keys,
        values,
        fingerprintOf(node),
        Collections.unmodifiableMap(byName));
  }

  private static String fingerprintOf(JsonNode node) {
    // Debezium's converter writes schemas in a stable field order, so the text is a sound identity.
    return node.toString();
  }

  private static String abbreviate(JsonNode node) {
    String text = String.valueOf(node);
    return text.length() > 200 ? text.substring(0, 200) + "..." : text;
  }
}
