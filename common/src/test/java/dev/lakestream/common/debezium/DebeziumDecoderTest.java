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
