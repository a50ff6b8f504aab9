package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.ingest.buffer.ChangeBuffer;
import dev.lakestream.ingest.fence.SourceFence;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.ColumnType;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.iceberg.expressions.Expressions;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/** Every kind of bad input goes to the dead-letter topic with its reason; the good records land. */
class DeadLetterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String HEARTBEATS = "__debezium-heartbeat.dbserver1";

  private record Bad(byte[] key, byte[] value, String reason) {}

  @Test
  void badRecordsGoToDeadLetterTopicWithReasonAndOriginAndGoodRecordsLand() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic(), HEARTBEATS), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 7);
      ingest.send(gen.next(50), true);
      ingest.flushAndCommit();

      Change sample = gen.next(1).get(0);
      byte[] key = DebeziumJson.key(sample, true);
      byte[] value = DebeziumJson.value(sample, true);
      List<Bad> bad = new ArrayList<>();
      bad.add(new Bad(
          key, utf8("{\"schema\": {\"type\": \"struct\""), "malformed JSON in record value"));
      bad.add(new Bad(null, value, "record has no key"));
      bad.add(new Bad(key, edit(value, p -> p.with("payload").put("op", "x")), "unknown op \"x\""));
      bad.add(new Bad(
          key,
          changeColumnType(
              value, "name", "{\"type\":\"int32\",\"optional\":true,\"field\":\"name\"}", "5"),
          "column \"name\" is string in the table but the source now sends int"));
      bad.add(new Bad(
          key,
          changeColumnType(
              value,
              "score",
              "{\"type\":\"int64\",\"optional\":true,\"name\":\"io.debezium.time.MicroTime\",\"field\":\"score\"}",
              "86400000000"),
          "column \"score\" is double in the table but the source now sends time"));
      bad.add(new Bad(
          key,
          edit(value, p -> p.with("payload").with("after").put("active", "maybe")),
          "column \"active\": value \"maybe\" is not a valid boolean"));
      bad.add(new Bad(
          key, edit(value, p -> ((ObjectNode) p.get("payload")).remove("op")), "no \"op\" field"));
      for (Bad b : bad) {
        ingest.sendRaw(table.topic(), b.key(), b.value());
      }
      byte[] heartbeat = utf8("{\"ts_ms\":1700000000000}");
      ingest.sendRaw(HEARTBEATS, utf8("{\"serverName\":\"dbserver1\"}"), heartbeat);

      List<Change> after = gen.next(50);
      ingest.send(after, true);
      ingest.flushAndCommit();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(bad.size() + 1);
      for (int i = 0; i < bad.size(); i++) {
        TestRecord<byte[], byte[]> letter = letters.get(i);
        assertThat(letter.value()).isEqualTo(bad.get(i).value());
        assertThat(letter.key()).isEqualTo(bad.get(i).key());
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains(bad.get(i).reason());
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC)).isEqualTo(table.topic());
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.PARTITION)).isEqualTo("0");
        assertThat(Long.parseLong(KafkaHeaders.text(letter.headers(), DeadLetters.OFFSET)))
            .isEqualTo(51 + i);
      }
      TestRecord<byte[], byte[]> heartbeatLetter = letters.get(bad.size());
      assertThat(KafkaHeaders.text(heartbeatLetter.headers(), DeadLetters.TOPIC))
          .isEqualTo(HEARTBEATS);
      assertThat(KafkaHeaders.text(heartbeatLetter.headers(), DeadLetters.REASON))
          .contains("does not match the table naming pattern");

      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.counter("lakestream.ingest.dead.letters")).isEqualTo(bad.size() + 1);
    }
  }

  /**
   * A table partitioned by another hand after ingest took it: ingest writes unpartitioned files, so
   * each batch of it is refused (its changes dead-lettered with the remedy) rather than failed at
   * every flush, which failed the stream thread with it.
   */
  @Test
  void batchesOfATablePartitionedSinceIngestTookItAreDeadLettered() throws Exception {
    TestTable table = TestTable.plain("app", "ledger");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 8);
      ingest.send(gen.next(20), true);
      ingest.flushAndCommit();
      ingest.table(table).updateSpec().addField(Expressions.bucket("id", 4)).commit();

      // The first batch after it is written as before (ingest's table is read again when its
      // commit lands); the next ones see the partitions.
      ingest.send(gen.next(10), true);
      ingest.flushAndCommit();
      ingest.send(gen.next(10), true);
      ingest.flushAndCommit();
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).isNotEmpty();
      assertThat(letters)
          .allSatisfy(letter -> assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
              .contains("is partitioned", "unpartitioned tables only"));
    }
  }

  @Test
  void aBatchWithManyRecordsDeadLetteredBetweenItsChangesIsFlushedBeforeItsStartEntryGrowsLarge()
      throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    // No batch reaches its flush interval while the records come in.
    try (IngestDriver ingest = new IngestDriver(
        List.of(table.topic()), Map.of(IngestConfig.FLUSH_INTERVAL_MS, "3600000"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 9);
      ingest.send(gen.snapshot(10), true);
      byte[] key = DebeziumJson.key(gen.snapshot(1).get(0), true);
      byte[] malformed = utf8("{\"schema\": {");
      int rounds = ChangeBuffer.MAX_LEFT_OUT_RANGES + 100;
      for (int i = 0; i < rounds; i++) {
        ingest.sendRaw(table.topic(), key, malformed);
        ingest.send(gen.next(1), true);
      }

      // Each dead letter between two changes is a range of the batch's entry, written with every
      // record: the batch was flushed at the bound, so the entry holds the ranges since then only.
      assertThat(ingest.filesWritten.readRecordsToList()).isNotEmpty();
      try (var entries = ingest.batchStarts().all()) {
        entries.forEachRemaining(entry -> assertThat(entry.value.length)
            .as("batch-starts entry of %s", entry.key.replace('\u0000', '/'))
            .isLessThanOrEqualTo(1 + 3 * 8 + 4 + 16 * ChangeBuffer.MAX_LEFT_OUT_RANGES));
      }

      ingest.advance(3_600_000);
      ingest.commitOnly();
      assertThat(ingest.deadLetters.readRecordsToList()).hasSize(rounds);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  @Test
  void aRowHoldingAColumnItsSchemaDoesNotDeclareIsRefusedBeforeItsTableGainsTheColumn()
      throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 8);
      ingest.send(gen.snapshot(20), true);
      ingest.flushAndCommit();

      // A row holding a value its own schema does not declare (a record Connect's converter would
      // not write). Its key is one the generator never touches.
      Change sample = gen.snapshot(1).get(0);
      byte[] key =
          edit(DebeziumJson.key(sample, true), k -> k.with("payload").put("id", 1_000_000L));
      byte[] value = edit(
          DebeziumJson.value(sample, true),
          v -> v.with("payload").with("after").put("id", 1_000_000L).put("signup", "not a date"));
      ingest.sendRaw(table.topic(), key, value);
      // In the same batch the column arrives with a type the value does not fit: the table gains
      // it before the flush, which converts the batch's rows for the table as it is then. Had the
      // row been admitted, that flush would fail at every retry.
      TestTable altered = table.withColumn("signup", ColumnType.DATE);
      gen.alter(altered);
      ingest.send(gen.next(50), true);
      ingest.flushAndCommit();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(1);
      assertThat(letters.get(0).value()).isEqualTo(value);
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("holds column \"signup\", which the record's value schema does not declare");
      assertThat(Long.parseLong(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.OFFSET)))
          .isEqualTo(20);
      assertThat(ingest.realtimeDiffersFromModel(altered)).isNull();

      // The task goes on.
      ingest.send(gen.next(50), true);
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(altered)).isNull();
    }
  }

  @Test
  void aDeleteCarryingAnOldKeyHeaderIsAppliedAsADelete() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 14);
      ingest.send(gen.snapshot(20), true);
      ingest.flushAndCommit();
      // Debezium puts the old key on the create that ends a primary-key update, never on a delete;
      // a delete that carries it has no row to fill, and is a delete.
      int withHeader = 0;
      for (Change change : gen.next(200)) {
        if (!change.isTombstone() && change.op() == 'd') {
          ingest.send(
              change,
              new RecordHeaders().add(SourceFence.OLD_KEY_HEADER, DebeziumJson.key(change, true)));
          withHeader++;
        } else {
          ingest.send(List.of(change), true);
        }
      }
      assertThat(withHeader).isPositive();
      ingest.flushAndCommit();
      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  private static byte[] changeColumnType(
      byte[] value, String column, String schemaJson, String valueJson) throws Exception {
    return edit(value, root -> {
      try {
        for (var field : (ArrayNode) root.get("schema").get("fields")) {
          if ("after".equals(field.get("field").asText())
              || "before".equals(field.get("field").asText())) {
            ArrayNode columns = (ArrayNode) field.get("fields");
            for (int i = 0; i < columns.size(); i++) {
              if (column.equals(columns.get(i).get("field").asText())) {
                columns.set(i, JSON.readTree(schemaJson));
              }
            }
          }
        }
        ((ObjectNode) root.get("payload").get("after")).set(column, JSON.readTree(valueJson));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  private static byte[] edit(byte[] value, Consumer<ObjectNode> change) throws Exception {
    ObjectNode root = (ObjectNode) JSON.readTree(value);
    change.accept(root);
    return JSON.writeValueAsBytes(root);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
