package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.app.Health;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.KeyColumns;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.ingest.toast.PreviousRows;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unchanged TOAST values: PostgreSQL leaves an out-of-line value out of an update that does not
 * change it (REPLICA IDENTITY DEFAULT), and Debezium writes its placeholder instead. The realtime
 * branch holds the row's real value: from an earlier change of the key in the same batch, else
 * from the key's current row on realtime.
 */
class UnchangedToastTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> TOASTED = Set.of("name", "doc", "blob");

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {5, 6})
  void realtimeHoldsTheRealValuesAfterEveryCommitWhateverTheBatching(long seed) throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed).keepingValues(0.6);
      Random random = new Random(seed);
      ingest.send(gen.snapshot(200), true);
      ingest.flushAndCommit();
      for (int round = 1; round <= 30; round++) {
        ingest.sendToasted(gen.next(1 + random.nextInt(150)), TOASTED);
        if (random.nextBoolean()) {
          ingest.flushOnly(); // the next batch's flush then finds this one not yet on realtime
          ingest.sendToasted(gen.next(1 + random.nextInt(50)), TOASTED);
        }
        ingest.flushAndCommit();
        ingest.flushAndCommit();
        assertThat(ingest.realtimeDiffersFromModel(table))
            .as("after round %d", round)
            .isNull();
      }
      assertThat(ingest.counter("lakestream.ingest.dead.letters")).isZero();
      assertThat(ingest.counter("lakestream.ingest.unavailable.values.filled", "from", "table"))
          .isPositive();
      assertThat(ingest.counter("lakestream.ingest.unavailable.values.filled", "from", "batch"))
          .isPositive();
    }
  }

  /**
   * The lookup of previous rows read in steps of one file each (a budget of 0) finds what the lookup
   * read in one go finds, from the same files: the rows of the live keys, none of deleted or unknown
   * ones. A flush whose lookup spends its round's budget goes on with it at its next attempt.
   */
  @Test
  void aLookupReadInStepsFindsWhatOneReadFinds() throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 12).keepingValues(0.5);
      ingest.send(gen.snapshot(200), true);
      ingest.flushAndCommit();
      for (int round = 0; round < 12; round++) {
        ingest.send(gen.next(30), true);
        ingest.flushAndCommit();
      }
      Table iceberg = ingest.table(table);
      Snapshot realtime = iceberg.snapshot(Branches.REALTIME);
      Schema keySchema = KeyColumns.keySchema(iceberg);
      List<Record> keys = new ArrayList<>();
      Random random = new Random(12);
      List<List<Object>> live = new ArrayList<>(ingest.model(table).keys());
      for (int i = 0; i < 40; i++) {
        Record key = GenericRecord.create(keySchema);
        key.setField("id", live.get(random.nextInt(live.size())).get(0));
        if (!keys.contains(key)) {
          keys.add(key);
        }
      }
      Record unknown = GenericRecord.create(keySchema);
      unknown.setField("id", -1L);
      keys.add(unknown);
      Set<String> columns = Set.of("name", "doc", "blob");

      PreviousRows.Found whole = PreviousRows.lookup(iceberg, realtime, keys, columns);
      PreviousRows.Lookup stepped = new PreviousRows.Lookup(iceberg, realtime, keys, columns);
      int steps = 0;
      while (!stepped.step(0)) {
        steps++;
      }
      PreviousRows.Found found = stepped.found();

      assertThat(steps).as("steps before the last").isGreaterThan(whole.filesRead());
      assertThat(found.rows()).isEqualTo(whole.rows());
      assertThat(found.rows()).hasSize(keys.size() - 1).doesNotContainKey(unknown);
      assertThat(found.filesRead()).isEqualTo(whole.filesRead());
      assertThat(found.bytesRead()).isEqualTo(whole.bytesRead());
      for (Record key : keys.subList(0, keys.size() - 1)) {
        Map<String, Object> row = ingest.model(table).row(List.of(key.getField("id")));
        assertThat(found.rows().get(key).getField("name"))
            .as("name of %s", key)
            .isEqualTo(row.get("name"));
      }
    }
  }

  @Test
  void aFlushWaitsUntilThePartitionsEarlierBatchIsOnRealtime() throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    // Commits every 5 s: the second batch is flushed before the first is committed.
    try (IngestDriver ingest =
        new IngestDriver(List.of(table.topic()), Map.of(IngestConfig.COMMIT_INTERVAL_MS, "5000"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 9).keepingValues(1.0);
      ingest.send(gen.snapshot(20), true);
      ingest.advance(1_000);
      assertThat(ingest.realtimeSnapshots(table))
          .hasSize(1); // the empty snapshot the table starts with
      ingest.sendToasted(gen.updates(20, false), TOASTED);
      ingest.advance(1_000);
      assertThat(ingest.counter("lakestream.ingest.flushes.postponed")).isPositive();
      assertThat(ingest.filesWritten.readRecordsToList()).hasSize(1);
      ingest.advance(5_000); // the first batch is committed; the second is flushed, then committed
      ingest.advance(5_000);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.counter("lakestream.ingest.unavailable.values.filled", "from", "table"))
          .isEqualTo(20);
    }
  }

  @Test
  void anUpdateLackingValuesOfARowTheTableNeverHadIsDeadLettered() throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 10).keepingValues(1.0);
      List<Change> rows = gen.snapshot(3);
      ingest.send(rows.subList(0, 2), true); // the third row never reaches ingest
      ingest.flushAndCommit();
      List<Change> updates = gen.updates(3, false);
      for (Change update : updates) {
        ingest.sendRaw(
            table.topic(),
            DebeziumJson.key(update, true),
            DebeziumJson.value(update, true, TOASTED));
      }
      ingest.flushAndCommit();
      ingest.flushAndCommit();
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(1);
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("unavailable-value placeholder")
          .contains("has no row of");
      assertThat(ingest.realtimeRows(table)).hasSize(2);
    }
  }

  /**
   * The README's way to take a table again: it is dropped, and ingest makes it again with the next
   * changes. A batch holding an update that left out-of-line values as they were then looks for the
   * key's row on the new table, which never recorded the offsets flushed to the old one: it does not
   * wait for them, but dead-letters that update (no row to take the values from) and writes the
   * rest of the batch.
   */
  @Test
  void anUpdateLackingValuesAfterItsTableWasDroppedIsDeadLetteredNotWaitedOnForever()
      throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 12).keepingValues(1.0);
      ingest.send(gen.snapshot(20), true);
      ingest.flushAndCommit();
      TableIdentifier id = TableIdentifier.of(table.schema(), table.name());
      ingest.dropTable(id);

      List<Change> updates = gen.updates(4, false);
      ingest.sendToasted(updates, TOASTED);
      List<Change> inserted = gen.snapshot(3);
      ingest.send(inserted, true);
      for (int i = 0; i < 5; i++) {
        ingest.flushAndCommit();
      }

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(updates.size());
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("unavailable-value placeholder")
          .contains("has no row of");
      Map<List<Object>, Map<String, Object>> expected = new LinkedHashMap<>();
      inserted.forEach(c -> expected.put(c.key(), c.after()));
      assertThat(TableComparison.differences(expected, ingest.realtimeRows(table)))
          .isNull();
    }
  }

  /**
   * The committer never gets a batch (its files-written event lost): the partition's next flush
   * that must take values from realtime waits for it for good. After 5 minutes that wait is on
   * {@code /health}, naming the partition and the offsets; dropping the table, the README's way on,
   * lets the flush go to the new table, and the report ends.
   */
  @Test
  void aFlushWaitingForABatchTheCommitterNeverGotIsReportedUntilItGoesOn() throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 13).keepingValues(1.0);
      ingest.send(gen.snapshot(20), true);
      ingest.flushAndCommit();
      ingest.send(gen.snapshot(5), true);
      ingest.flushOnly();
      List<String> lost = new ArrayList<>();
      try (var it = ingest.pendingBatches().all()) {
        it.forEachRemaining(e -> lost.add(e.key));
      }
      assertThat(lost).as("the second batch, pending at the committer").hasSize(1);
      lost.forEach(k -> ingest.pendingBatches().delete(k));

      List<Change> updates = gen.updates(4, false);
      ingest.sendToasted(updates, TOASTED);
      String subject = "ingest partition " + table.topic() + "-0";
      for (int i = 0; i < 8; i++) { // 4 minutes
        ingest.advance(30_000);
      }
      assertThat(ingest.counter("lakestream.ingest.flushes.postponed")).isPositive();
      assertThat(ingest.health.describe(0)).doesNotContain(subject);
      for (int i = 0; i < 4; i++) { // 6 minutes
        ingest.advance(30_000);
      }
      assertThat(ingest.health.status(0)).isEqualTo(Health.Status.DEGRADED);
      assertThat(ingest.health.describe(0))
          .contains(subject)
          .contains("flushed up to offset 24")
          .contains("records offset 19")
          .contains("drop the table and snapshot it again");
      assertThat(ingest.counter("lakestream.ingest.flushes.long.waits")).isEqualTo(1);
      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();

      ingest.dropTable(TableIdentifier.of(table.schema(), table.name()));
      ingest.flushAndCommit();
      ingest.flushAndCommit();
      assertThat(ingest.health.status(0)).isEqualTo(Health.Status.UP);
      assertThat(ingest.deadLetters.readRecordsToList())
          .as("the updates, with no row on the new table to take their values from")
          .hasSize(updates.size());
      assertThat(ingest.counter("lakestream.ingest.flushes.long.waits")).isEqualTo(1);
    }
  }

  @Test
  void aPrimaryKeyUpdateTakesTheValuesItLacksFromTheOldRow() throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 12).keepingValues(1.0);
      List<Change> rows = gen.snapshot(2);
      ingest.send(rows, true);
      ingest.flushAndCommit();
      // Row 1's old row is in the table; row 2's is in the same batch (updated just before).
      moveKey(ingest, table, rows.get(0).after(), 101L);
      Change update = gen.updates(2, false).stream()
          .filter(c -> c.key().get(0).equals(2L))
          .findFirst()
          .orElseThrow();
      ingest.send(List.of(update), true);
      moveKey(ingest, table, ingest.model(table).rows().get(List.of(2L)), 102L);
      ingest.flushAndCommit();
      ingest.flushAndCommit();
      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  @Test
  void aPrimaryKeyUpdateWhoseOldRowIsNotInItsBatchIsDeadLetteredNamingTheFix() throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 13);
      List<Change> rows = gen.snapshot(1);
      ingest.send(rows, true);
      ingest.flushAndCommit();
      // Only the create arrives here: the delete of the old key went to another partition.
      Map<String, Object> row = new LinkedHashMap<>(rows.get(0).after());
      row.put("id", 200L);
      Change create =
          new Change('c', table, List.of(200L), null, row, 1_700_000_100_000L, 99_000_000L);
      ingest.sendRaw(
          table.topic(),
          DebeziumJson.key(create, true),
          placeholders(create),
          headers("__debezium.oldkey", "{\"id\":" + rows.get(0).key().get(0) + "}"));
      ingest.flushAndCommit();
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(1);
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("REPLICA IDENTITY FULL");
    }
  }

  /** Debezium's primary-key update: a delete of the old key (its tombstone), then a create of the new one. */
  private static void moveKey(
      IngestDriver ingest, TestTable table, Map<String, Object> oldRow, long newId)
      throws Exception {
    Object oldId = oldRow.get("id");
    Change delete = new Change(
        'd', table, List.of(oldId), oldRow, null, 1_700_000_100_000L, 90_000_000L + newId);
    Map<String, Object> row = new LinkedHashMap<>(oldRow);
    row.put("id", newId);
    Change create =
        new Change('c', table, List.of(newId), null, row, 1_700_000_100_000L, 90_000_000L + newId);
    ingest.sendRaw(
        table.topic(),
        DebeziumJson.key(delete, true),
        DebeziumJson.value(delete, true),
        headers("__debezium.newkey", "{\"id\":" + newId + "}"));
    ingest.sendRaw(
        table.topic(),
        DebeziumJson.key(delete, true),
        null,
        headers("__debezium.newkey", "{\"id\":" + newId + "}"));
    ingest.sendRaw(
        table.topic(),
        DebeziumJson.key(create, true),
        placeholders(create),
        headers("__debezium.oldkey", "{\"id\":" + oldId + "}"));
    ingest.model(table).apply(delete);
    ingest.model(table).apply(create);
  }

  /** The create of a primary-key update as PostgreSQL's connector writes it: no TOASTed value. */
  private static byte[] placeholders(Change create) throws Exception {
    ObjectNode value = (ObjectNode) JSON.readTree(DebeziumJson.value(create, true));
    ObjectNode after = (ObjectNode) value.get("payload").get("after");
    after.put("name", DebeziumJson.UNAVAILABLE);
    after.put("doc", DebeziumJson.UNAVAILABLE);
    return JSON.writeValueAsBytes(value);
  }

  private static RecordHeaders headers(String name, String value) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    return headers;
  }
}
