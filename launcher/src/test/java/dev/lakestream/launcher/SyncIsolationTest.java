package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.app.Health;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.event.SpillingSerde;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.sync.commit.CycleChecks;
import dev.lakestream.sync.commit.MainCommitter;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.relocated.com.google.common.collect.Lists;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One bad record or one failing table never stops sync for the others: malformed and forged events
 * are dead-lettered, a table whose cycles fail is parked (and {@code /health} says so) while the
 * others keep syncing, a dropped table is forgotten and a re-created one starts over, and a cycle
 * too large for one Kafka record is spilled to a file.
 */
class SyncIsolationTest {

  private static final TestTable A = TestTable.wide("inventory", "customers");
  private static final TestTable B = TestTable.wide("inventory", "orders");

  @Test
  void malformedEventsAreDeadLetteredAndSyncGoesOn() throws Exception {
    try (PipelineDriver pipeline = new PipelineDriver(List.of(A.topic()))) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(A, 1);
      String topic = pipeline.syncConfig().realtimeCommitsTopic();
      pipeline.sendToSync(topic, "x", "{}".getBytes(StandardCharsets.UTF_8));
      pipeline.sendToSync(
          topic, "x", "{\"type\":\"realtime-committed\",\"v\":1}".getBytes(StandardCharsets.UTF_8));
      pipeline.sendToSync(topic, "x", "not json".getBytes(StandardCharsets.UTF_8));
      pipeline.sendToSync(
          pipeline.syncConfig().convertResultsTopic(),
          "x",
          "[1,2]".getBytes(StandardCharsets.UTF_8));

      pipeline.send(gen.snapshot(300));
      pipeline.ingestCommit();
      assertThat(pipeline.sync()).hasSize(1);
      pipeline.send(gen.next(200));
      pipeline.ingestCommit();
      assertThat(pipeline.sync()).hasSize(1);
      assertThat(pipeline.mainDiffersFromModel(A)).isNull();
      assertThat(pipeline.syncDeadLetters())
          .as("each unreadable record is dead-lettered")
          .hasSize(4);
    }
  }

  @Test
  void eventsForTablesThePipelineDoesNotManageAreRefusedAndTheTablesLeftAlone() throws Exception {
    Map<String, String> settings = new HashMap<>();
    settings.put("sync.maintenance.check.interval.ms", "1");
    settings.put("sync.maintenance.expire.main.max-snapshot-age-ms", "0");
    settings.put("sync.maintenance.expire.main.min-snapshots-to-keep", "1");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(A.topic()), settings)) {
      TableIdentifier foreign = TableIdentifier.of("finance", "ledger");
      var catalog = (SupportsNamespaces) pipeline.catalog();
      catalog.createNamespace(Namespace.of("finance"));
      Table ledger = pipeline
          .catalog()
          .createTable(
              foreign, new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
      for (int i = 0; i < 3; i++) {
        ledger.newFastAppend().commit(); // three snapshots expiry would remove
      }
      String metadataBefore = ((HasTableOperations) pipeline.table(foreign))
          .operations()
          .current()
          .metadataFileLocation();

      String topic = pipeline.syncConfig().realtimeCommitsTopic();
      pipeline.sendToSync(
          topic,
          "finance.ledger",
          new RealtimeCommitted("finance.ledger", 1, 1, 0, 1, 1, 0, 0).toJson());
      pipeline.sendToSync(
          topic,
          "finance.nothing",
          new RealtimeCommitted("finance.nothing", 1, 1, 0, 1, 1, 0, 0).toJson());
      for (int i = 0; i < 5; i++) {
        pipeline.syncBackstop();
      }

      List<TestRecord<String, byte[]>> letters = pipeline.syncDeadLetters();
      assertThat(letters).hasSize(2);
      assertThat(reason(letters.get(0))).contains("finance.ledger", "not managed by lakestream");
      assertThat(reason(letters.get(1))).contains("no table finance.nothing");
      Table after = pipeline.table(foreign);
      assertThat(((HasTableOperations) after).operations().current().metadataFileLocation())
          .as("the foreign table is not touched: no branch, no expiry")
          .isEqualTo(metadataBefore);
      assertThat(after.refs()).doesNotContainKey(Branches.REALTIME);
      assertThat(pipeline.syncHealth.status(System.currentTimeMillis()))
          .isEqualTo(Health.Status.UP);
    }
  }

  @Test
  void aTableWhoseCyclesFailIsParkedWhileTheOthersKeepSyncingAndRecoversWhenFixed()
      throws Exception {
    try (PipelineDriver pipeline = new PipelineDriver(List.of(A.topic(), B.topic()))) {
      ChangeStreamGenerator genA = new ChangeStreamGenerator(A, 2);
      ChangeStreamGenerator genB = new ChangeStreamGenerator(B, 3);
      pipeline.send(genA.snapshot(300));
      pipeline.send(genB.snapshot(300));
      pipeline.ingestCommit();
      assertThat(pipeline.sync()).hasSize(2);

      // The data files of A vanish (an operator's mistake, a bucket policy): every cycle of A that
      // converts deletes must read them, and fails.
      Path backup = Files.createTempDirectory("backup-");
      List<Path> moved = new ArrayList<>();
      for (DataFile f :
          Lists.newArrayList(pipeline.table(A).newScan().useRef(Branches.MAIN).planFiles()).stream()
              .map(t -> t.file())
              .toList()) {
        Path path = Path.of(f.location().replaceFirst("^file:", ""));
        Path saved = backup.resolve(path.getFileName());
        Files.move(path, saved);
        moved.add(path);
      }
      long mainOfA = pipeline.table(A).snapshot(Branches.MAIN).snapshotId();

      for (int round = 0; round < 3; round++) {
        pipeline.send(genA.updates(50, false));
        pipeline.send(genB.next(100));
        pipeline.ingestCommit();
        pipeline.sync();
        pipeline.syncAfter(Duration.ofSeconds(20));
        assertThat(pipeline.mainDiffersFromModel(B))
            .as("B keeps syncing, round %d", round)
            .isNull();
      }
      assertThat(pipeline.table(A).snapshot(Branches.MAIN).snapshotId())
          .as("nothing of A's failed cycles committed")
          .isEqualTo(mainOfA);
      assertThat(pipeline.syncCounter("lakestream.sync.table.failures")).isGreaterThanOrEqualTo(2);
      assertThat(pipeline.syncCounter("lakestream.sync.convert.failures"))
          .isGreaterThanOrEqualTo(2);
      long now = System.currentTimeMillis();
      assertThat(pipeline.syncHealth.status(now)).isEqualTo(Health.Status.DEGRADED);
      assertThat(pipeline.syncHealth.describe(now))
          .contains("sync table inventory.customers", "parked");

      for (Path path : moved) {
        Files.move(backup.resolve(path.getFileName()), path, StandardCopyOption.REPLACE_EXISTING);
      }
      // Parked for at most 30 minutes whatever the failures: the table recovers on its own.
      pipeline.syncAfter(Duration.ofMinutes(31));
      pipeline.syncAfter(Duration.ofSeconds(20));
      assertThat(pipeline.mainDiffersFromModel(A)).isNull();
      assertThat(pipeline.verify(A).passed()).isTrue();
      assertThat(pipeline.syncHealth.status(System.currentTimeMillis()))
          .isEqualTo(Health.Status.UP);
    }
  }

  @ParameterizedTest(name = "resolver {0}, sync checks before the table is back: {1}")
  @CsvSource({"scan,true", "scan,false", "index,true", "index,false"})
  void aDroppedTableIsForgottenAndARecreatedOneStartsOver(String resolver, boolean checkedInBetween)
      throws Exception {
    Map<String, String> settings = Map.of("sync.resolver", resolver);
    try (PipelineDriver pipeline = new PipelineDriver(List.of(A.topic(), B.topic()), settings)) {
      ChangeStreamGenerator genA = new ChangeStreamGenerator(A, 4);
      ChangeStreamGenerator genB = new ChangeStreamGenerator(B, 5);
      pipeline.send(genA.snapshot(200));
      pipeline.send(genB.snapshot(200));
      pipeline.ingestCommit();
      assertThat(pipeline.sync()).hasSize(2);
      pipeline.send(genA.updates(30, false));
      pipeline.ingestCommit();
      pipeline.sync();

      TableIdentifier id = TableIdentifier.of(A.schema(), A.name());
      pipeline.catalog().dropTable(id, false);
      // Ingest sees a drop within a second (it reads a table's metadata before each flush, a second
      // old at most); what it flushed for the table before then is dead-lettered, not committed to
      // the new one. Let that second pass, as it does between a drop and the snapshot that follows.
      Thread.sleep(1_100);
      pipeline.send(genB.next(100));
      pipeline.ingestCommit();
      pipeline.sync();
      if (checkedInBetween) {
        pipeline.syncBackstop();
        assertThat(pipeline.syncCounter("lakestream.sync.tables.forgotten")).isEqualTo(1);
      }
      assertThat(pipeline.mainDiffersFromModel(B)).isNull();

      // The source snapshots the table again (as after a change of primary key): ingest creates it
      // anew and sync mirrors it from scratch, the same keys updated and deleted again.
      pipeline.model(A).clear();
      pipeline.send(genA.snapshot(150));
      pipeline.ingestCommit();
      pipeline.ingestCommit();
      pipeline.sync();
      for (int i = 0; i < 3; i++) {
        pipeline.send(genA.next(100));
        pipeline.send(genA.updates(30, false));
        pipeline.ingestCommit();
        pipeline.sync();
        pipeline.syncBackstop();
        assertThat(pipeline.mainDiffersFromModel(A)).as("round %d", i).isNull();
        assertThat(pipeline.verify(A).passed()).isTrue();
      }
      assertThat(pipeline.syncHealth.status(System.currentTimeMillis()))
          .isEqualTo(Health.Status.UP);
    }
  }

  @Test
  void cyclesLargerThanARecordAreSpilledToFilesAndNoRecordPassesTheLimit() throws Exception {
    Map<String, String> settings = Map.of("producer.max.request.size", "8192");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(A.topic()), settings)) {
      int limit = pipeline.syncConfig().recordLimitBytes();
      assertThat(limit).isEqualTo(4096);
      ChangeStreamGenerator gen = new ChangeStreamGenerator(A, 7);
      pipeline.send(gen.snapshot(400));
      pipeline.ingestCommit();
      pipeline.sync();
      for (int i = 0; i < 6; i++) {
        for (int c = 0; c < 4; c++) {
          pipeline.send(gen.next(80));
          pipeline.ingestCommit();
        }
        assertThat(pipeline.sync()).hasSize(1);
        assertThat(pipeline.mainDiffersFromModel(A)).as("cycle %d", i).isNull();
      }
      for (String topic : List.of(
          pipeline.syncConfig().convertTasksTopic(),
          pipeline.syncConfig().convertResultsTopic(),
          "sync-" + "sync-cycles-changelog",
          "sync-sync-results-changelog")) {
        for (TestRecord<String, byte[]> r : pipeline.syncRecords(topic)) {
          assertThat(r.value() == null ? 0 : r.value().length)
              .as("record on %s", topic)
              .isLessThanOrEqualTo(limit);
        }
      }
      Path spill =
          Path.of(pipeline.table(A).location().replaceFirst("^file:", ""), SpillingSerde.FOLDER);
      try (Stream<Path> files = Files.list(spill)) {
        assertThat(files.count()).as("plans and tasks spilled").isPositive();
      }
      assertThat(pipeline.verify(A).passed()).isTrue();
    }
  }

  @Test
  void forgedConvertResultsAreRefusedAndNothingOfThemIsCommitted() throws Exception {
    try (PipelineDriver pipeline = new PipelineDriver(List.of(A.topic()))) {
      rowsThenUpdates(pipeline, 8);
      Table table = pipeline.table(A);
      var specs = table.specs();
      var spec = table.spec();
      Map<String, DeleteFile> dvs =
          BranchFiles.deletionVectors(table, table.snapshot(Branches.MAIN));
      assertThat(dvs).as("the updates left deletion vectors on main").isNotEmpty();
      List<String> dataFiles = new ArrayList<>(
          BranchFiles.liveDataFiles(table, table.snapshot(Branches.MAIN)).keySet());
      var someDv = dvs.values().iterator().next();
      String dvOf = someDv.referencedDataFile();
      String other = dataFiles.stream().filter(p -> !p.equals(dvOf)).findFirst().orElseThrow();
      long mainBefore = table.snapshot(Branches.MAIN).snapshotId();
      var plan = new CyclePlan(
          A.schema() + "." + A.name(),
          "forged",
          mainBefore,
          -1,
          0,
          List.of(),
          List.of(),
          List.of(),
          List.of(other),
          1,
          0,
          false,
          System.currentTimeMillis());
      var dvJson = (ObjectNode) DeleteFileJson.of(someDv, specs).json();

      List<ConvertResult> forgeries = List.of(
          // a vector of another data file
          result(plan, other, dvJson, 0),
          // a vector of the right file, stored outside the table
          result(
              plan,
              other,
              dvJson
                  .deepCopy()
                  .put("file-path", "/tmp/elsewhere.puffin")
                  .put("referenced-data-file", other),
              0),
          // a result for a file the plan never sent out
          result(plan, dvOf, dvJson, 1));
      for (var forged : forgeries) {
        assertThatThrownBy(() -> MainCommitter.commit(
                pipeline.table(A), plan, List.of(forged), System.currentTimeMillis()))
            .isInstanceOf(CycleChecks.Refused.class);
      }
      assertThat(pipeline.table(A).snapshot(Branches.MAIN).snapshotId()).isEqualTo(mainBefore);
      assertThat(pipeline.mainDiffersFromModel(A)).isNull();
    }
  }

  /**
   * A cycle resumed after its converters' files were taken by orphan-file removal (it waited longer
   * than their age): committed, main would reference a missing file, which no engine can read.
   */
  @Test
  void aCycleWhoseVectorFilesAreGoneIsPlannedAgainNotCommitted() throws Exception {
    try (PipelineDriver pipeline = new PipelineDriver(List.of(A.topic()))) {
      rowsThenUpdates(pipeline, 9);
      Table table = pipeline.table(A);
      Map<String, DeleteFile> dvs =
          BranchFiles.deletionVectors(table, table.snapshot(Branches.MAIN));
      assertThat(dvs).as("the updates left deletion vectors on main").isNotEmpty();
      DeleteFile current = dvs.values().iterator().next();
      String dataFile = current.referencedDataFile();
      long mainBefore = table.snapshot(Branches.MAIN).snapshotId();
      var plan = new CyclePlan(
          A.schema() + "." + A.name(),
          "resumed",
          mainBefore,
          -1,
          0,
          List.of(),
          List.of(),
          List.of(),
          List.of(dataFile),
          1,
          0,
          false,
          System.currentTimeMillis() - Duration.ofDays(8).toMillis()); // resumed a week later
      String gone = table.location() + "/data/gone-" + System.nanoTime() + ".puffin";
      var currentJson = DeleteFileJson.of(current, table.specs());
      var newDv = ((ObjectNode) currentJson.json()).deepCopy().put("file-path", gone);
      var result = new ConvertResult(
          plan.table(),
          plan.cycleId(),
          dataFile,
          new DeleteFileJson(newDv),
          List.of(currentJson),
          1,
          0,
          0);

      var outcome = MainCommitter.commit(
          pipeline.table(A), plan, List.of(result), System.currentTimeMillis());

      assertThat(outcome).isEqualTo(new MainCommitter.FilesGone(List.of(gone)));
      assertThat(pipeline.table(A).snapshot(Branches.MAIN).snapshotId()).isEqualTo(mainBefore);
      assertThat(pipeline.mainDiffersFromModel(A)).isNull();
      assertThat(pipeline.verify(A).passed()).isTrue();
    }
  }

  /**
   * Sync stopped after its commit to main landed and before its Kafka transaction (the
   * announcement with it) committed: the cycle, resumed, finds itself on main and announces that
   * commit, read back from the snapshot, so a reader of main-commits misses none.
   */
  @Test
  void aCycleFoundCommittedAlreadyIsAnnouncedAgain() throws Exception {
    try (PipelineDriver pipeline = new PipelineDriver(List.of(A.topic()))) {
      List<MainCommitted> announced = rowsThenUpdates(pipeline, 10);
      assertThat(announced).hasSize(1);
      MainCommitted first = announced.get(0);
      assertThat(first.dvsAdded()).as("the updates converted").isPositive();
      var resumed = new CyclePlan(
          first.table(),
          "resumed",
          -1,
          first.realtimeSnapshotId(),
          first.maxSourceTsMs(),
          List.of(),
          List.of(),
          List.of(),
          List.of(),
          1,
          0,
          false,
          System.currentTimeMillis());

      var outcome =
          MainCommitter.commit(pipeline.table(A), resumed, List.of(), System.currentTimeMillis());

      assertThat(outcome).isInstanceOf(MainCommitter.AlreadyCommitted.class);
      MainCommitted again = ((MainCommitter.AlreadyCommitted) outcome).event();
      Snapshot head = pipeline.table(A).snapshot(Branches.MAIN);
      assertThat(again)
          .as("the first announcement, but for the time: the snapshot's")
          .isEqualTo(new MainCommitted(
              first.table(),
              first.mainSnapshotId(),
              first.realtimeSnapshotId(),
              first.maxSourceTsMs(),
              first.dataFilesAdded(),
              first.dataFilesRemoved(),
              first.dvsAdded(),
              first.dvsRemoved(),
              first.keysConverted(),
              head.timestampMillis()));
      assertThat(head.snapshotId()).as("nothing committed again").isEqualTo(first.mainSnapshotId());
    }
  }

  /**
   * Table A's 300 rows, then 40 updates of them, each synced: main holds deletion vectors. Returns
   * the second cycle's announcements.
   */
  private static List<MainCommitted> rowsThenUpdates(PipelineDriver pipeline, long seed)
      throws Exception {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(A, seed);
    pipeline.send(gen.snapshot(300));
    pipeline.ingestCommit();
    pipeline.sync();
    pipeline.send(gen.updates(40, false));
    pipeline.ingestCommit();
    return pipeline.sync();
  }

  private static ConvertResult result(CyclePlan plan, String dataFile, JsonNode dv, int keys) {
    return new ConvertResult(
        plan.table(), plan.cycleId(), dataFile, new DeleteFileJson(dv), List.of(), keys, 0, 0);
  }

  private static String reason(TestRecord<String, byte[]> record) {
    Header header = record.headers().lastHeader(DeadLetters.REASON);
    return header == null ? "" : new String(header.value(), StandardCharsets.UTF_8);
  }
}
