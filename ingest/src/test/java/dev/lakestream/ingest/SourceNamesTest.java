package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.TestTable;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * Two source tables whose names Debezium or the default naming make one ({@code "dot.ted"} and
 * {@code dot_ted}, {@code "Order Items"} and {@code Order_Items}) are never mirrored into one table:
 * the table keeps the source table that reached it first, and the other's changes, truncates
 * included, go to the dead-letter topic with the reason. Shards of other names and two topics of one
 * source table (a connector moved to another server) still feed one table.
 */
class SourceNamesTest {

  private static final TableIdentifier DOT_TED = TableIdentifier.of("inventory", "dot_ted");

  private static long changes(List<Change> changes) {
    return changes.stream().filter(c -> !c.isTombstone()).count();
  }

  @Test
  void aSecondSourceTableOfTheSameTableNameIsDeadLetteredNotMerged() throws Exception {
    TestTable first = TestTable.plain("inventory", "dot_ted");
    // Of another server: TopologyTestDriver takes a dotted topic name for a pattern, and
    // dbserver1.inventory.dot.ted would match dbserver1.inventory.dot_ted.
    TestTable wide = TestTable.wide("inventory", "dot.ted");
    TestTable second =
        new TestTable("dbserver2", wide.schema(), wide.name(), wide.columns(), wide.key());
    try (IngestDriver ingest = new IngestDriver(List.of(first.topic(), second.topic()), Map.of())) {
      ChangeStreamGenerator firstChanges = new ChangeStreamGenerator(first, 1);
      ingest.send(firstChanges.next(60), true);
      ingest.flushAndCommit();
      ChangeStreamGenerator secondChanges = new ChangeStreamGenerator(second, 2);
      List<Change> refused = secondChanges.next(40);
      ingest.send(refused, true);
      ingest.send(List.of(secondChanges.truncate()), true);
      ingest.send(firstChanges.next(30), true);
      ingest.flushAndCommit();

      assertThat(ingest.realtimeDiffersFromModel(first))
          .as("dot_ted: its own changes, none of \"dot.ted\"'s, not truncated by it")
          .isNull();
      assertThat(ingest.table(DOT_TED).schema().findField("qty"))
          .as("a column only \"dot.ted\" has")
          .isNull();
      assertThat(ingest.table(DOT_TED).properties())
          .containsEntry("lakestream.source-table.inventory.dot_ted", "inventory.dot_ted")
          .doesNotContainKey("lakestream.source-table.inventory.dot.ted");
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize((int) changes(refused) + 1);
      for (TestRecord<byte[], byte[]> letter : letters) {
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC))
            .isEqualTo(second.topic());
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains("source table inventory.dot.ted (topic " + second.topic()
                + ") and source table inventory.dot_ted both map to table inventory.dot_ted")
            .contains(IngestConfig.TABLE_NAME_REGEX);
      }
    }
  }

  @Test
  void aSecondSourceTableOnTheSameTopicIsDeadLetteredNotMerged() throws Exception {
    // "Order Items" and Order_Items: Debezium sends both to <prefix>.inventory.Order_Items.
    TestTable first = TestTable.plain("inventory", "Order_Items");
    TestTable spaced = TestTable.plain("inventory", "Order Items");
    try (IngestDriver ingest = new IngestDriver(List.of(first.topic()), Map.of())) {
      ChangeStreamGenerator firstChanges = new ChangeStreamGenerator(first, 6);
      ingest.send(firstChanges.next(60), true);
      ingest.flushAndCommit();
      List<Change> refused = new ChangeStreamGenerator(spaced, 7).next(40);
      for (Change c : refused) {
        ingest.sendRaw(first.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      }
      ingest.send(firstChanges.next(30), true);
      ingest.flushAndCommit();

      assertThat(ingest.realtimeDiffersFromModel(first)).isNull();
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize((int) changes(refused));
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("source table inventory.Order Items (topic " + first.topic()
              + ") and source table inventory.Order_Items both map to table"
              + " inventory.Order_Items");
    }
  }

  @Test
  void shardsOfOtherNamesOnOneTopicFeedOneTable() throws Exception {
    // A router merging orders_1 and orders_2 into one topic.
    TestTable merged = TestTable.plain("inventory", "orders");
    TestTable one = TestTable.plain("inventory", "orders_1");
    TestTable two = TestTable.plain("inventory", "orders_2");
    try (IngestDriver ingest = new IngestDriver(List.of(merged.topic()), Map.of())) {
      for (Change c : new ChangeStreamGenerator(one, 8).next(30)) {
        ingest.sendRaw(merged.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      }
      ingest.flushAndCommit();
      for (Change c : new ChangeStreamGenerator(two, 9).next(30)) {
        ingest.sendRaw(merged.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      }
      ingest.flushAndCommit();

      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
      assertThat(ingest.table(TableIdentifier.of("inventory", "orders")).properties())
          .as("both shards taken, each recorded")
          .containsEntry("lakestream.source-table.inventory.orders_1", "inventory.orders_1")
          .containsEntry("lakestream.source-table.inventory.orders_2", "inventory.orders_2");
    }
  }

  @Test
  void twoTopicsOfOneSourceTableFeedOneTable() throws Exception {
    // The connector moved to a new server, with a new topic prefix: the same source table.
    TestTable before = TestTable.plain("inventory", "customers");
    TestTable moved =
        new TestTable("dbserver2", before.schema(), before.name(), before.columns(), before.key());
    try (IngestDriver ingest = new IngestDriver(List.of(before.topic(), moved.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(before, 3);
      ingest.send(gen.next(60), true);
      ingest.flushAndCommit();
      List<Change> later = gen.next(60);
      for (Change c : later) {
        ingest.sendRaw(moved.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
        ingest.model(before).apply(c);
      }
      ingest.flushAndCommit();

      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
      assertThat(ingest.realtimeDiffersFromModel(before)).isNull();
    }
  }
}
