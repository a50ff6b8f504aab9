package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.ingest.changelog.ChangeLog;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * The bronze change log: every source change event exactly once, in source order per key, however
 * often the connector replays and the committer is redelivered a batch.
 */
class ChangeLogTest {

  private static final TableIdentifier TABLE = TableIdentifier.of("inventory", "customers");

  @Test
  void everyChangeOnceInSourceOrderPerKeyAfterReplaysAndRedeliveries() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(table.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 91);
      List<Change> sent = new ArrayList<>(gen.snapshot(150));
      ingest.send(sent, true);
      List<Change> changes = gen.next(900);
      ingest.send(changes.subList(0, 300), true);
      ingest.flushAndCommit();
      List<TestRecord<String, FilesWritten>> delivered = ingest.filesWritten.readRecordsToList();

      // The connector restarts and publishes 200..299 again; the committer is handed an
      // already-committed batch again (a crash between the Iceberg and the Kafka commit).
      for (Change c : changes.subList(200, 300)) {
        ingest.sendRaw(c.table().topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      }
      ingest.filesWrittenIn.pipeInput(delivered.get(delivered.size() - 1));
      ingest.commitOnly();
      ingest.send(changes.subList(300, 600), true);
      ingest.flushAndCommit();
      ingest.send(changes.subList(600, 900), true);
      ingest.flushAndCommit();
      sent.addAll(changes);

      List<Record> log = read(ingest, ChangeLog.of(TABLE));
      List<Change> events = sent.stream().filter(c -> !c.isTombstone()).toList();
      assertThat(log).hasSize(events.size());
      Set<Long> offsets = new HashSet<>();
      log.forEach(r -> assertThat(offsets.add((Long) r.getField("kafka_offset")))
          .as("offset %s once", r.getField("kafka_offset"))
          .isTrue());
      Map<String, List<String>> expected = new HashMap<>();
      for (Change c : events) {
        expected.computeIfAbsent(keyJson(c), k -> new ArrayList<>()).add(String.valueOf(c.op()));
      }
      Map<String, List<String>> actual = new HashMap<>();
      log.stream()
          .sorted(Comparator.comparingLong(r -> (Long) r.getField("kafka_offset")))
          .forEach(r -> actual
              .computeIfAbsent((String) r.getField("key"), k -> new ArrayList<>())
              .add((String) r.getField("op")));
      assertThat(actual).as("ops per key in source order").isEqualTo(expected);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.counter("lakestream.ingest.fenced")).isGreaterThan(50);
      assertThat(ingest.table(ChangeLog.of(TABLE)).properties())
          .as("the change log retries its commits as the table does")
          .containsAllEntriesOf(TableManager.COMMIT_RETRY);
    }
  }

  @Test
  void tablesNotListedKeepNoChangeLog() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(table.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.orders"))) {
      ingest.send(new ChangeStreamGenerator(table, 92).next(100), true);
      ingest.flushAndCommit();
      assertThat(ingest.exists(ChangeLog.of(TABLE))).isFalse();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  @Test
  void aBeforeImageWithAStringLongerThanJacksonsLimitIsLoggedNotAWedge() throws Exception {
    // Decoding skips the before-image without Jackson's 20,000,000-character limit on a string;
    // the change log reads the whole value again at flush, and must take what admission took.
    TestTable table = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(table.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 93);
      List<Change> changes = new ArrayList<>(gen.snapshot(5));
      ingest.send(changes, true);
      Change update =
          gen.next(40).stream().filter(c -> c.op() == 'u').findFirst().orElseThrow();
      String value = new String(DebeziumJson.value(update, true), StandardCharsets.UTF_8);
      int before = value.indexOf("\"before\":{");
      String longName = "x".repeat(20_000_001);
      byte[] big = (value.substring(0, before) + "\"before\":{\"long\":\"" + longName + "\","
              + value.substring(before + "\"before\":{".length()))
          .getBytes(StandardCharsets.UTF_8);
      ingest.sendRaw(table.topic(), DebeziumJson.key(update, true), big);
      ingest.flushAndCommit();

      List<Record> log = read(ingest, ChangeLog.of(TABLE));
      assertThat(log)
          .filteredOn(r -> "u".equals(r.getField("op")))
          .singleElement()
          .satisfies(
              r -> assertThat(((String) r.getField("before")).length()).isGreaterThan(20_000_001));
      assertThat(log).hasSize(6);
    }
  }

  private static String keyJson(Change c) {
    return "{\"id\":" + c.key().get(0) + "}";
  }

  private static List<Record> read(IngestDriver ingest, TableIdentifier id) throws Exception {
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records =
        IcebergGenerics.read(ingest.table(id)).build()) {
      records.forEach(r -> rows.add(r.copy()));
    }
    return rows;
  }
}
