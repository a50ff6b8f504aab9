package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.ingest.buffer.BatchWriter;
import dev.lakestream.sync.convert.FileConverter;
import dev.lakestream.sync.diff.Differ;
import dev.lakestream.sync.maintenance.Maintenance;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.maintenance.OrphanFiles;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.sync.maintenance.RetentionPolicy;
import dev.lakestream.sync.maintenance.SnapshotExpiry;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TestTable;
import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.TypeUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Maintenance on a running pipeline (ingest and sync chained over a real local warehouse): realtime
 * compaction while ingest commits, its mirror on main with bounded reconversion, snapshot expiry
 * (including the expiry of every snapshot sync has not mirrored), orphan-file removal, and a long
 * randomized run with the policies on. After every sync cycle main equals the model of the source
 * and the invariants hold.
 */
class MaintenanceTest {

  private static final Map<String, String> MANUAL = Map.of(MaintenanceConfig.ENABLED, "false");

  @Test
  void compactionWhileIngestCommitsIsMirroredWithBoundedReconversion() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 41);
      int cycle = 0;
      pipeline.send(gen.snapshot(800));
      pipeline.ingestCommit();
      pipeline.sync();
      assertCycle(pipeline, table, ++cycle);
      for (int i = 0; i < 5; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
        pipeline.sync();
        assertCycle(pipeline, table, ++cycle);
      }

      RealtimeCompaction compaction =
          RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20);
      // Ingest goes on committing updates and deletes of the rows being compacted; sync mirrors
      // some of them before the compaction commits (those are converted again afterwards).
      for (int i = 0; i < 4; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
        if (i % 2 == 0) {
          assertThat(pipeline.sync()).hasSize(1);
          assertCycle(pipeline, table, ++cycle);
        }
      }
      RealtimeCompaction.Result result = compaction.commit();
      assertThat(result.dataFilesOut()).isEqualTo(1);
      assertThat(result.equalityDeletesDropped()).isGreaterThan(0);
      assertThat(pipeline.rows(table, Branches.REALTIME))
          .as("realtime after the compaction")
          .isEqualTo(pipeline.model(table).rows());
      long deletesDuring = equalityDeletesAdded(
          pipeline.table(table), compaction.start().snapshotId(), result.snapshotId());

      List<MainCommitted> mirrored = pipeline.sync();
      assertThat(mirrored).hasSize(1);
      assertThat(mirrored.get(0).dataFilesRemoved()).isEqualTo(result.dataFilesIn());
      assertCycle(pipeline, table, ++cycle);
      Snapshot mirror = pipeline.table(table).snapshot(Branches.MAIN);
      long reconverted = Long.parseLong(mirror.summary().get(SummaryKeys.RECONVERTED_DELETES));
      assertThat(reconverted)
          .as("delete files converted again against the compacted file")
          .isGreaterThan(0)
          .isLessThanOrEqualTo(deletesDuring);
      assertThat(pipeline.syncCounter("lakestream.sync.reconverted.deletes"))
          .isEqualTo(reconverted);

      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
        pipeline.sync();
        assertCycle(pipeline, table, ++cycle);
        assertThat(pipeline.table(table).snapshot(Branches.MAIN).summary())
            .containsEntry(SummaryKeys.RECONVERTED_DELETES, "0");
      }
      assertThat(pipeline.syncCounter("lakestream.sync.reconverted.deletes"))
          .as("once per compaction")
          .isEqualTo(reconverted);
      assertThat(ingestCounter(pipeline, "lakestream.realtime.commit.retries"))
          .as("ingest commits that conflicted")
          .isZero();
    }
  }

  @Test
  void deletesLandingWhileCompactionRunsAreAppliedOnMainToTheCompactedFile() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 42);
      pipeline.send(gen.snapshot(400));
      pipeline.ingestCommit();
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
      }
      // One more batch: with it, the file the compaction leaves in place holds neither key deleted
      // below (the deletion vector on the compacted file, checked at the end, counts both).
      pipeline.send(gen.snapshot(1));
      pipeline.ingestCommit();
      pipeline.sync();
      RealtimeCompaction compaction =
          RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20);

      List<Change> mirroredFirst = gen.deleteOne();
      pipeline.send(mirroredFirst);
      pipeline.ingestCommit();
      pipeline.sync(); // main deletes it from the old file
      List<Change> afterwards = gen.deleteOne();
      pipeline.send(afterwards);
      pipeline.ingestCommit();
      compaction.commit();
      assertThat(pipeline.sync()).hasSize(1);

      assertThat(pipeline.rows(table, Branches.REALTIME))
          .as("realtime keeps the equality deletes that landed during the compaction")
          .doesNotContainKey(mirroredFirst.get(0).key())
          .doesNotContainKey(afterwards.get(0).key());
      Map<List<Object>, Map<String, Object>> main = pipeline.rows(table, Branches.MAIN);
      assertThat(main)
          .doesNotContainKey(mirroredFirst.get(0).key())
          .doesNotContainKey(afterwards.get(0).key());
      assertCycle(pipeline, table, 3);
      Table t = pipeline.table(table);
      Snapshot head = t.snapshot(Branches.MAIN);
      DataFile compacted = BranchFiles.liveDataFiles(t, head).values().stream()
          .filter(f -> f.dataSequenceNumber() == compaction.start().sequenceNumber())
          .findFirst()
          .orElseThrow();
      DeleteFile dv = BranchFiles.deletionVectors(t, head).get(compacted.location());
      assertThat(dv).as("a deletion vector on the compacted file").isNotNull();
      assertThat(dv.recordCount()).isGreaterThanOrEqualTo(2);
    }
  }

  @Test
  void syncConvergesAfterEveryRealtimeSnapshotAfterItsWatermarkExpired() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 43);
      pipeline.send(gen.snapshot(500));
      pipeline.ingestCommit();
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      assertCycle(pipeline, table, 3);
      long watermark = BranchFiles.watermark(pipeline.table(table)).orElseThrow();
      // Unmirrored: commits, a compaction among them, more commits; sync's events are dropped.
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
      }
      RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20).commit();
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
      }
      pipeline.dropRealtimeEvents();

      // Another tool expires every snapshot that no branch points at.
      Table t = pipeline.table(table);
      Set<Long> heads = new HashSet<>();
      t.refs().values().forEach(r -> heads.add(r.snapshotId()));
      ExpireSnapshots expiry =
          t.expireSnapshots().expireOlderThan(Long.MIN_VALUE).cleanExpiredFiles(true);
      int expired = 0;
      for (Snapshot s : t.snapshots()) {
        if (!heads.contains(s.snapshotId())) {
          expiry.expireSnapshotId(s.snapshotId());
          expired++;
        }
      }
      expiry.commit();
      t = pipeline.table(table);
      assertThat(t.snapshot(watermark)).as("the watermark snapshot").isNull();
      assertThat(expired).isGreaterThan(6);

      List<MainCommitted> committed = pipeline.syncBackstop();
      assertThat(committed).hasSize(1);
      assertThat(pipeline.table(table).snapshot(Branches.MAIN).summary())
          .containsEntry(SummaryKeys.LIVE_SET_DIFF, "true");
      assertCycle(pipeline, table, 4);
      assertThat(pipeline.syncCounter("lakestream.sync.live.set.diffs")).isEqualTo(1);

      for (int i = 0; i < 2; i++) {
        pipeline.send(gen.next(150));
        pipeline.ingestCommit();
        assertThat(pipeline.sync()).hasSize(1);
        assertThat(pipeline.table(table).snapshot(Branches.MAIN).summary())
            .doesNotContainKey(SummaryKeys.LIVE_SET_DIFF);
        assertCycle(pipeline, table, 5 + i);
      }
    }
  }

  @Test
  void retentionExpiresOldSnapshotsButKeepsWhatIngestAndSyncRead() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 44);
      for (int i = 0; i < 6; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
      }
      RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20)
          .commit(); // realtime's head carries no offsets
      Table t = pipeline.table(table);
      long watermark = BranchFiles.watermark(t).orElseThrow();
      int before = snapshotCount(t);

      RetentionPolicy keepOne = new RetentionPolicy(0, 1);
      SnapshotExpiry.Result result =
          SnapshotExpiry.run(t, keepOne, keepOne, System.currentTimeMillis() + 1);

      t = pipeline.table(table);
      assertThat(result.total()).isGreaterThan(0);
      assertThat(snapshotCount(t)).isEqualTo(before - result.total());
      assertThat(t.snapshot(watermark)).as("main's watermark on realtime").isNotNull();
      assertThat(TableRows.snapshots(t, Branches.REALTIME).stream()
              .anyMatch(s -> s.summary().containsKey(SummaryKeys.SOURCE_OFFSETS)))
          .as("committed offsets")
          .isTrue();
      assertThat(TableRows.snapshots(t, Branches.MAIN))
          .as("main: the head, which carries the watermark")
          .hasSize(1);
      assertFilesExist(t);

      assertThat(pipeline.sync()).hasSize(1);
      assertThat(pipeline.table(table).snapshot(Branches.MAIN).summary())
          .doesNotContainKey(SummaryKeys.LIVE_SET_DIFF);
      assertCycle(pipeline, table, 7);
      pipeline.send(gen.next(100));
      pipeline.ingestCommit();
      pipeline.sync();
      assertCycle(pipeline, table, 8);
    }
  }

  /**
   * A table sync has not mirrored yet (no watermark: sync started after ingest built a backlog, or
   * its first cycle is under way) keeps every realtime snapshot whatever the retention, and the
   * files they hold: the first cycle adds files by reference from them.
   */
  @Test
  void retentionKeepsEveryRealtimeSnapshotOfATableSyncHasNotMirroredYet() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 45);
      for (int i = 0; i < 4; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
      }
      RealtimeCompaction.prepareAll(pipeline.table(table), 128L << 20).commit();
      Table t = pipeline.table(table);
      assertThat(BranchFiles.watermark(t)).isEmpty();
      int realtimeSnapshots = TableRows.snapshots(t, Branches.REALTIME).size();

      RetentionPolicy keepOne = new RetentionPolicy(0, 1);
      SnapshotExpiry.Result result =
          SnapshotExpiry.run(t, keepOne, keepOne, System.currentTimeMillis() + 1);

      t = pipeline.table(table);
      assertThat(result.realtimeExpired()).isZero();
      assertThat(TableRows.snapshots(t, Branches.REALTIME)).hasSize(realtimeSnapshots);
      assertFilesExist(t);
      assertThat(pipeline.sync()).isNotEmpty();
      assertThat(pipeline.table(table).snapshot(Branches.MAIN).summary())
          .doesNotContainKey(SummaryKeys.LIVE_SET_DIFF);
      assertThat(pipeline.mainDiffersFromModel(table)).isNull();
    }
  }

  @Test
  void orphanRemovalNeverListsOutsideTheTableLocationWhateverItsPropertiesSay() throws Exception {
    TestTable a = TestTable.wide("inventory", "customers");
    TestTable b = TestTable.wide("inventory", "orders");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(a.topic(), b.topic()), MANUAL)) {
      pipeline.send(new ChangeStreamGenerator(a, 46).snapshot(200));
      pipeline.send(new ChangeStreamGenerator(b, 47).snapshot(200));
      pipeline.ingestCommit();
      pipeline.sync();
      // Anyone who may set a table property points a's data and metadata paths at the warehouse.
      String root = pipeline.warehouseDir().toString();
      pipeline
          .table(a)
          .updateProperties()
          .set(TableProperties.WRITE_DATA_LOCATION, root)
          .set(TableProperties.WRITE_METADATA_LOCATION, root)
          .commit();
      Table tb = pipeline.table(b);
      OrphanFiles.Result removed =
          OrphanFiles.remove(pipeline.table(a), System.currentTimeMillis() + 1);

      assertThat(removed.removedFiles())
          .allSatisfy(path -> assertThat(path).startsWith(pipeline.table(a).location()));
      assertFilesExist(pipeline.table(b));
      assertThat(pipeline.rows(b, Branches.MAIN)).isEqualTo(pipeline.model(b).rows());
      assertThat(tb.location()).isEqualTo(pipeline.table(b).location());
    }
  }

  @Test
  void orphanRemovalIsOffUnlessTurnedOn() throws Exception {
    assertThat(MaintenanceConfig.from(new PipelineConfig(Map.of())).orphansEnabled())
        .isFalse();
    assertThat(MaintenanceConfig.from(
                new PipelineConfig(Map.of(MaintenanceConfig.ORPHANS_ENABLED, "true")))
            .orphansEnabled())
        .isTrue();
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()))) {
      pipeline.send(new ChangeStreamGenerator(table, 48).snapshot(100));
      pipeline.ingestCommit();
      pipeline.sync();
      Maintenance.Report report = pipeline.maintenance.run(
          TableIdentifier.of(table.schema(), table.name()), System.currentTimeMillis());
      assertThat(report.orphans()).isEmpty();
    }
  }

  @Test
  void anOrphanAgeNotLongerThanTheLongestStallIsRefusedAtStart() {
    assertThatThrownBy(() -> MaintenanceConfig.from(new PipelineConfig(
            Map.of(MaintenanceConfig.ORPHAN_MIN_AGE_MS, Long.toString(3L * 24 * 3_600_000)))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(PipelineConfig.MAX_STALL_MS);
  }

  @Test
  void orphansOfAnAbortedFlushAndAnAbortedCycleAreRemovedAndNoLiveFileIs() throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), MANUAL)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 45);
      pipeline.send(gen.snapshot(300));
      pipeline.ingestCommit();
      for (int i = 0; i < 3; i++) {
        pipeline.send(gen.next(100));
        pipeline.ingestCommit();
        pipeline.sync();
      }
      Table t = pipeline.table(table);
      // A flush whose commit never happened: ingest's writer, files written, nothing committed.
      Record row = GenericRecord.create(SourcePositions.withPosition(t.schema()));
      Record key =
          GenericRecord.create(TypeUtil.select(t.schema(), t.schema().identifierFieldIds()));
      row.setField("id", 999_999_999L);
      key.setField("id", 999_999_999L);
      BatchWriter.Written flush =
          BatchWriter.write(t, t.schema(), List.of(row), List.of(key), 7, 77);
      // A cycle that converted but never committed: the vectors are written, main is not.
      pipeline.send(gen.next(100));
      pipeline.ingestCommit();
      pipeline.dropRealtimeEvents();
      t = pipeline.table(table);
      Differ.Planned planned = Differ.plan(
              t,
              table.schema() + "." + table.name(),
              UUID.randomUUID().toString(),
              System.currentTimeMillis(),
              Integer.MAX_VALUE)
          .orElseThrow();
      List<String> aborted = new ArrayList<>();
      flush.dataFiles().forEach(f -> aborted.add(f.location()));
      flush.deleteFiles().forEach(f -> aborted.add(f.location()));
      FileConverter converter = new FileConverter();
      for (ConvertTask task : planned.tasks()) {
        DeleteFile dv = converter.convert(t, task).newDv(t.specs());
        if (dv != null) {
          aborted.add(dv.location());
        }
      }
      assertThat(aborted).hasSizeGreaterThan(2);
      aborted.forEach(path -> assertThat(new File(path)).exists());

      OrphanFiles.Result removed =
          OrphanFiles.remove(pipeline.table(table), System.currentTimeMillis() + 1);

      assertThat(removed.removedFiles()).containsAll(aborted);
      aborted.forEach(path -> assertThat(new File(path)).doesNotExist());
      t = pipeline.table(table);
      assertFilesExist(t);
      assertThat(pipeline.rows(table, Branches.REALTIME))
          .isEqualTo(pipeline.model(table).rows());
      assertThat(pipeline.syncBackstop()).hasSize(1);
      assertCycle(pipeline, table, 4);
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {51, 52, 53})
  void longRunWithThePoliciesOnKeepsFileCountsBounded(long seed) throws Exception {
    TestTable table = TestTable.wide("inventory", "customers");
    Map<String, String> policies = new HashMap<>();
    policies.put(MaintenanceConfig.CHECK_INTERVAL_MS, "1");
    policies.put("sync.maintenance.compaction.small-file-size-bytes", Long.toString(1L << 20));
    policies.put("sync.maintenance.compaction.min-small-files", "8");
    policies.put("sync.maintenance.compaction.max-delete-files", "12");
    policies.put("sync.maintenance.expire.realtime.max-snapshot-age-ms", "0");
    policies.put("sync.maintenance.expire.realtime.min-snapshots-to-keep", "5");
    policies.put("sync.maintenance.expire.main.max-snapshot-age-ms", "0");
    policies.put("sync.maintenance.expire.main.min-snapshots-to-keep", "5");
    policies.put(MaintenanceConfig.ORPHAN_INTERVAL_MS, "1");
    policies.put(MaintenanceConfig.ORPHANS_ENABLED, "true");
    policies.put(
        PipelineConfig.MAX_STALL_MS, "1"); // a test that runs one step at a time stalls never
    policies.put(MaintenanceConfig.ORPHAN_MIN_AGE_MS, "2");
    policies.put("ingest.changelog.tables", "inventory.customers");
    try (PipelineDriver pipeline = new PipelineDriver(List.of(table.topic()), policies)) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, seed);
      Random random = new Random(seed);
      long events = 1000;
      pipeline.send(gen.snapshot(1000));
      pipeline.ingestCommit();
      pipeline.sync();
      int cycle = 0;
      int maxRealtimeData = 0;
      int maxRealtimeDeletes = 0;
      int maxMainData = 0;
      int maxSnapshots = 0;
      int ingestCommits = 0;
      for (int round = 0; round < 60; round++) {
        List<Change> changes = gen.next(20 + random.nextInt(200));
        events += changes.stream().filter(c -> !c.isTombstone()).count();
        pipeline.send(changes);
        pipeline.ingestCommit();
        ingestCommits++;
        // Sync on events most rounds; every third round the timer fires, and maintenance with it.
        List<MainCommitted> committed = round % 3 == 2 ? pipeline.syncBackstop() : pipeline.sync();
        if (round % 3 == 2) {
          committed.addAll(pipeline.sync());
        }
        if (!committed.isEmpty()) {
          assertCycle(pipeline, table, ++cycle);
        }
        Table t = pipeline.table(table);
        maxRealtimeData = Math.max(
            maxRealtimeData,
            BranchFiles.liveDataFiles(t, t.snapshot(Branches.REALTIME)).size());
        maxRealtimeDeletes = Math.max(
            maxRealtimeDeletes,
            BranchFiles.liveDeleteFiles(t, t.snapshot(Branches.REALTIME)).size());
        maxMainData = Math.max(
            maxMainData, BranchFiles.liveDataFiles(t, t.snapshot(Branches.MAIN)).size());
        maxSnapshots = Math.max(maxSnapshots, snapshotCount(t));
      }
      pipeline.syncBackstop();
      assertCycle(pipeline, table, ++cycle);
      Table t = pipeline.table(table);
      System.out.printf(
          "seed %d: %d ingest commits, %d sync cycles, %.0f compactions (%.0f files in, %.0f out, %.0f delete files dropped), "
              + "%.0f delete files reconverted, %.0f snapshots expired, %.0f orphans removed; max live: realtime %d data + %d delete files, main %d data "
              + "files, %d snapshots; at the end realtime %d data + %d delete files, main %d data files + %d DVs, %d snapshots%n",
          seed,
          ingestCommits,
          cycle,
          pipeline.syncCounter("lakestream.maintenance.compactions"),
          pipeline.syncCounter("lakestream.maintenance.compaction.files.in"),
          pipeline.syncCounter("lakestream.maintenance.compaction.files.out"),
          pipeline.syncCounter("lakestream.maintenance.compaction.deletes.dropped"),
          pipeline.syncCounter("lakestream.sync.reconverted.deletes"),
          pipeline.syncCounter("lakestream.maintenance.snapshots.expired"),
          pipeline.syncCounter("lakestream.maintenance.orphans.removed"),
          maxRealtimeData,
          maxRealtimeDeletes,
          maxMainData,
          maxSnapshots,
          BranchFiles.liveDataFiles(t, t.snapshot(Branches.REALTIME)).size(),
          BranchFiles.liveDeleteFiles(t, t.snapshot(Branches.REALTIME)).size(),
          BranchFiles.liveDataFiles(t, t.snapshot(Branches.MAIN)).size(),
          BranchFiles.deletionVectors(t, t.snapshot(Branches.MAIN)).size(),
          snapshotCount(t));
      assertThat(pipeline.syncCounter("lakestream.maintenance.compactions")).isGreaterThan(2);
      assertThat(pipeline.syncCounter("lakestream.maintenance.snapshots.expired"))
          .isGreaterThan(20);
      assertThat(pipeline.syncCounter("lakestream.maintenance.failures")).isZero();
      // Without maintenance: 61 data files and 60 delete files on realtime, 120+ snapshots.
      assertThat(maxRealtimeData).as("live data files on realtime").isLessThanOrEqualTo(12);
      assertThat(maxMainData).as("live data files on main").isLessThanOrEqualTo(12);
      assertThat(maxRealtimeDeletes)
          .as("live equality-delete files on realtime")
          .isLessThanOrEqualTo(16);
      assertThat(maxSnapshots).as("snapshots of the table").isLessThanOrEqualTo(30);
      assertThat(ingestCounter(pipeline, "lakestream.realtime.commits"))
          .isEqualTo(ingestCommits + 1);
      assertThat(ingestCounter(pipeline, "lakestream.realtime.commit.retries")).isZero();
      assertFilesExist(t);

      // The change log is maintained too: compacted and expired, every change in it once.
      Table log = pipeline.table(TableIdentifier.of("inventory", "customers_changelog"));
      long logRows = 0;
      try (var rows = IcebergGenerics.read(log).build()) {
        for (var ignored : rows) {
          logRows++;
        }
      }
      assertThat(logRows).isEqualTo(events);
      assertThat(BranchFiles.liveDataFiles(log, log.currentSnapshot()).size())
          .as("change-log data files")
          .isLessThanOrEqualTo(12);
      assertThat(snapshotCount(log)).as("change-log snapshots").isLessThanOrEqualTo(15);
      assertFilesExist(log);
    }
  }

  /** Equality-delete files committed to realtime after {@code from} up to and including {@code to}. */
  private static long equalityDeletesAdded(Table table, long from, long to) {
    long added = 0;
    for (Snapshot s = table.snapshot(to);
        s != null && s.snapshotId() != from;
        s = table.snapshot(s.parentId())) {
      added +=
          Long.parseLong(s.summary().getOrDefault(SnapshotSummary.ADD_EQ_DELETE_FILES_PROP, "0"));
    }
    return added;
  }

  /** Every file any snapshot of the table references exists. */
  private static void assertFilesExist(Table table) {
    Set<String> checked = new HashSet<>();
    for (Snapshot s : table.snapshots()) {
      assertThat(new File(s.manifestListLocation())).exists();
      for (ManifestFile m : s.allManifests(table.io())) {
        if (checked.add(m.path())) {
          assertThat(new File(m.path())).exists();
        }
      }
      for (DataFile f : BranchFiles.liveDataFiles(table, s).values()) {
        if (checked.add(f.location())) {
          assertThat(new File(f.location()))
              .as("data file of snapshot %d", s.snapshotId())
              .exists();
        }
      }
      for (DeleteFile f : BranchFiles.liveDeleteFiles(table, s)) {
        if (checked.add(f.location())) {
          assertThat(new File(f.location()))
              .as("%s file of snapshot %d", f.content(), s.snapshotId())
              .exists();
        }
      }
    }
    assertThat(new File(((HasTableOperations) table).operations().current().metadataFileLocation()))
        .exists();
  }

  private static double ingestCounter(PipelineDriver pipeline, String name) {
    var counter = pipeline.ingestMeters.find(name).counter();
    return counter == null ? 0 : counter.count();
  }

  private static void assertCycle(PipelineDriver pipeline, TestTable table, int cycle) {
    assertThat(pipeline.mainDiffersFromModel(table))
        .as("main vs model after cycle %d", cycle)
        .isNull();
    var report = pipeline.verify(table);
    assertThat(report.passed())
        .as("invariants after cycle %d: %s", cycle, report)
        .isTrue();
  }

  private static int snapshotCount(Table table) {
    int n = 0;
    for (Snapshot ignored : table.snapshots()) {
      n++;
    }
    return n;
  }
}
