package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.metrics.Hops;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.ColumnType;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TestTable;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ingest topology against a real local warehouse: after every flush and commit, the realtime
 * branch read back with Iceberg's generic reader equals the model of the source table.
 */
class IngestTopologyTest {

  /** Longer than the flush trusts its cached table ({@code Admission.FRESH_MS}). */
  private static final long FRESH_WAIT_MS = 1_100;

  private static final int CHANGES_PER_SEED = 5_000;

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {11, 22, 33})
  void realtimeEqualsModelAfterEveryCommitForRandomWorkloads(long seed) throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed);
      Random random = new Random(seed);
      ingest.send(gen.snapshot(300), true);
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      int sent = 0;
      int rounds = 0;
      while (sent < CHANGES_PER_SEED) {
        List<Change> batch = gen.next(1 + random.nextInt(400));
        ingest.send(batch, true);
        sent += batch.size();
        ingest.flushAndCommit();
        rounds++;
        assertThat(ingest.realtimeDiffersFromModel(table))
            .as("after round %d (%d changes)", rounds, sent)
            .isNull();
      }
      assertThat(ingest.realtimeSnapshots(table)).hasSizeGreaterThanOrEqualTo(rounds + 1);
      assertThat(ingest.model(table).size()).isGreaterThan(500);
    }
  }

  /**
   * A punctuation flushes due batches, oldest first, until its round's time is spent (it holds the
   * task's transaction open): with no time at all, one batch per punctuation, and the rest at the
   * next ones, so hundreds of tables due at once against a slow store do not outlast the
   * transaction's timeout at every attempt.
   */
  @Test
  void aPunctuationFlushesDueBatchesOldestFirstUntilItsRoundIsSpent() throws Exception {
    List<TestTable> tables = List.of(
        TestTable.plain("app", "first"),
        TestTable.plain("app", "second"),
        TestTable.plain("app", "third"));
    try (IngestDriver ingest = new IngestDriver(
        tables.stream().map(TestTable::topic).toList(),
        Map.of(IngestConfig.FLUSH_ROUND_BUDGET_MS, "0"))) {
      for (TestTable table : tables) {
        ingest.send(new ChangeStreamGenerator(table, 61).snapshot(30), true);
        ingest.advance(10); // opened one after another
      }
      ingest.flushOnly();
      List<String> flushed = new ArrayList<>();
      ingest.filesWritten.readValuesToList().forEach(f -> flushed.add(f.table()));
      assertThat(flushed).as("batches flushed by the first due punctuation").hasSize(1);
      for (int round = 0; round < 5 && flushed.size() < tables.size(); round++) {
        ingest.advance(100);
        ingest.filesWritten.readValuesToList().forEach(f -> flushed.add(f.table()));
      }
      assertThat(flushed)
          .as("the tables' batches, one per punctuation, oldest first")
          .containsExactly("app.first", "app.second", "app.third");
      assertThat(ingest.counter("lakestream.ingest.flushes.next.round")).isEqualTo(2 + 1);
      ingest.flushAndCommit();
      for (TestTable table : tables) {
        assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      }
    }
  }

  @Test
  void compositeKeysWithoutEmbeddedSchemasOnAPlainTable() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 44);
      for (int round = 0; round < 10; round++) {
        ingest.send(gen.next(500), false);
        ingest.flushAndCommit();
        assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      }
    }
  }

  @Test
  void compositePrimaryKeyBecomesTheIdentifierFields() throws Exception {
    TestTable table = TestTable.compositeKey("sales", "orders");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 55);
      for (int round = 0; round < 10; round++) {
        ingest.send(gen.next(500), true);
        ingest.flushAndCommit();
        assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      }
      assertThat(ingest.table(table).schema().identifierFieldNames())
          .containsExactlyInAnyOrder("tenant", "id");
    }
  }

  @Test
  void twoPendingBatchesOfOnePartitionCommitAsTwoSnapshots() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest =
        new IngestDriver(List.of(table.topic()), Map.of(IngestConfig.FLUSH_MAX_ROWS, "2"))) {
      ChangeStreamGenerator gen =
          new ChangeStreamGenerator(table, 66, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      List<Change> inserts = gen.next(2);
      ingest.send(inserts, true);
      // The same key again, with new values: a second batch of the same partition.
      Map<String, Object> updated = new LinkedHashMap<>(inserts.get(0).after());
      updated.put("name", "second version");
      Change other = gen.next(1).get(0);
      Change update = new Change(
          'u',
          table,
          inserts.get(0).key(),
          inserts.get(0).after(),
          updated,
          other.sourceTsMs() + 1,
          other.lsn() + 1);
      ingest.send(List.of(other, update), true);
      assertThat(ingest.filesWritten.readValuesToList())
          .as("two batches flushed before any commit")
          .hasSize(2);
      int before = ingest.realtimeSnapshots(table).size();

      ingest.commitOnly();

      List<Snapshot> snapshots = ingest.realtimeSnapshots(table);
      assertThat(snapshots).hasSize(before + 2);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.realtimeRows(table).get(inserts.get(0).key()).get("name"))
          .isEqualTo("second version");
    }
  }

  @Test
  void everyHopOfAChangeThroughIngestIsTimed() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen =
          new ChangeStreamGenerator(table, 67, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      List<Change> changes = gen.next(20); // inserts only: no tombstones
      // Each record reaches Kafka 250 ms after its source commit.
      changes.forEach(c -> ingest.sendAt(c, c.sourceTsMs() + 250));
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();

      Timer toKafka = hop(ingest, Hop.SOURCE_TO_KAFKA);
      assertThat(toKafka.count()).as("changes timed from source to Kafka").isEqualTo(20);
      assertThat(toKafka.max(TimeUnit.MILLISECONDS)).isEqualTo(250);
      assertThat(toKafka.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(20 * 250);
      assertThat(hop(ingest, Hop.KAFKA_TO_INGEST).count())
          .as("changes timed from Kafka to ingest")
          .isEqualTo(20);
      // One batch, flushed when its flush interval passed, committed one commit interval later.
      Timer buffered = hop(ingest, Hop.BUFFERED);
      assertThat(buffered.count()).isEqualTo(1);
      assertThat(buffered.max(TimeUnit.MILLISECONDS)).isEqualTo(IngestDriver.FLUSH_INTERVAL_MS);
      // The commit interval, and the commit itself.
      Timer toRealtime = hop(ingest, Hop.FLUSH_TO_REALTIME);
      assertThat(toRealtime.count()).isEqualTo(1);
      assertThat(toRealtime.max(TimeUnit.MILLISECONDS))
          .isGreaterThanOrEqualTo(IngestDriver.COMMIT_INTERVAL_MS);
    }
  }

  private static Timer hop(IngestDriver ingest, Hop hop) {
    return ingest.meters.get(Hops.METER).tag("hop", hop.tag()).timer();
  }

  @Test
  void batchesOfTwoTablesCommitToTheirOwnTables() throws Exception {
    TestTable customers = TestTable.wide("inventory", "customers");
    TestTable orders = TestTable.compositeKey("inventory", "orders");
    try (IngestDriver ingest =
        new IngestDriver(List.of(customers.topic(), orders.topic()), Map.of())) {
      ChangeStreamGenerator a = new ChangeStreamGenerator(customers, 77);
      ChangeStreamGenerator b = new ChangeStreamGenerator(orders, 88);
      for (int round = 0; round < 5; round++) {
        ingest.send(a.next(200), true);
        ingest.send(b.next(200), true);
        ingest.flushAndCommit();
        assertThat(ingest.realtimeDiffersFromModel(customers)).isNull();
        assertThat(ingest.realtimeDiffersFromModel(orders)).isNull();
      }
    }
  }

  @Test
  void redeliveredBatchAfterIcebergCommitIsSkipped() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 99);
      ingest.send(gen.next(300), true);
      ingest.flushAndCommit();
      List<TestRecord<String, FilesWritten>> delivered = ingest.filesWritten.readRecordsToList();
      assertThat(delivered).hasSize(1);
      ingest.realtimeCommits.readRecordsToList();
      List<Snapshot> before = ingest.realtimeSnapshots(table);

      // What a crash between the Iceberg commit and the Kafka commit amounts to: the committer's
      // input is delivered again.
      ingest.filesWrittenIn.pipeInput(delivered.get(0));
      ingest.commitOnly();

      assertThat(ingest.realtimeSnapshots(table)).isEqualTo(before);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.counter("lakestream.realtime.replays.skipped")).isEqualTo(1);
      List<RealtimeCommitted> announced = ingest.realtimeCommits.readValuesToList();
      assertThat(announced)
          .extracting(RealtimeCommitted::snapshotId)
          .as("the lost announcement is made again for the current snapshot")
          .containsExactly(before.get(before.size() - 1).snapshotId());
    }
  }

  @Test
  void eachCommitRecordsSourceOffsetsAndIsAnnounced() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 5);
      List<Change> first = gen.next(100);
      ingest.send(first, true);
      ingest.flushAndCommit();
      List<Change> second = gen.next(100);
      ingest.send(second, true);
      ingest.flushAndCommit();

      List<RealtimeCommitted> announced = ingest.realtimeCommits.readValuesToList();
      List<Snapshot> snapshots = ingest.realtimeSnapshots(table);
      assertThat(announced).hasSize(2);
      assertThat(announced)
          .extracting(RealtimeCommitted::snapshotId)
          .containsExactly(
              snapshots.get(snapshots.size() - 2).snapshotId(),
              snapshots.get(snapshots.size() - 1).snapshotId());
      RealtimeCommitted last = announced.get(1);
      assertThat(last.table()).isEqualTo("app.accounts");
      assertThat(last.sequenceNumber())
          .isEqualTo(snapshots.get(snapshots.size() - 1).sequenceNumber());
      assertThat(last.maxSourceTsMs())
          .isEqualTo(second.stream().mapToLong(Change::sourceTsMs).max().orElseThrow());
      long totalRecords = first.size() + second.size();
      assertThat(SourceOffsets.of(ingest.table(table), "realtime").last(table.topic(), 0))
          .isEqualTo(totalRecords - 1);
    }
  }

  @Test
  void newSourceColumnsAreAddedToTheTable() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 6);
      ingest.send(gen.next(200), true);
      ingest.flushAndCommit();
      TestTable altered = table.withColumn("signup", ColumnType.DATE);
      gen.alter(altered);
      ingest.send(gen.next(200), true);
      ingest.flushAndCommit();
      assertThat(ingest.table(table).schema().findField("signup").type())
          .isEqualTo(Types.DateType.get());
      assertThat(ingest.realtimeDiffersFromModel(altered)).isNull();
    }
  }

  @Test
  void aColumnAddedWithinABatchIsWrittenForTheChangesAdmittedBeforeIt() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 9);
      ingest.send(gen.next(150), true);
      TestTable altered = table.withColumn("signup", ColumnType.DATE);
      gen.alter(altered);
      ingest.send(gen.next(150), true);
      ingest.flushAndCommit();
      assertThat(ingest.table(table).schema().findField("signup")).isNotNull();
      assertThat(ingest.realtimeDiffersFromModel(altered)).isNull();
    }
  }

  @Test
  void aTableDroppedAndCreatedAgainWithOtherColumnsGetsItsRowsInItsOwnLayout() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 10);
      ingest.send(gen.snapshot(100), true);
      ingest.flushAndCommit();
      TableIdentifier id = TableIdentifier.of(table.schema(), table.name());
      int firstSchema = ingest.table(id).schema().schemaId();
      ingest.dropTable(id);

      // The same name again, created from the new records' shape: its first schema has the id the
      // dropped table's had, with another column.
      TestTable altered = table.withColumn("signup", ColumnType.DATE);
      gen.alter(altered);
      List<Change> inserts = gen.snapshot(100);
      ingest.send(inserts, true);
      ingest.flushAndCommit();

      Table recreated = ingest.table(id);
      assertThat(recreated.schema().schemaId()).isEqualTo(firstSchema);
      assertThat(recreated.schema().findField("signup")).isNotNull();
      Map<List<Object>, Map<String, Object>> expected = new LinkedHashMap<>();
      inserts.forEach(c -> expected.put(c.key(), c.after()));
      assertThat(TableComparison.differences(expected, ingest.realtimeRows(altered)))
          .isNull();
    }
  }

  /**
   * Another instance drops the table and creates it again from an older shape while a batch waits
   * whose earlier changes have a column its last ones lack (the source dropped it): the flush gives
   * the new table every column of the batch, so no value of those changes is lost.
   */
  @Test
  void aTableCreatedAgainFromAnOlderShapeGetsEveryColumnOfTheWaitingBatch() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 12);
      ingest.send(gen.snapshot(50), true);
      ingest.flushAndCommit();
      TableIdentifier id = TableIdentifier.of(table.schema(), table.name());
      Types.StructType older = ingest.table(id).schema().asStruct();

      TestTable altered = table.withColumn("signup", ColumnType.DATE);
      gen.alter(altered);
      List<Change> withSignup = gen.next(40);
      ingest.send(withSignup, true);
      gen.alter(table); // the source drops the column again
      List<Change> withoutSignup = gen.next(40);
      ingest.send(withoutSignup, true);
      ingest.dropTable(id);
      new TableManager(ingest.catalog()).ensure(id, older, table.key(), "another instance");
      Thread.sleep(FRESH_WAIT_MS); // past the flush's one second of trust in its cached table
      ingest.flushAndCommit();

      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
      Map<List<Object>, Change> last = new LinkedHashMap<>();
      for (Change c : withSignup) {
        last.put(c.key(), c);
      }
      for (Change c : withoutSignup) {
        last.remove(c.key());
      }
      Map<List<Object>, Map<String, Object>> rows =
          TableRows.byKey(TableRows.read(ingest.table(id), Branches.REALTIME), table.key());
      int checked = 0;
      for (Map.Entry<List<Object>, Change> e : last.entrySet()) {
        Change c = e.getValue();
        if (c.after() != null && !c.isTombstone()) {
          assertThat(rows.get(e.getKey())).as("row %s", e.getKey()).isNotNull();
          assertThat(rows.get(e.getKey()).get("signup"))
              .as("signup of %s", e.getKey())
              .isEqualTo(c.after().get("signup"));
          checked++;
        }
      }
      assertThat(checked).as("rows last changed with the column").isGreaterThan(5);
    }
  }

  @Test
  void deleteThenReinsertOfOneKeyInOneBatchLeavesTheReinsertedRow() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen =
          new ChangeStreamGenerator(table, 8, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      Change insert = gen.next(1).get(0);
      ingest.send(List.of(insert), true);
      ingest.flushAndCommit();
      Map<String, Object> reinserted = new LinkedHashMap<>(insert.after());
      reinserted.put("name", "back again");
      ingest.send(
          List.of(
              new Change(
                  'd',
                  table,
                  insert.key(),
                  insert.after(),
                  null,
                  insert.sourceTsMs() + 1,
                  insert.lsn() + 1),
              new Change(
                  't', table, insert.key(), null, null, insert.sourceTsMs() + 1, insert.lsn() + 1),
              new Change(
                  'c',
                  table,
                  insert.key(),
                  null,
                  reinserted,
                  insert.sourceTsMs() + 2,
                  insert.lsn() + 2)),
          true);
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      assertThat(ingest.realtimeRows(table).get(insert.key()).get("name")).isEqualTo("back again");
    }
  }

  @Test
  void batchReachingMaxBytesFlushesWithoutWaitingForTheInterval() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (IngestDriver ingest =
        new IngestDriver(List.of(table.topic()), Map.of(IngestConfig.FLUSH_MAX_BYTES, "20000"))) {
      ChangeStreamGenerator gen =
          new ChangeStreamGenerator(table, 9, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      ingest.send(gen.next(100), true);
      List<FilesWritten> flushed = ingest.filesWritten.readValuesToList();
      assertThat(flushed).isNotEmpty();
      assertThat(flushed).allSatisfy(batch -> assertThat(batch.changes()).isLessThan(100));
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  /**
   * The open batches are on the heap: when a task's batches together hold more than {@code
   * ingest.buffer.max.bytes}, its largest batch is flushed before its interval, each batch staying
   * below its own limits; the small batch of another table waits for its interval.
   */
  @Test
  void aTasksBatchesAboveTheBufferLimitFlushTheLargestEarly() throws Exception {
    TestTable small = TestTable.plain("app", "few");
    TestTable large = TestTable.plain("app", "many");
    try (IngestDriver ingest = new IngestDriver(
        List.of(small.topic(), large.topic()), Map.of(IngestConfig.BUFFER_MAX_BYTES, "30000"))) {
      ChangeStreamGenerator few =
          new ChangeStreamGenerator(small, 12, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      ChangeStreamGenerator many =
          new ChangeStreamGenerator(large, 13, new ChangeStreamGenerator.Mix(1, 0, 0, 0, 0, 0));
      ingest.send(few.next(5), true);
      ingest.send(many.next(100), true);
      List<FilesWritten> early = ingest.filesWritten.readValuesToList();
      assertThat(early).as("batches flushed before the interval").isNotEmpty();
      assertThat(early).allSatisfy(batch -> {
        assertThat(batch.sourceTopic()).isEqualTo(large.topic());
        assertThat(batch.changes()).isLessThan(100);
      });
      assertThat(ingest.meters.counter("lakestream.ingest.flushes.buffer.full").count())
          .isEqualTo(early.size());
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(small)).isNull();
      assertThat(ingest.realtimeDiffersFromModel(large)).isNull();
    }
  }
}
