package dev.lakestream.reader;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * One JSON spelling of a row of Iceberg generic values: field order of the schema, numbers as
 * numbers (decimals exact), temporal values in ISO-8601, UUIDs as text, binary as base64, maps with
 * string keys as objects and others as arrays of {key, value}. Equal rows have equal spellings, so
 * the spelling also serves as the row's identity when a delta is consolidated.
 */
public final class RowJson {

  private static final JsonFactory JSON = new JsonFactory();

  private RowJson() {}

  public static String of(Types.StructType type, Record row) {
    StringWriter out = new StringWriter();
    try (JsonGenerator gen = JSON.createGenerator(out)) {
      write(gen, type, row, null, 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }

  /** Writes the row as one object, with {@code extraField} (the weight) last when not null. */
  public static void write(
      JsonGenerator gen, Types.StructType type, StructLike row, String extraField, int extraValue)
      throws IOException {
    gen.writeStartObject();
    List<Types.NestedField> fields = type.fields();
    for (int i = 0; i < fields.size(); i++) {
      Types.NestedField f = fields.get(i);
      gen.writeFieldName(f.name());
      value(gen, f.type(), row.get(i, Object.class));
    }
    if (extraField != null) {
      gen.writeNumberField(extraField, extraValue);
    }
    gen.writeEndObject();
  }

  private static void value(JsonGenerator gen, Type type, Object v) throws IOException {
    if (v == null) {
      gen.writeNull();
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN -> gen.writeBoolean((Boolean) v);
      case INTEGER -> gen.writeNumber((Integer) v);
      case LONG -> gen.writeNumber((Long) v);
      case FLOAT -> gen.writeNumber((Float) v);
      case DOUBLE -> gen.writeNumber((Double) v);
      case DECIMAL -> gen.writeNumber((BigDecimal) v);
      case STRING -> gen.writeString(v.toString());
      case BINARY, FIXED -> gen.writeString(Base64.getEncoder().encodeToString(bytes(v)));
      case STRUCT -> write(gen, type.asStructType(), (StructLike) v, null, 0);
      case LIST -> {
        gen.writeStartArray();
        for (Object e : (List<?>) v) {
          value(gen, type.asListType().elementType(), e);
        }
        gen.writeEndArray();
      }
      case MAP -> {
        Types.MapType map = type.asMapType();
        if (map.keyType().typeId() == Type.TypeID.STRING) {
          gen.writeStartObject();
          for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
            gen.writeFieldName(e.getKey().toString());
            value(gen, map.valueType(), e.getValue());
          }
          gen.writeEndObject();
        } else {
          gen.writeStartArray();
          for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
            gen.writeStartObject();
            gen.writeFieldName("key");
            value(gen, map.keyType(), e.getKey());
            gen.writeFieldName("value");
            value(gen, map.valueType(), e.getValue());
            gen.writeEndObject();
          }
          gen.writeEndArray();
        }
      }
      default ->
        gen.writeString(v.toString()); // date, time, timestamp(tz), uuid: ISO-8601 / canonical text
    }
  }

  private static byte[] bytes(Object v) {
    if (v instanceof byte[] b) {
      return b;
    }
    ByteBuffer buffer = ((ByteBuffer) v).duplicate();
    byte[] out = new byte[buffer.remaining()];
    buffer.get(out);
    return out;
  }
}
