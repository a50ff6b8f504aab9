package dev.lakestream.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.Random;
import java.util.UUID;

/**
 * A source column type as Debezium's Postgres connector emits it with its default settings: the
 * Connect schema it declares, how a value is written in JSON, the Java value an Iceberg generic
 * reader returns for it, and a random value. Written here, independently of the code under test.
 */
public enum ColumnType {
  INT32("int32", null) {
    Object random(Random r) {
      return r.nextInt(1_000_000);
    }

    JsonNode json(Object v) {
      return F.numberNode((Integer) v);
    }
  },
  INT64("int64", null) {
    Object random(Random r) {
      return r.nextLong() >>> 20;
    }
    // A Number: an int column widened to bigint keeps the values written before as ints.
    JsonNode json(Object v) {
      return F.numberNode(((Number) v).longValue());
    }
  },
  FLOAT64("double", null) {
    Object random(Random r) {
      return Math.round(r.nextDouble() * 1e6) / 1e3;
    }

    JsonNode json(Object v) {
      return F.numberNode((Double) v);
    }
  },
  BOOLEAN("boolean", null) {
    Object random(Random r) {
      return r.nextBoolean();
    }

    JsonNode json(Object v) {
      return F.booleanNode((Boolean) v);
    }
  },
  STRING("string", null) {
    Object random(Random r) {
      return "s" + Long.toString(r.nextLong() >>> 1, 36);
    }

    JsonNode json(Object v) {
      return F.textNode((String) v);
    }
  },
  /** NUMERIC(12,2) with decimal.handling.mode=precise: base64 of the unscaled two's complement. */
  DECIMAL_12_2("bytes", "org.apache.kafka.connect.data.Decimal") {
    Object random(Random r) {
      return BigDecimal.valueOf(r.nextInt(100_000_000) - 50_000_000L, 2);
    }

    JsonNode json(Object v) {
      return F.textNode(
          Base64.getEncoder().encodeToString(((BigDecimal) v).unscaledValue().toByteArray()));
    }

    void schemaExtras(ObjectNode s) {
      s.putObject("parameters").put("scale", "2").put("connect.decimal.precision", "12");
    }
  },
  /** TEXT holding a document of about 1 kB: a value PostgreSQL stores out of line (TOAST) under EXTERNAL storage. */
  LONG_TEXT("string", null) {
    Object random(Random r) {
      char[] text = new char[800 + r.nextInt(400)];
      for (int i = 0; i < text.length; i++) {
        text[i] = (char) ('a' + r.nextInt(26));
      }
      return new String(text);
    }

    JsonNode json(Object v) {
      return F.textNode((String) v);
    }
  },
  /** DATE: days since the epoch. */
  DATE("int32", "io.debezium.time.Date") {
    Object random(Random r) {
      return LocalDate.ofEpochDay(r.nextInt(30_000));
    }

    JsonNode json(Object v) {
      return F.numberNode((int) ((LocalDate) v).toEpochDay());
    }
  },
  /** TIMESTAMP (without time zone), time.precision.mode=adaptive: microseconds since the epoch. */
  MICRO_TIMESTAMP("int64", "io.debezium.time.MicroTimestamp") {
    Object random(Random r) {
      return LocalDateTime.ofEpochSecond(
          1_600_000_000L + r.nextInt(100_000_000), r.nextInt(1_000_000) * 1_000, ZoneOffset.UTC);
    }

    JsonNode json(Object v) {
      LocalDateTime t = (LocalDateTime) v;
      return F.numberNode(ChronoUnit.MICROS.between(LocalDateTime.of(1970, 1, 1, 0, 0), t));
    }
  },
  /** TIMESTAMPTZ: ISO-8601 text in UTC. */
  ZONED_TIMESTAMP("string", "io.debezium.time.ZonedTimestamp") {
    Object random(Random r) {
      return OffsetDateTime.ofInstant(
          Instant.ofEpochSecond(
              1_600_000_000L + r.nextInt(100_000_000), r.nextInt(1_000_000) * 1_000L),
          ZoneOffset.UTC);
    }

    JsonNode json(Object v) {
      return F.textNode(DateTimeFormatter.ISO_OFFSET_DATE_TIME.format((OffsetDateTime) v));
    }
  },
  UUID_TYPE("string", "io.debezium.data.Uuid") {
    Object random(Random r) {
      return new UUID(r.nextLong(), r.nextLong());
    }

    JsonNode json(Object v) {
      return F.textNode(v.toString());
    }
  },
  /** JSONB: the document as text. */
  JSON("string", "io.debezium.data.Json") {
    Object random(Random r) {
      return "{\"n\":" + r.nextInt(1000) + ",\"tag\":\"t" + r.nextInt(10) + "\"}";
    }

    JsonNode json(Object v) {
      return F.textNode((String) v);
    }
  },
  /** BYTEA with binary.handling.mode=bytes: base64. */
  BYTES("bytes", null) {
    Object random(Random r) {
      byte[] b = new byte[1 + r.nextInt(16)];
      r.nextBytes(b);
      return ByteBuffer.wrap(b);
    }

    JsonNode json(Object v) {
      ByteBuffer b = ((ByteBuffer) v).duplicate();
      byte[] bytes = new byte[b.remaining()];
      b.get(bytes);
      return F.textNode(Base64.getEncoder().encodeToString(bytes));
    }
  };

  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private final String connectType;
  private final String logicalName;

  ColumnType(String connectType, String logicalName) {
    this.connectType = connectType;
    this.logicalName = logicalName;
  }

  abstract Object random(Random r);

  abstract JsonNode json(Object value);

  void schemaExtras(ObjectNode schema) {}

  /** The Connect schema of a column of this type, as Debezium's JSON converter writes it. */
  ObjectNode schema(String field, boolean optional) {
    ObjectNode s = F.objectNode();
    s.put("type", connectType);
    s.put("optional", optional);
    if (logicalName != null) {
      s.put("name", logicalName);
      s.put("version", 1);
    }
    schemaExtras(s);
    s.put("field", field);
    return s;
  }
}
