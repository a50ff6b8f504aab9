package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.ColumnType;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TestTable;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Whatever a record holds, the stream thread survives it: the record goes to the dead-letter topic
 * with its reason and origin, the records after it (of its table and of other tables) land.
 */
class PoisonRecordTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOPIC = "dbserver1.app.poison";

  /** A Debezium value of table app.poison as the Postgres connector writes it, with {@code id}. */
  private static ObjectNode good(long id) throws Exception {
    String schema =
        "{\"type\":\"struct\",\"fields\":[{\"type\":\"struct\",\"optional\":true,\"field\":\"after\",\"fields\":["
            + "{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"},"
            + "{\"type\":\"int64\",\"optional\":true,\"name\":\"io.debezium.time.MicroTime\",\"field\":\"at\"},"
            + "{\"type\":\"int64\",\"optional\":true,\"name\":\"io.debezium.time.MicroTimestamp\",\"field\":\"ts\"},"
            + "{\"type\":\"struct\",\"optional\":true,\"name\":\"io.debezium.data.VariableScaleDecimal\",\"field\":\"amount\","
            + "\"fields\":[{\"type\":\"int32\",\"field\":\"scale\"},{\"type\":\"bytes\",\"field\":\"value\"}]},"
            + "{\"type\":\"int32\",\"optional\":true,\"field\":\"n\"},"
            + "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Uuid\",\"field\":\"u\"},"
            + "{\"type\":\"bytes\",\"optional\":true,\"field\":\"b\"}]},"
            + "{\"type\":\"string\",\"optional\":false,\"field\":\"op\"}]}";
    String payload = "{\"after\":{\"id\":" + id + ",\"at\":3723000000,\"ts\":1700000000000000,"
        + "\"amount\":{\"scale\":2,\"value\":\"AQ==\"},\"n\":7,\"u\":\"6f1c8a9e-2c1b-4a8e-9a7e-2f0d6c1b9e11\",\"b\":\"AP8=\"},"
        + "\"op\":\"c\",\"source\":{\"ts_ms\":1700000000000,\"lsn\":" + (1000 + id)
        + ",\"sequence\":\"[\\\"" + (1000 + id)
        + "\\\",\\\"" + (1000 + id) + "\\\"]\"}}";
    ObjectNode value = JSON.createObjectNode();
    value.set("schema", JSON.readTree(schema));
    value.set("payload", JSON.readTree(payload));
    return value;
  }

  private static byte[] key(long id) {
    return ("{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"optional\":false,\"field\":\"id\"}]},"
            + "\"payload\":{\"id\":" + id + "}}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static Arguments poison(String name, String reason, Consumer<ObjectNode> edit) {
    return Arguments.of(name, reason, edit);
  }

  static Stream<Arguments> poisons() {
    return Stream.of(
        poison("time 24:00:00, a valid PostgreSQL time", "24:00:00", v -> after(v)
            .put("at", 86_400_000_000L)),
        poison(
            "a timestamp past year 294247 (the connector's overflow)", "overflowed", v -> after(v)
                .put("ts", -9223372036853775810L)),
        poison(
            "an unconstrained NUMERIC with 30 decimals",
            "digits after the point",
            v -> after(v).putObject("amount").put("scale", 30).put("value", "AQ==")),
        poison("an int column holding 10^30", "column \"n\"", v -> after(v)
            .put("n", new BigDecimal("1e30").toBigInteger())),
        poison("a uuid that is not one", "column \"u\"", v -> after(v).put("u", "not-a-uuid")),
        poison("bytes that are not base64", "column \"b\"", v -> after(v).put("b", "%%%")),
        poison("a NUMERIC column holding words", "column \"amount\"", v -> after(v)
            .put("amount", "five")),
        poison("an after-image that is text", "without an \"after\" row", v -> ((ObjectNode)
                v.get("payload"))
            .put("after", "oops")),
        poison("an array schema without items", "malformed value schema", v -> ((ObjectNode)
                v.get("schema").get("fields").get(0).get("fields").get(4))
            .put("type", "array")),
        poison("an unknown Connect type", "has Connect type \"decimal128\"", v -> ((ObjectNode)
                v.get("schema").get("fields").get(0).get("fields").get(4))
            .put("type", "decimal128")),
        poison(
            "a column named like ingest's own position column",
            "column \"_lakestream_source_position\", which is the name of the source position",
            v -> renameN(v, "_lakestream_source_position")),
        poison(
            "a column named like Iceberg's row position",
            "column \"_pos\", which is the name of Iceberg's row position",
            v -> renameN(v, "_pos")),
        poison(
            "a key other than the row's (a column mask, or a transform, changed one of them)",
            "the record's key has id = 2 but its row has 9",
            v -> after(v).put("id", 9)),
        poison("a source block of the wrong shape", null, v -> ((ObjectNode) v.get("payload"))
            .put("source", "[1,2]")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("poisons")
  void theThreadSurvivesTheRecordIsDeadLetteredAndEveryTableFlowsOn(
      String name, String reason, Consumer<ObjectNode> edit) throws Exception {
    TestTable other = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(TOPIC, other.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(other, 3);
      ingest.sendRaw(TOPIC, key(1), JSON.writeValueAsBytes(good(1)));
      ingest.send(gen.next(20), true);
      ObjectNode bad = good(2);
      edit.accept(bad);
      ingest.sendRaw(TOPIC, key(2), JSON.writeValueAsBytes(bad));
      ingest.sendRaw(TOPIC, key(3), JSON.writeValueAsBytes(good(3)));
      ingest.send(gen.next(20), true);
      ingest.flushAndCommit();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      if (reason == null) {
        assertThat(letters).as("a record the pipeline can apply after all").isEmpty();
      } else {
        assertThat(letters).hasSize(1);
        assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
            .contains(reason);
        assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.TOPIC))
            .isEqualTo(TOPIC);
        assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.OFFSET))
            .isEqualTo("1");
      }
      var poisonTable = ingest.table(TableIdentifier.of("app", "poison"));
      long rows = TableRows.read(poisonTable, Branches.REALTIME).size();
      assertThat(rows).isEqualTo(reason == null ? 3 : 2);
      assertThat(ingest.realtimeDiffersFromModel(other)).isNull();
    }
  }

  /**
   * A table that took a column named like ingest's position column before the name was refused (or
   * that another writer gave one): each of its changes is dead-lettered with the remedy, not a
   * failure of the stream thread at every attempt; the other tables flow on.
   */
  @Test
  void aTableThatHasTheSourcePositionsNameDeadLettersItsChangesWithTheRemedy() throws Exception {
    TestTable other = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(TOPIC, other.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(other, 4);
      TableIdentifier poison = TableIdentifier.of("app", "poison");
      try (var catalog = (AutoCloseable) ingest.warehouse.openCatalog()) {
        new TableManager((Catalog) catalog)
            .ensure(
                poison,
                Types.StructType.of(Types.NestedField.required(1, "id", Types.LongType.get())),
                List.of("id"),
                "earlier")
            .updateSchema()
            .addColumn(SourcePositions.NAME, Types.BinaryType.get())
            .commit();
      }
      ingest.sendRaw(TOPIC, key(2), JSON.writeValueAsBytes(good(2)));
      ingest.send(gen.next(20), true);
      ingest.sendRaw(TOPIC, key(3), JSON.writeValueAsBytes(good(3)));
      // A TRUNCATE writes the position column too (its snapshot's files are positioned by it).
      ingest.send(List.of(new ChangeStreamGenerator(poisonTable(), 5).truncate()), true);
      ingest.flushAndCommit();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(3);
      for (TestRecord<byte[], byte[]> letter : letters) {
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains("has a column named \"" + SourcePositions.NAME + "\"")
            .contains("DROP COLUMN");
      }
      assertThat(TableRows.read(ingest.table(poison), Branches.REALTIME)).isEmpty();
      assertThat(ingest.realtimeDiffersFromModel(other)).isNull();
    }
  }

  /**
   * A table that takes such a column between its changes' admission and their flush (another
   * writer): the batch is dead-lettered whole at the flush, with the reason, and the thread goes on;
   * the table's next change is refused at admission.
   */
  @Test
  void aColumnTheTableTookBeforeTheFlushDeadLettersTheBatchAndTheThreadGoesOn() throws Exception {
    TestTable other = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(TOPIC, other.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(other, 6);
      ingest.sendRaw(TOPIC, key(1), JSON.writeValueAsBytes(good(1)));
      ingest.sendRaw(TOPIC, key(2), JSON.writeValueAsBytes(good(2)));
      ingest.send(gen.next(20), true);
      TableIdentifier poison = TableIdentifier.of("app", "poison");
      try (var catalog = (AutoCloseable) ingest.warehouse.openCatalog()) {
        ((Catalog) catalog)
            .loadTable(poison)
            .updateSchema()
            .addColumn(SourcePositions.NAME, Types.BinaryType.get())
            .commit();
      }
      ingest.flushAndCommit();
      ingest.sendRaw(TOPIC, key(3), JSON.writeValueAsBytes(good(3)));
      ingest.send(gen.next(20), true);
      ingest.flushAndCommit();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(3);
      assertThat(letters)
          .extracting(l -> KafkaHeaders.text(l.headers(), DeadLetters.OFFSET))
          .containsExactly("0", "1", "2");
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("the batch of " + TOPIC + "-0 holding this change cannot be written")
          .contains("has a column named \"" + SourcePositions.NAME + "\"");
      assertThat(TableRows.read(ingest.table(poison), Branches.REALTIME)).isEmpty();
      assertThat(ingest.realtimeDiffersFromModel(other)).isNull();
    }
  }

  /** Table app.poison as a test table, for its TRUNCATE. */
  private static TestTable poisonTable() {
    return new TestTable(
        "dbserver1",
        "app",
        "poison",
        List.of(new TestTable.Column("id", ColumnType.INT64)),
        List.of("id"));
  }

  /** The change with its column {@code n} named {@code name} instead: a column the table lacks. */
  private static void renameN(ObjectNode value, String name) {
    ((ObjectNode) value.get("schema").get("fields").get(0).get("fields").get(4)).put("field", name);
    after(value).put(name, 7);
    after(value).remove("n");
  }

  private static ObjectNode after(ObjectNode value) {
    return (ObjectNode) value.get("payload").get("after");
  }
}
