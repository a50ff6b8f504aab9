package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.ChangeLogTables;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.ingest.changelog.ChangeLog;
import dev.lakestream.ingest.changelog.ChangeLogCommitter;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.CommitsThrough;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.DelegatingCatalog;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * The bronze change log: every source change event exactly once, in source order per key, however
 * often the connector replays and the committer is redelivered a batch.
 */
class ChangeLogTest {

  private static final TableIdentifier TABLE = TableIdentifier.of("inventory", "customers");

  /**
   * A batch the table refuses at its flush (here it took ingest's position column's name since the
   * changes were admitted) is dead-lettered whole, and its change-log rows go with it: left in the
   * store they would be written with the partition's next batch, logging changes the table never
   * got.
   */
  @Test
  void aBatchRefusedAtItsFlushLeavesNoChangeLogRowsBehind() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(table.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 93);
      ingest.send(gen.snapshot(50), true);
      ingest.flushAndCommit();
      int logged = read(ingest, ChangeLog.of(TABLE)).size();
      List<Change> refused = gen.next(30);
      ingest.send(refused, true);
      assertThat(count(ingest.changelogBuffer())).as("rows held for the log").isPositive();
      ingest
          .catalog()
          .loadTable(TABLE)
          .updateSchema()
          .addColumn(SourcePositions.NAME, Types.BinaryType.get())
          .commit();
      Thread.sleep(1_100); // past the flush's one second of trust in its cached table
      ingest.flushAndCommit();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).isNotEmpty();
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("holding this change cannot be written");
      assertThat(count(ingest.changelogBuffer())).as("rows held for the log").isZero();
      assertThat(read(ingest, ChangeLog.of(TABLE))).hasSize(logged);
    }
  }

  private static long count(KeyValueStore<String, ?> store) {
    long n = 0;
    try (var it = store.all()) {
      while (it.hasNext()) {
        it.next();
        n++;
      }
    }
    return n;
  }

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

  @Test
  void aSourceTableNamedLikeTheChangeLogKeepsItsNameAndTheTableIsMirroredWithoutALog()
      throws Exception {
    // A schema with customers and customers_changelog, the second mirrored first: customers is
    // mirrored all the same, without its change log, and no log row is written into the mirror.
    TestTable customers = TestTable.wide("inventory", "customers");
    TestTable named = TestTable.plain("inventory", "customers_changelog");
    try (IngestDriver ingest = new IngestDriver(
        List.of(customers.topic(), named.topic()),
        Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      ingest.send(new ChangeStreamGenerator(named, 94).next(60), true);
      ingest.flushAndCommit();
      List<Change> unlogged = new ChangeStreamGenerator(customers, 95).next(80);
      ingest.send(unlogged.subList(0, 40), true);
      ingest.flushAndCommit();
      ingest.send(unlogged.subList(40, 80), true);
      ingest.flushAndCommit();

      assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
      assertThat(ingest.realtimeDiffersFromModel(named))
          .as("the mirrored customers_changelog's realtime")
          .isNull();
      assertThat(TableRows.read(ingest.table(named), SnapshotRef.MAIN_BRANCH))
          .as("main of the mirrored customers_changelog, where change-log rows would go")
          .isEmpty();
      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
      assertThat(ingest.counter("lakestream.ingest.changelog.skipped"))
          .isEqualTo(unlogged.stream().filter(c -> !c.isTombstone()).count());
    }
  }

  @Test
  void rowsFlushedForALogThatIsThenReplacedByAnotherTableAreNotAppendedToIt() throws Exception {
    TestTable customers = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(customers.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      ingest.send(new ChangeStreamGenerator(customers, 99).next(60), true);
      ingest.flushOnly();
      // Between the flush and its commit the log is dropped and a mirror made in its place.
      ingest.dropTable(ChangeLog.of(TABLE));
      Table replaced = ingest
          .catalog()
          .buildTable(ChangeLog.of(TABLE), KeyFiles.ID_NAME)
          .withPartitionSpec(PartitionSpec.unpartitioned())
          .withProperty(TableProperties.FORMAT_VERSION, "3")
          .withProperty(TableManager.MANAGED, "true")
          .create();
      ingest.commitOnly();

      assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
      replaced.refresh();
      assertThat(replaced.currentSnapshot())
          .as("a snapshot of the table that replaced the change log")
          .isNull();
    }
  }

  @Test
  void aChangeLogIsNeverTakenOverAsTheMirrorOfASourceTableOfItsName() throws Exception {
    TestTable customers = TestTable.wide("inventory", "customers");
    TestTable named = TestTable.plain("inventory", "customers_changelog");
    try (IngestDriver ingest = new IngestDriver(
        List.of(customers.topic(), named.topic()),
        Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      ChangeStreamGenerator customerChanges = new ChangeStreamGenerator(customers, 96);
      List<Change> logged = customerChanges.next(60);
      ingest.send(logged, true);
      ingest.flushAndCommit();
      ChangeStreamGenerator namedChanges = new ChangeStreamGenerator(named, 97);
      List<Change> refused = new ArrayList<>(namedChanges.next(20));
      refused.add(namedChanges.truncate()); // the log has no realtime branch to truncate
      ingest.send(refused, true);
      ingest.flushAndCommit();

      Table log = ingest.table(ChangeLog.of(TABLE));
      assertThat(log.refs()).as("the change log's branches").doesNotContainKey(Branches.REALTIME);
      assertThat(log.properties())
          .doesNotContainKey(TableManager.MANAGED)
          .containsEntry(ChangeLogTables.LOG_OF, "inventory.customers");
      assertThat(read(ingest, ChangeLog.of(TABLE)))
          .as("the change log holds customers' changes only")
          .hasSize((int) logged.stream().filter(c -> !c.isTombstone()).count());
      assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters)
          .hasSize((int) refused.stream().filter(c -> !c.isTombstone()).count());
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.TOPIC))
          .isEqualTo(named.topic());
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("is the change log of inventory.customers, not a table to mirror");
      assertThat(KafkaHeaders.text(letters.get(letters.size() - 1).headers(), DeadLetters.REASON))
          .contains("TRUNCATE of inventory.customers_changelog")
          .contains("it is a change log");
      // Nothing is held back: customers' next changes commit.
      List<Change> more = customerChanges.next(30);
      ingest.send(more, true);
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
    }
  }

  @Test
  void aLogDroppedBetweenAFlushAndItsCommitHoldsNoCommitBack() throws Exception {
    TestTable customers = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(customers.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      ingest.send(new ChangeStreamGenerator(customers, 101).next(60), true);
      ingest.flushOnly();
      ingest.dropTable(ChangeLog.of(TABLE)); // an operator who stopped keeping it
      ingest.commitOnly();
      assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
    }
  }

  /**
   * With several instances, the change log is dropped while the instance that flushes the table's
   * partition holds it in its cache (the committer that finds it gone, and forgets it, runs on
   * another). A task of the flushing instance started again (a replaced thread, a rebalance) reads
   * the log's offsets as the catalog has them, not from the dropped log it cached: it does not die
   * on its first record again and again, and the log is made again with the rows from then on.
   */
  @Test
  void aTaskStartedAgainWhileItsCachedLogWasDroppedGoesOnAndMakesTheLogAgain() throws Exception {
    TestTable customers = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(customers.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(customers, 102);
      List<Change> before = gen.next(60);
      ingest.send(before, true);
      ingest.flushAndCommit();
      assertThat(read(ingest, ChangeLog.of(TABLE))).isNotEmpty();

      ingest.dropTable(ChangeLog.of(TABLE));
      ingest.restartTasks();
      // The new driver numbers the partition's offsets from 0 again: its first 60 records stand
      // for those read again from the committed consumer offset, at or below realtime's.
      for (Change c : before) {
        ingest.sendRaw(customers.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      }
      List<Change> after = gen.next(40);
      ingest.send(after, true);
      ingest.flushAndCommit();

      assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
      assertThat(read(ingest, ChangeLog.of(TABLE)))
          .as("the log made again, with the changes after the drop")
          .hasSize((int) after.stream().filter(c -> !c.isTombstone()).count());
      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
    }
  }

  /**
   * The table is dropped, its change log kept, and ingest reads the source topic again from its
   * start (consumer offsets reset) to make it again: the log's offsets are the dropped table's, and
   * the changes at or below them are taken for the new one (before, they were skipped as committed,
   * and the new table stayed empty). The log keeps each change once.
   */
  @Test
  void aTableMadeAgainFromItsTopicTakesTheChangesItsKeptLogHasOffsetsFor() throws Exception {
    TestTable customers = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(customers.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      List<Change> changes = new ChangeStreamGenerator(customers, 103).next(60);
      ingest.send(changes, true);
      ingest.flushAndCommit();
      int logged = read(ingest, ChangeLog.of(TABLE)).size();

      ingest.dropTable(TABLE);
      ingest.restartTasks(); // its offsets from 0 again: the topic read from its start
      for (Change c : changes) {
        ingest.sendRaw(customers.topic(), DebeziumJson.key(c, true), DebeziumJson.value(c, true));
      }
      ingest.flushAndCommit();

      assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
      assertThat(read(ingest, ChangeLog.of(TABLE))).hasSize(logged);
      assertThat(ingest.counter("lakestream.ingest.already.committed")).isZero();
    }
  }

  /**
   * The log's first append races another committer's append of the same round (a closing task's
   * commit thread that outlived its close, and the task's new owner): the log has no snapshot to
   * validate from, and the append is validated all the same, so the round is in the log once.
   */
  @Test
  void aFirstAppendThatRacesAnotherOfTheSameRoundLogsItOnce() throws Exception {
    TestTable customers = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(customers.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      List<Change> changes = new ChangeStreamGenerator(customers, 104).next(30);
      ingest.send(changes, true);
      ingest.flushOnly(); // flushed; the driver's committer not run
      List<FilesWritten> round = ingest.filesWritten.readValuesToList();
      assertThat(round).hasSize(1);
      assertThat(ingest.table(ChangeLog.of(TABLE)).currentSnapshot()).isNull();

      AtomicBoolean raced = new AtomicBoolean();
      Catalog racing = new DelegatingCatalog(ingest.catalog()) {
        @Override
        public Table loadTable(TableIdentifier id) {
          Table table = delegate.loadTable(id);
          return !id.equals(ChangeLog.of(TABLE))
              ? table
              : CommitsThrough.table(table, (ops, base, metadata) -> {
                if (raced.compareAndSet(false, true)) {
                  ChangeLogCommitter.commit(new TableManager(delegate), round);
                }
                ops.commit(base, metadata);
              });
        }
      };
      ChangeLogCommitter.commit(new TableManager(racing), round);

      assertThat(raced).isTrue();
      assertThat(read(ingest, ChangeLog.of(TABLE)))
          .hasSize((int) changes.stream().filter(c -> !c.isTombstone()).count());
    }
  }

  @Test
  void aChangeLogOfAnEarlierVersionIsMarkedAndKeptOn() throws Exception {
    TestTable customers = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(
        List.of(customers.topic()), Map.of(IngestConfig.CHANGELOG_TABLES, "inventory.customers"))) {
      // As versions before the mark created it: the same columns, no property naming its table.
      ingest
          .catalog()
          .buildTable(ChangeLog.of(TABLE), ChangeLogTables.SCHEMA)
          .withPartitionSpec(PartitionSpec.unpartitioned())
          .withProperty(TableProperties.FORMAT_VERSION, "3")
          .create();
      List<Change> changes = new ChangeStreamGenerator(customers, 98).next(60);
      ingest.send(changes, true);
      ingest.flushAndCommit();

      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
      assertThat(ingest.table(ChangeLog.of(TABLE)).properties())
          .containsEntry(ChangeLogTables.LOG_OF, "inventory.customers");
      assertThat(read(ingest, ChangeLog.of(TABLE)))
          .hasSize((int) changes.stream().filter(c -> !c.isTombstone()).count());
      assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
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
