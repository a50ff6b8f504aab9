package dev.lakestream.ingest.buffer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

class SchemaTextsTest {

  private final KeyValueStore<String, byte[]> store = store();

  @Test
  void aRecordReadBackIsTheRecordThatWasStoredByteForByte() {
    TestTable table = TestTable.wide("inventory", "documents");
    List<Change> changes = new ChangeStreamGenerator(table, 8).next(300);
    SchemaTexts texts = new SchemaTexts(store);
    long stored = 0;
    long raw = 0;
    for (Change change : changes) {
      for (byte[] record : new byte[][] {
        DebeziumJson.key(change, true),
        DebeziumJson.value(change, true),
        DebeziumJson.key(change, false),
        DebeziumJson.value(change, false)
      }) {
        if (record == null) {
          continue;
        }
        byte[] compact = texts.compact(record);
        assertThat(texts.expand(compact)).isEqualTo(record);
        // After a restart only the store is left.
        assertThat(new SchemaTexts(store).expand(compact)).isEqualTo(record);
        stored += compact.length;
        raw += record.length;
      }
    }
    assertThat(stored).as("bytes kept, of %d", raw).isLessThan(raw / 2);
    try (var all = store.all()) {
      int count = 0;
      while (all.hasNext()) {
        all.next();
        count++;
      }
      assertThat(count).as("one key schema and one value schema").isEqualTo(2);
    }
  }

  @Test
  void aHeldChangeDecodesFromItsPayloadsToTheChangeItsRecordDecodesTo() {
    TestTable table = TestTable.wide("inventory", "documents");
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 9);
    List<Change> changes = gen.snapshot(5);
    changes.addAll(gen.next(300));
    SchemaTexts texts = new SchemaTexts(store);
    DebeziumDecoder decoder = new DebeziumDecoder();
    int framed = 0;
    for (Change change : changes) {
      if (change.isTombstone()) {
        continue;
      }
      for (boolean withSchema : new boolean[] {true, false}) {
        BufferedChange record = new BufferedChange(
            1, 2, DebeziumJson.key(change, withSchema), DebeziumJson.value(change, withSchema));
        ChangeEvent expected =
            new DebeziumDecoder().decode(record.key(), record.value()).orElseThrow();
        BufferedChange held = texts.compact(record);
        long wholeBefore = texts.wholeDecodes();
        assertThat(texts.decode(held, decoder)).isEqualTo(expected);
        // Read from the payloads alone, not by putting the record back together; a record
        // without schemas has no text left out and is decoded whole.
        assertThat(texts.wholeDecodes() - wholeBefore).isEqualTo(withSchema ? 0 : 1);
        // After a restart only the store is left.
        assertThat(new SchemaTexts(store).decode(held, new DebeziumDecoder())).isEqualTo(expected);
        if (withSchema) {
          DebeziumDecoder.Framed key = texts.framed(held.key(), decoder, "key");
          DebeziumDecoder.Framed value = texts.framed(held.value(), decoder, "value");
          assertThat(key.bytes()).isSameAs(held.key());
          assertThat(value.bytes()).isSameAs(held.value());
          assertThat(decoder.decode(key, value)).isEqualTo(expected);
          framed++;
        } else {
          assertThat(texts.framed(held.value(), decoder, "value")).isNull();
        }
      }
    }
    assertThat(framed).isGreaterThan(200);
  }

  @Test
  void braceAndQuotesInsideTheSchemaTextDoNotEndIt() {
    String schema = "{\"type\":\"struct\",\"name\":\"a}b\\\"{c\",\"fields\":[{\"field\":\"x\"}]}";
    byte[] record =
        ("{\"schema\":" + schema + ",\"payload\":{\"x\":1}}").getBytes(StandardCharsets.UTF_8);
    SchemaTexts texts = new SchemaTexts(store);
    byte[] compact = texts.compact(record);
    assertThat(compact).hasSize(1 + 16 + ",\"payload\":{\"x\":1}}".length());
    assertThat(new SchemaTexts(store).expand(compact)).isEqualTo(record);
    assertThat(store.get(store.all().next().key))
        .isEqualTo(schema.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void otherShapesAreKeptAsTheyAre() {
    SchemaTexts texts = new SchemaTexts(store);
    for (String other : new String[] {
      "",
      "{\"payload\":{\"x\":1},\"schema\":{}}",
      "{\"schema\":{\"type\":\"struct\"}}",
      "{\"schema\":{\"type\":\"struct\"",
      "{\"schema\": {}, \"payload\": {}}",
      "[1,2]",
    }) {
      byte[] record = other.getBytes(StandardCharsets.UTF_8);
      assertThat(texts.compact(record)).as(other).isSameAs(record);
      assertThat(texts.expand(record)).as(other).isSameAs(record);
    }
  }

  @Test
  void aRecordStartingWithAMarkerByteIsKeptAsItIs() {
    SchemaTexts texts = new SchemaTexts(store);
    for (byte[] record : new byte[][] {
      {0},
      {1},
      {0, 1, 2, 3},
      {1, '{'},
      "\u0000{\"schema\":{},\"payload\":{}}".getBytes(StandardCharsets.UTF_8)
    }) {
      byte[] stored = texts.compact(record);
      assertThat(texts.expand(stored)).isEqualTo(record);
      assertThat(new SchemaTexts(store).expand(stored)).isEqualTo(record);
    }
    try (var all = store.all()) {
      assertThat(all.hasNext()).as("no schema text kept").isFalse();
    }
  }

  @Test
  void anEntryWhoseSchemaTextIsMissingIsNotReadAsSomethingElse() {
    byte[] record =
        "{\"schema\":{\"type\":\"int64\"},\"payload\":1}".getBytes(StandardCharsets.UTF_8);
    byte[] compact = new SchemaTexts(store).compact(record);
    store.delete(store.all().next().key);
    assertThatThrownBy(() -> new SchemaTexts(store).expand(compact))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("does not hold");
  }

  private static KeyValueStore<String, byte[]> store() {
    KeyValueStore<String, byte[]> store = Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore("schemas"), Serdes.String(), Serdes.ByteArray())
        .withLoggingDisabled()
        .build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
    return store;
  }
}
