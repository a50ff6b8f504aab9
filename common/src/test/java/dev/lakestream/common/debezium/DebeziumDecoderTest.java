package dev.lakestream.common.debezium;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class DebeziumDecoderTest {

  private final DebeziumDecoder decoder = new DebeziumDecoder();

  @Test
  void decodesEveryOpWithEmbeddedSchemas() {
    ChangeStreamGenerator gen =
        new ChangeStreamGenerator(TestTable.wide("inventory", "customers"), 1);
    List<Change> changes = gen.snapshot(3);
    changes.addAll(gen.next(200));
    int seen = 0;
    for (Change change : changes) {
      var decoded =
          decoder.decode(DebeziumJson.key(change, true), DebeziumJson.value(change, true));
      if (change.isTombstone()) {
        assertThat(decoded).isEmpty();
        continue;
      }
      ChangeEvent event = decoded.orElseThrow();
      assertThat(event.op().code()).isEqualTo(change.op());
      assertThat(event.key().get("id").asLong()).isEqualTo(change.key().get(0));
      assertThat(event.hasSchemas()).isTrue();
      assertThat(event.keySchema().field("id").schema().type()).isEqualTo("int64");
      assertThat(event.rowSchema().fields()).hasSize(12);
      assertThat(event.source().tsMs()).isEqualTo(change.sourceTsMs());
      assertThat(event.source().lsn()).isEqualTo(change.lsn());
      assertThat(event.source().snapshot()).isEqualTo(change.op() == 'r');
      if (change.op() == 'd') {
        assertThat(event.after()).isNull();
      } else {
        assertThat(event.after().get("name").asText()).isEqualTo(change.after().get("name"));
      }
      seen++;
    }
    assertThat(seen)
        .isEqualTo(changes.stream().filter(c -> !c.isTombstone()).count())
        .isGreaterThan(150);
  }

  @Test
  void decodesWithoutSchemasTakingKeyColumnsFromTheRecordKey() {
    ChangeStreamGenerator gen =
        new ChangeStreamGenerator(TestTable.compositeKey("sales", "orders"), 2);
    Change insert = gen.next(1).get(0);
    ChangeEvent event = decoder
        .decode(DebeziumJson.key(insert, false), DebeziumJson.value(insert, false))
        .orElseThrow();
    assertThat(event.hasSchemas()).isFalse();
    assertThat(event.keySchema()).isNull();
    assertThat(event.key().fieldNames()).toIterable().containsExactly("tenant", "id");
    assertThat(event.after().get("id").asLong()).isEqualTo(insert.key().get(1));
  }

  @Test
  void skipsTombstones() {
    assertThat(decoder.decode("{\"id\":1}".getBytes(StandardCharsets.UTF_8), null))
        .isEmpty();
    assertThat(decoder.decode("{\"id\":1}".getBytes(StandardCharsets.UTF_8), new byte[0]))
        .isEmpty();
  }

  @Test
  void primaryKeyUpdateArrivesAsDeleteOfOldKeyAndCreateOfNewKey() {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(
        TestTable.wide("inventory", "customers"),
        3,
        new ChangeStreamGenerator.Mix(0, 0, 0, 0, 1, 0));
    gen.snapshot(1);
    List<Change> keyUpdate = gen.next(1);
    assertThat(keyUpdate).extracting(Change::op).containsExactly('d', 't', 'c');
    ChangeEvent delete = decoder
        .decode(
            DebeziumJson.key(keyUpdate.get(0), true), DebeziumJson.value(keyUpdate.get(0), true))
        .orElseThrow();
    ChangeEvent create = decoder
        .decode(
            DebeziumJson.key(keyUpdate.get(2), true), DebeziumJson.value(keyUpdate.get(2), true))
        .orElseThrow();
    assertThat(delete.op()).isEqualTo(ChangeOp.DELETE);
    assertThat(create.op()).isEqualTo(ChangeOp.CREATE);
    assertThat(delete.key()).isNotEqualTo(create.key());
  }

  @Test
  void aSchemaReadFromItsTextDecodesAsTheWholeTreeDoes() throws Exception {
    ChangeStreamGenerator gen =
        new ChangeStreamGenerator(TestTable.wide("inventory", "customers"), 2);
    ObjectMapper json = new ObjectMapper();
    for (Change change : gen.next(100)) {
      if (change.isTombstone()) {
        continue;
      }
      byte[] key = DebeziumJson.key(change, true);
      byte[] value = DebeziumJson.value(change, true);
      // The same record with payload before schema and other spacing: the schema's text differs,
      // the event must not.
      ObjectNode tree = (ObjectNode) json.readTree(value);
      ObjectNode reordered = json.createObjectNode();
      reordered.set("payload", tree.get("payload"));
      reordered.set("schema", tree.get("schema"));
      byte[] other = json.writerWithDefaultPrettyPrinter().writeValueAsBytes(reordered);
      ChangeEvent fast = decoder.decode(key, value).orElseThrow();
      ChangeEvent slow = new DebeziumDecoder().decode(key, other).orElseThrow();
      assertThat(fast).isEqualTo(slow);
      assertThat(fast.rowSchema().fields()).hasSize(12);
    }
    // A record whose schema is known but whose payload is cut short is malformed, as before.
    Change last = gen.next(5).stream().filter(c -> !c.isTombstone()).findFirst().orElseThrow();
    byte[] whole = DebeziumJson.value(last, true);
    decoder.decode(DebeziumJson.key(last, true), whole);
    byte[] cut = Arrays.copyOf(whole, whole.length - 3);
    assertThatThrownBy(() -> decoder.decode(DebeziumJson.key(last, true), cut))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("malformed JSON in record value");
    // A schema field that is not an object is still an error that says so.
    assertThatThrownBy(() -> decoder.decode(
            bytes("{\"id\":1}"), bytes("{\"schema\":[1],\"payload\":{\"op\":\"c\"}}")))
        .isInstanceOf(BadChangeException.class);
  }

  @Test
  void aRecordFramedByItsKnownSchemaDecodesAsItsWholeBytesDo() {
    List<Change> changes = snapshotAndChanges(6);
    int compared = 0;
    for (Change change : changes) {
      byte[] key = DebeziumJson.key(change, true);
      byte[] value = DebeziumJson.value(change, true);
      // A fresh decoder each time for the whole bytes, so the framed one's schemas are its own.
      ChangeEvent whole = new DebeziumDecoder().decode(key, value).orElseThrow();
      ChangeEvent framed = decoder.decode(framed(key, "key"), framed(value, "value"));
      assertThat(framed).isEqualTo(whole);
      compared++;
    }
    assertThat(compared).isGreaterThan(200);
    // Whatever is before the payload is not read: only the schema given and the payload count.
    Change any = changes.get(0);
    byte[] value = DebeziumJson.value(any, true);
    DebeziumDecoder.Framed v = framed(value, "value");
    Arrays.fill(value, 0, v.payloadFrom(), (byte) 'x');
    assertThat(decoder.decode(framed(DebeziumJson.key(any, true), "key"), v))
        .isEqualTo(new DebeziumDecoder()
            .decode(DebeziumJson.key(any, true), DebeziumJson.value(any, true))
            .orElseThrow());
    // A payload that is not an object ending the bytes is left to the whole record's decoding.
    DebeziumDecoder.Framed key = framed(DebeziumJson.key(any, true), "key");
    for (String payload :
        new String[] {"null}", "[1]}", "{\"op\":\"c\"}}x", "{\"op\":", "{\"op\":\"c\"},{}}"}) {
      byte[] bytes = bytes(",\"payload\":" + payload);
      assertThat(decoder.decode(key, new DebeziumDecoder.Framed(v.schema(), bytes, 11)))
          .as(payload)
          .isNull();
    }
  }

  /** Five snapshot reads and the changes of 300 more records of a wide table, tombstones left out. */
  private static List<Change> snapshotAndChanges(long seed) {
    ChangeStreamGenerator gen =
        new ChangeStreamGenerator(TestTable.wide("inventory", "customers"), seed);
    List<Change> changes = gen.snapshot(5);
    changes.addAll(gen.next(300));
    changes.removeIf(Change::isTombstone);
    return changes;
  }

  /** The record as the decoder reads it with its schema text known: parsed from that text. */
  private DebeziumDecoder.Framed framed(byte[] record, String what) {
    String text = new String(record, StandardCharsets.UTF_8);
    assertThat(text).startsWith("{\"schema\":");
    int payload = text.lastIndexOf(",\"payload\":");
    byte[] schemaText = Arrays.copyOfRange(record, "{\"schema\":".length(), payload);
    return new DebeziumDecoder.Framed(
        decoder.schemaOfText(schemaText, what), record, payload + ",\"payload\":".length());
  }

  @Test
  void aValueReadForItsFieldsDecodesAsTheWholeTreeDoes() {
    // With schemas, a value's payload is read for the fields decoding needs (before, transaction
    // and the source's names skipped); without, it is read as a whole tree. Same events.
    int compared = 0;
    for (Change change : snapshotAndChanges(4)) {
      ChangeEvent fields = decoder
          .decode(DebeziumJson.key(change, true), DebeziumJson.value(change, true))
          .orElseThrow();
      ChangeEvent tree = decoder
          .decode(DebeziumJson.key(change, false), DebeziumJson.value(change, false))
          .orElseThrow();
      assertThat(fields.op()).isEqualTo(tree.op());
      assertThat(fields.key()).isEqualTo(tree.key());
      assertThat(fields.keyJson()).isEqualTo(tree.keyJson());
      assertThat(fields.after()).isEqualTo(tree.after());
      assertThat(fields.source()).isEqualTo(tree.source());
      compared++;
    }
    assertThat(compared).isGreaterThan(250);
  }

  @Test
  void readsTheSourcePositionWhereverItsFieldsAreAndWhateverSurroundsThem() {
    // As Debezium 3.6.1's PostgreSQL connector writes an update with transaction metadata, the
    // fields in another order, nested objects in the skipped parts, and ts_ms given twice.
    String schema = "{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"fields\":"
        + "[{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},"
        + "{\"type\":\"string\",\"optional\":true,\"field\":\"name\"}],"
        + "\"optional\":true,\"field\":\"after\"}],\"optional\":false}";
    String payload = "{\"transaction\":{\"id\":\"771:24001\",\"total_order\":3,"
        + "\"data_collection_order\":2,\"nested\":{\"a\":[1,{\"b\":null}]}},"
        + "\"source\":{\"version\":\"3.6.1.Final\",\"connector\":\"postgresql\","
        + "\"name\":\"dbserver1\",\"ts_ms\":1,\"snapshot\":\"false\",\"db\":\"postgres\","
        + "\"sequence\":\"[\\\"24000\\\",\\\"24056\\\"]\",\"ts_us\":1796038805726001,"
        + "\"ts_ns\":1796038805726001000,\"schema\":\"inventory\",\"table\":\"customers\","
        + "\"txId\":771,\"lsn\":24056,\"xmin\":null,\"extra\":{\"x\":[true,false]},"
        + "\"ts_ms\":1796038805726},"
        + "\"before\":{\"id\":7,\"name\":\"old\",\"tags\":[\"a\",{\"b\":1.5e3}]},"
        + "\"op\":\"u\",\"ts_us\":1796038805730001,\"after\":{\"id\":7,\"name\":\"new\"},"
        + "\"ts_ms\":1796038805730}";
    byte[] key = bytes("{\"id\":7}");
    ChangeEvent withSchema = decoder
        .decode(key, bytes("{\"schema\":" + schema + ",\"payload\":" + payload + "}"))
        .orElseThrow();
    // Twice: the second time the schema's text is known and only the payload is parsed.
    ChangeEvent again = decoder
        .decode(key, bytes("{\"schema\":" + schema + ",\"payload\":" + payload + "}"))
        .orElseThrow();
    ChangeEvent whole = decoder.decode(key, bytes(payload)).orElseThrow();
    for (ChangeEvent event : List.of(withSchema, again, whole)) {
      assertThat(event.op()).isEqualTo(ChangeOp.UPDATE);
      assertThat(event.after().get("name").asText()).isEqualTo("new");
      assertThat(event.source())
          .isEqualTo(new SourcePosition(1796038805726L, 24056L, 24000L, null, -1, 0, false, 771));
      assertThat(event.table()).isEqualTo(new SourceTable("inventory", "customers"));
    }
    assertThat(again).isEqualTo(withSchema);
    // MySQL and MariaDB name the database, not a schema.
    String mysql = "{\"source\":{\"connector\":\"mysql\",\"db\":\"shop\",\"schema\":null,"
        + "\"table\":\"orders\",\"file\":\"binlog.000003\",\"pos\":157},\"op\":\"c\","
        + "\"after\":{\"id\":7,\"name\":\"new\"}}";
    assertThat(decoder.decode(key, bytes(mysql)).orElseThrow().table())
        .isEqualTo(new SourceTable("shop", "orders"));
  }

  @Test
  void whatDecodingSkipsMustStillBeWellFormed() {
    Change change = new ChangeStreamGenerator(TestTable.wide("inventory", "customers"), 5)
        .next(20).stream().filter(c -> c.op() == 'u').findFirst().orElseThrow();
    byte[] key = DebeziumJson.key(change, true);
    byte[] value = DebeziumJson.value(change, true);
    decoder.decode(key, value).orElseThrow(); // its schema's text is now known
    String text = new String(value, StandardCharsets.UTF_8);
    int before = text.indexOf("\"before\":{");
    assertThat(before).isPositive();
    // A bad literal inside the skipped before-image.
    byte[] badLiteral =
        bytes(text.substring(0, before) + "\"before\":{\"id\":tru," + text.substring(before + 10));
    assertThatThrownBy(() -> decoder.decode(key, badLiteral))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("malformed JSON in record value");
    // A byte that is not UTF-8 inside a string of the skipped before-image.
    int name = text.indexOf("\"name\":\"", before);
    byte[] badUtf8 = value.clone();
    badUtf8[text.substring(0, name).getBytes(StandardCharsets.UTF_8).length + 8] = (byte) 0xC3;
    badUtf8[text.substring(0, name).getBytes(StandardCharsets.UTF_8).length + 9] = (byte) 0x28;
    assertThatThrownBy(() -> decoder.decode(key, badUtf8))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("record value");
  }

  @Test
  void rejectsMalformedJson() {
    assertThatThrownBy(() -> decoder.decode(bytes("{\"id\":1}"), bytes("{\"op\": \"c\", ")))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("malformed JSON in record value");
  }

  @Test
  void rejectsRecordWithoutKey() {
    assertThatThrownBy(() -> decoder.decode(null, bytes("{\"op\":\"c\",\"after\":{\"id\":1}}")))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("no key");
  }

  @Test
  void rejectsUnknownOp() {
    assertThatThrownBy(
            () -> decoder.decode(bytes("{\"id\":1}"), bytes("{\"op\":\"x\",\"after\":{\"id\":1}}")))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("unknown op \"x\"");
  }

  @Test
  void decodesATruncateWithoutKeyOrRowAtItsSourcePosition() {
    // As Debezium 3.6.1 writes a PostgreSQL TRUNCATE (skipped.operations=none): a null record key.
    ChangeEvent event = decoder
        .decode(
            null,
            bytes(
                "{\"before\":null,\"after\":null,\"source\":{\"ts_ms\":1796038805726,"
                    + "\"sequence\":\"[\\\"22212912\\\",\\\"22217936\\\"]\",\"lsn\":22217936},\"op\":\"t\"}"))
        .orElseThrow();
    assertThat(event.op()).isEqualTo(ChangeOp.TRUNCATE);
    assertThat(event.key()).isEmpty();
    assertThat(event.after()).isNull();
    assertThat(event.source().order())
        .hasValueSatisfying(o -> assertThat(o).containsExactly(22212912L, 22217936L));
  }

  @Test
  void rejectsFlattenedRowsWithoutEnvelope() {
    assertThatThrownBy(
            () -> decoder.decode(bytes("{\"id\":1}"), bytes("{\"id\":1,\"name\":\"a\"}")))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("no \"op\" field");
  }

  @Test
  void rejectsAfterImageWithoutKeyColumn() {
    assertThatThrownBy(() ->
            decoder.decode(bytes("{\"id\":1}"), bytes("{\"op\":\"c\",\"after\":{\"name\":\"a\"}}")))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("lacks primary-key column \"id\"");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
