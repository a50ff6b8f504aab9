package dev.lakestream.ingest.buffer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.ingest.toast.UnavailableValues;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * A DEFERRABLE primary key lets two rows hold one key within a statement. The events follow what
 * Debezium 3.6.1's PostgreSQL connector wrote for {@code UPDATE slots SET id = id + 1} on a table
 * with {@code REPLICA IDENTITY FULL} (seen on a real PostgreSQL 15; payloads as it wrote them, the
 * schemas abridged, every column optional): each move is the
 * delete of the old key (its whole row as {@code before}, header {@code __debezium.newkey}) and
 * the create of the new one (header {@code __debezium.oldkey}), and the delete of key 2 comes
 * after the create of key 2. The end-to-end test is {@code PostgresDeferrableKeyEndToEndTest}.
 */
class BatchesDeferrableKeyTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOPIC = "dbserver1.inventory.slots";
  private static final String PLACEHOLDER = UnavailableValues.DEBEZIUM_DEFAULT;
  private static final TableIdentifier SLOTS = TableIdentifier.of("inventory", "slots");

  private final DebeziumDecoder decoder = new DebeziumDecoder();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final IngestMetrics metrics = new IngestMetrics(meters);
  private final Batches batches = batches(Set.of(SLOTS.toString()));
  private long offset;

  @Test
  void aShiftThroughADeferrableKeyKeepsEveryRowMovedIn() throws Exception {
    shift(734, 1, 3);

    Map<String, JsonNode> rows = rows();
    assertThat(rows)
        .as("key 1 is deleted; keys 2 to 4 hold the rows moved into them")
        .containsOnlyKeys("{\"id\":1}", "{\"id\":2}", "{\"id\":3}", "{\"id\":4}");
    assertThat(rows.get("{\"id\":1}").isNull()).isTrue();
    assertThat(rows.get("{\"id\":2}").path("v").asText()).isEqualTo("v1");
    assertThat(rows.get("{\"id\":3}").path("v").asText()).isEqualTo("v2");
    assertThat(rows.get("{\"id\":4}").path("v").asText()).isEqualTo("v3");
    assertThat(metrics.otherRowDeletes.count())
        .as("the deletes of keys 2 and 3 removed the rows that had them before")
        .isEqualTo(2);
    assertThat(movedOut())
        .as("what each key held before it moved on, to fill the next key's create")
        .containsEntry("{\"id\":2}", "v2")
        .containsEntry("{\"id\":3}", "v3");
  }

  @Test
  void theCreateOfAMoveTakesItsUnchangedValuesFromTheRowThatMovedNotFromTheRowMovedIn()
      throws Exception {
    // Rows 1 and 2 are in the batch; key 1 moves to 2 and key 2 to 3, and each create lacks the
    // unchanged column "big".
    add(snapshotRow(733, 1, "v1", "big1"));
    add(snapshotRow(733, 2, "v2", "big2"));
    add(move(735, 1, 2, "v1", "big1"));
    add(create(735, 2, "v1", PLACEHOLDER, 1));
    add(move(735, 2, 3, "v2", "big2"));
    add(create(735, 3, "v2", PLACEHOLDER, 2));

    Map<String, JsonNode> rows = rows();
    assertThat(rows.get("{\"id\":2}").path("big").asText()).isEqualTo("big1");
    assertThat(rows.get("{\"id\":3}").path("big").asText()).isEqualTo("big2");
  }

  @Test
  void anInsertOfAKeyAnotherRowHoldsUntilCommitKeepsTheRowInserted() throws Exception {
    // INITIALLY DEFERRED: INSERT (2, 'new'), then DELETE ... WHERE id = 2 AND v = 'old'.
    add(create(743, 2, "new", "x", null));
    add(delete(743, 2, "old", "x"));
    assertThat(rows().get("{\"id\":2}").path("v").asText()).isEqualTo("new");
    assertThat(metrics.otherRowDeletes.count()).isEqualTo(1);
  }

  @Test
  void aRowMovedTwiceInOneTransactionLeavesTheKeyItPassedThrough() throws Exception {
    add(move(736, 1, 2, "a", "x"));
    add(create(736, 2, "a", "x", 1));
    add(move(736, 2, 5, "a", "x"));
    add(create(736, 5, "a", "x", 2));

    Map<String, JsonNode> rows = rows();
    assertThat(rows.get("{\"id\":2}").isNull()).as("its own row left key 2").isTrue();
    assertThat(rows.get("{\"id\":5}").path("v").asText()).isEqualTo("a");
    assertThat(metrics.otherRowDeletes.count()).isZero();
  }

  @Test
  void aDeleteOfAnotherTransactionOrWithoutWholeValuesApplies() throws Exception {
    add(move(737, 1, 2, "v1", "x"));
    add(create(737, 2, "v1", "x", 1));
    add(delete(738, 2, "v2", "x")); // a later transaction: the row of key 2 is the one moved in
    add(move(739, 3, 4, "v3", "x"));
    add(create(739, 4, "v3", PLACEHOLDER, 3));
    add(delete(739, 4, null, "y")); // differs only where a value is null or a placeholder

    Map<String, JsonNode> rows = rows();
    assertThat(rows.get("{\"id\":2}").isNull()).isTrue();
    assertThat(rows.get("{\"id\":4}").isNull()).isTrue();
    assertThat(metrics.otherRowDeletes.count()).isZero();
  }

  @Test
  void aShiftCutByAFlushGoesOnInTheNextBatchUntilItsTransactionEnds() throws Exception {
    add(move(740, 1, 2, "v1", "x"));
    add(create(740, 2, "v1", "x", 1));
    add(move(740, 4, 5, "v4", "x"));
    add(create(740, 5, "v4", "x", 4));
    batches.clear(only(), true);

    add(move(740, 2, 3, "v2", "x"));
    add(create(740, 3, "v2", "x", 2));
    Map<String, JsonNode> rows = rows();
    assertThat(rows)
        .as("key 2's row moved on; the row moved into it in the flushed batch stays")
        .containsOnlyKeys("{\"id\":3}");
    assertThat(movedOut()).containsEntry("{\"id\":2}", "v2");

    // The next transaction: what was carried is dropped, so its deletes apply, even of another row.
    add(delete(741, 5, "other", "x"));
    assertThat(rows().get("{\"id\":5}").isNull()).isTrue();
    assertThat(metrics.otherRowDeletes.count()).isEqualTo(1);
  }

  @Test
  void whatTheFlushedBatchesOfATransactionMovedInIsKeptUntilItsLaterDeletes() throws Exception {
    // A reversal (SET id = 7 - id): the create of key 6 comes long before the delete of key 6.
    add(move(744, 1, 6, "v1", "x"));
    add(create(744, 6, "v1", "x", 1));
    batches.clear(only(), true);
    add(move(744, 2, 5, "v2", "x"));
    add(create(744, 5, "v2", "x", 2));
    batches.clear(only(), true);
    add(move(744, 5, 2, "v5", "x")); // another row: a batch holding only a moved-out key
    batches.clear(only(), true);
    add(move(744, 6, 1, "v6", "x"));
    add(create(744, 1, "v6", "x", 6));
    add(create(744, 2, "v5", "x", 5));

    assertThat(rows())
        .as("keys 5 and 6 keep the rows moved into them two and three batches before")
        .containsOnlyKeys("{\"id\":1}", "{\"id\":2}");
    assertThat(metrics.otherRowDeletes.count()).isEqualTo(2);
  }

  @Test
  void aTableNotListedAppliesEveryDelete() throws Exception {
    Batches unlisted = batches(Set.of());
    // REPLICA IDENTITY DEFAULT fills a NOT NULL column of a delete's before-image with its default
    // (""): the images differ, though the insert and the delete are of one row.
    add(unlisted, create(745, 1, "a", "x", null));
    add(unlisted, delete(745, 1, "", "x"));
    add(unlisted, move(745, 2, 3, "v2", "x"));
    add(unlisted, create(745, 3, "v2", "x", 2));
    add(unlisted, move(745, 3, 4, "v3", "x"));

    Batches.Batch batch = unlisted.open().values().iterator().next();
    List<String> ops = new ArrayList<>();
    for (Batches.Entry e : unlisted.entries(batch)) {
      if (!e.movedOut()) {
        ops.add(JSON.readTree(e.change().value()).path("payload").path("op").asText());
      }
    }
    assertThat(ops).as("keys 1, 2 and 3 deleted").containsExactly("d", "d", "d");
    assertThat(metrics.otherRowDeletes.count()).isZero();
  }

  @Test
  void aChangeOfTheKeyAfterItsCreateEndsWhatTheCreateTellsAcrossAFlush() throws Exception {
    add(move(746, 1, 2, "v1", "x"));
    add(create(746, 2, "v1", "x", 1));
    batches.clear(only(), true);
    add(update(746, 2, "v1 changed", "x"));
    batches.clear(only(), true);
    add(delete(746, 2, "v1 changed", "x"));
    assertThat(rows().get("{\"id\":2}").isNull()).as("its own row deleted").isTrue();
    assertThat(metrics.otherRowDeletes.count()).isZero();
  }

  @Test
  void aRefusedChangeOfThePartitionEndsWhatItsCreatesTell() throws Exception {
    add(move(747, 1, 2, "v1", "x"));
    add(create(747, 2, "v1", "x", 1));
    batches.clear(only(), true);
    add(move(747, 3, 4, "v3", "x"));
    add(create(747, 4, "v3", "x", 3));
    // An update of key 2 or 4 that admission refused (a value its column cannot hold): the
    // deletes after it cannot tell the row it left from another.
    batches.forgetCreates(TOPIC, 0);
    add(delete(747, 2, "v1 updated", "x"));
    add(delete(747, 4, "v3 updated", "x"));
    assertThat(rows().get("{\"id\":2}").isNull()).isTrue();
    assertThat(rows().get("{\"id\":4}").isNull()).isTrue();
    assertThat(metrics.otherRowDeletes.count()).isZero();
  }

  @Test
  void aBatchNotWrittenWholeCarriesNothing() throws Exception {
    add(move(742, 1, 2, "v1", "x"));
    add(create(742, 2, "v1", "x", 1));
    batches.clear(only(), false);

    add(move(742, 2, 3, "v2", "x"));
    assertThat(rows().get("{\"id\":2}").isNull()).isTrue();
    assertThat(metrics.otherRowDeletes.count()).isZero();
  }

  /** {@code UPDATE slots SET id = id + 1} over keys {@code first..last}, in one transaction. */
  private void shift(long txId, int first, int last) throws Exception {
    for (int id = first; id <= last; id++) {
      add(move(txId, id, id + 1, "v" + id, "x"));
      add(create(txId, id + 1, "v" + id, "x", id));
    }
  }

  private record Event(int id, byte[] value, Integer oldKey, Integer newKey) {}

  private void add(Event e) {
    add(batches, e);
  }

  private void add(Batches to, Event e) {
    byte[] key = key(e.id());
    ChangeEvent event = decoder.decode(key, e.value()).orElseThrow();
    to.add(
        TOPIC,
        0,
        offset++,
        new Admission.Admitted(SLOTS, event, false, null, null),
        key,
        e.value(),
        e.oldKey() == null ? null : payloadKey(e.oldKey()),
        e.newKey() != null,
        0);
  }

  /** The delete of a move from {@code id} to {@code to}, with the row it had. */
  private static Event move(long txId, int id, int to, String v, String big) {
    return new Event(id, value("d", row(id, v, big), null, txId), null, to);
  }

  private static Event delete(long txId, int id, String v, String big) {
    return new Event(id, value("d", row(id, v, big), null, txId), null, null);
  }

  private static Event update(long txId, int id, String v, String big) {
    return new Event(id, value("u", row(id, v, big), row(id, v, big), txId), null, null);
  }

  private Batches batches(Set<String> deferrableKeyTables) {
    return new Batches(
        new SchemaTexts(store()),
        decoder,
        new UnavailableValues(PLACEHOLDER),
        metrics,
        deferrableKeyTables);
  }

  private static Event snapshotRow(long txId, int id, String v, String big) {
    return new Event(id, value("r", null, row(id, v, big), txId), null, null);
  }

  private static Event create(long txId, int id, String v, String big, Integer from) {
    return new Event(id, value("c", null, row(id, v, big), txId), from, null);
  }

  private static String row(int id, String v, String big) {
    return "{\"id\":" + id + ",\"v\":" + (v == null ? "null" : "\"" + v + "\"") + ",\"big\":"
        + (big == null ? "null" : "\"" + big + "\"") + "}";
  }

  private static byte[] value(String op, String before, String after, long txId) {
    String columns = "[{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},"
        + "{\"type\":\"string\",\"optional\":true,\"field\":\"v\"},"
        + "{\"type\":\"string\",\"optional\":true,\"field\":\"big\"}]";
    String schema = "{\"type\":\"struct\",\"fields\":["
        + "{\"type\":\"struct\",\"fields\":" + columns
        + ",\"optional\":true,\"name\":\"dbserver1.inventory.slots.Value\",\"field\":\"before\"},"
        + "{\"type\":\"struct\",\"fields\":" + columns
        + ",\"optional\":true,\"name\":\"dbserver1.inventory.slots.Value\",\"field\":\"after\"},"
        + "{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":true,\"field\":\"txId\"}],"
        + "\"optional\":false,\"field\":\"source\"},"
        + "{\"type\":\"string\",\"optional\":false,\"field\":\"op\"}],"
        + "\"optional\":false,\"name\":\"dbserver1.inventory.slots.Envelope\"}";
    String payload = "{\"before\":" + before + ",\"after\":" + after
        + ",\"source\":{\"version\":\"3.6.1.Final\",\"connector\":\"postgresql\",\"name\":\"dbserver1\","
        + "\"ts_ms\":1796483953141,\"snapshot\":\"false\",\"db\":\"postgres\","
        + "\"sequence\":\"[null,\\\"2208" + txId + "\\\"]\",\"schema\":\"inventory\","
        + "\"table\":\"slots\",\"txId\":" + txId + ",\"lsn\":2208" + txId + ",\"xmin\":null},"
        + "\"transaction\":null,\"op\":\"" + op + "\",\"ts_ms\":1796483953141}";
    return ("{\"schema\":" + schema + ",\"payload\":" + payload + "}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] key(int id) {
    return ("{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":false,"
            + "\"field\":\"id\"}],\"optional\":false,\"name\":\"dbserver1.inventory.slots.Key\"},"
            + "\"payload\":{\"id\":" + id + "}}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] payloadKey(int id) {
    return ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8);
  }

  private Batches.Batch only() {
    assertThat(batches.open()).hasSize(1);
    return batches.open().values().iterator().next();
  }

  /** The open batch's changes by key: the row a key is left with, a null node for a delete. */
  private Map<String, JsonNode> rows() throws Exception {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    for (Batches.Entry e : batches.entries(only())) {
      if (!e.movedOut()) {
        out.put(e.key(), JSON.readTree(e.change().value()).path("payload").path("after"));
      }
    }
    return out;
  }

  /** The open batch's moved-out keys and the {@code v} of the row each held. */
  private Map<String, String> movedOut() throws Exception {
    Map<String, String> out = new LinkedHashMap<>();
    for (Batches.Entry e : batches.entries(only())) {
      if (e.movedOut()) {
        out.put(
            e.key().substring(1),
            JSON.readTree(e.change().value())
                .path("payload")
                .path("after")
                .path("v")
                .asText());
      }
    }
    return out;
  }

  private static KeyValueStore<String, byte[]> store() {
    KeyValueStore<String, byte[]> store = Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore("store"), Serdes.String(), Serdes.ByteArray())
        .withLoggingDisabled()
        .build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
    return store;
  }
}
