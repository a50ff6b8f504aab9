package dev.lakestream.sync.maintenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CommitRetry;
import dev.lakestream.common.iceberg.FileColumns;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.testkit.CommitsThrough;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.RESTException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * A compaction of realtime keeps every equality delete committed while it ran: they have a higher
 * sequence number than the rewritten files get, so they must still apply to them.
 */
class RealtimeCompactionTest {

  private static final Schema SCHEMA = KeyFiles.ID_NAME;

  /** A table of ids 0-9 on main, its realtime branch made from it. */
  private static Table realtime(TemporaryWarehouse warehouse) throws Exception {
    Table table = warehouse.v3Table("t", "items", SCHEMA).create();
    table
        .newAppend()
        .appendFile(KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10)))
        .commit();
    table
        .manageSnapshots()
        .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
        .commit();
    return table;
  }

  /** Commits a data file of ids {@code from} to {@code to} (exclusive) on realtime. */
  private static void append(Table table, int from, int to) throws Exception {
    table
        .newAppend()
        .toBranch(Branches.REALTIME)
        .appendFile(KeyFiles.data(table, SCHEMA, KeyFiles.ids(from, to)))
        .commit();
  }

  /**
   * Commits a data file of ids {@code from} to {@code to} (exclusive) on realtime, with the column
   * {@code content} the table has gained.
   */
  private static void appendWithContent(Table table, int from, int to) throws Exception {
    Schema wider = table.schema();
    List<Record> rows = new ArrayList<>();
    for (int id = from; id < to; id++) {
      Record row = GenericRecord.create(wider);
      row.setField("id", id);
      row.setField("name", "n" + id);
      row.setField("content", "c" + id);
      rows.add(row);
    }
    table
        .newAppend()
        .toBranch(Branches.REALTIME)
        .appendFile(KeyFiles.dataFile(table, wider, rows))
        .commit();
  }

  @Test
  void equalityDeletesCommittedWhileEveryDataFileIsRewrittenStayLive() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);

      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(table, 128L << 20);
      assertThat(compaction.dataFilesIn()).as("every live data file but one").isEqualTo(1);

      // Ingest goes on: batches of deletes only, and a commit on main between them.
      List<DeleteFile> landed = new ArrayList<>();
      for (int id : new int[] {5, 6, 7}) {
        DeleteFile d = KeyFiles.deletes(table, SCHEMA, List.of(id));
        landed.add(d);
        table.newRowDelta().toBranch(Branches.REALTIME).addDeletes(d).commit();
        table
            .newAppend()
            .appendFile(KeyFiles.data(table, SCHEMA, List.of(100 + id)))
            .commit();
      }
      compaction.commit();

      table.refresh();
      List<String> live =
          BranchFiles.liveDeleteFiles(table, table.snapshot(Branches.REALTIME)).stream()
              .filter(f -> f.content() == FileContent.EQUALITY_DELETES)
              .map(DeleteFile::location)
              .toList();
      assertThat(live)
          .as("the equality deletes committed during the compaction")
          .containsExactlyInAnyOrderElementsOf(
              landed.stream().map(DeleteFile::location).toList());
      assertThat(ids(table)).as("realtime's rows").doesNotContain(5, 6, 7).hasSize(17);
    }
  }

  /**
   * A file written before the table had a column holds no value of it, which is not a null (ingest
   * dead-letters an unchanged out-of-line value it would fill from such a row: FileColumns). The
   * compaction rewrites files of different columns apart, each with the columns it holds, so the
   * rows of the older files do not take a null they never had.
   */
  @Test
  void filesOfDifferentColumnsAreRewrittenApartWithTheColumnsTheyHold() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      append(table, 20, 25);
      table.updateSchema().addColumn("content", Types.StringType.get()).commit();
      for (int from : new int[] {30, 40, 50}) {
        appendWithContent(table, from, from + 10);
      }

      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(table, 128L << 20);
      assertThat(compaction.dataFilesIn()).as("every live data file but one").isEqualTo(5);
      compaction.commit();

      table.refresh();
      int id = table.schema().findField("id").fieldId();
      int content = table.schema().findField("content").fieldId();
      Map<String, DataFile> live =
          BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME));
      assertThat(live)
          .as("the file left in place and one file per set of columns")
          .hasSize(3);
      for (DataFile file : live.values()) {
        int lowest = Conversions.fromByteBuffer(
            Types.IntegerType.get(), file.lowerBounds().get(id));
        int highest = Conversions.fromByteBuffer(
            Types.IntegerType.get(), file.upperBounds().get(id));
        if (FileColumns.held(table.io(), file, table.schema()).contains(content)) {
          assertThat(lowest)
              .as("the lowest id of %s, which holds content", file.location())
              .isGreaterThanOrEqualTo(30);
        } else {
          assertThat(highest)
              .as("the highest id of %s, which holds no content", file.location())
              .isLessThan(30);
        }
      }
      assertThat(ids(table)).as("realtime's rows").hasSize(55);
    }
  }

  /**
   * The policy's checks leave a small file alone when no file of its columns can join it and no
   * delete the rewrite would let go applies to it: rewritten alone (one file in, one out) at every
   * check, it would make a compaction, and a cycle on main, of nothing.
   */
  @Test
  void aSmallFileOfOtherColumnsThanTheRestIsNotRewrittenAloneAtEveryCheck() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      table.updateSchema().addColumn("content", Types.StringType.get()).commit();
      for (int from : new int[] {30, 40, 50}) {
        appendWithContent(table, from, from + 10);
      }
      // Every file is small; two small files are enough, however young.
      CompactionPolicy policy = new CompactionPolicy(128L << 20, 1 << 20, 2, 1L << 40, 1, 100);
      table.refresh();
      Set<String> before =
          BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME)).keySet();
      RealtimeCompaction first =
          RealtimeCompaction.prepare(table, policy, Long.MAX_VALUE).orElseThrow();
      first.commit();
      table.refresh();
      Set<String> after =
          BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME)).keySet();
      assertThat(after.stream().filter(before::contains))
          .as("files kept: the old columns' only one, and the one left in place")
          .hasSize(2);
      assertThat(RealtimeCompaction.prepare(table, policy, Long.MAX_VALUE))
          .as("the next check, with one small file of each set of columns")
          .isEmpty();
      // A batch's delete that may apply to every file (its keys span them): rewriting the
      // lone file would not let it go, and the next batch's would ask again.
      table
          .newRowDelta()
          .toBranch(Branches.REALTIME)
          .addDeletes(KeyFiles.deletes(table, SCHEMA, List.of(5, 55)))
          .commit();
      assertThat(RealtimeCompaction.prepare(table, policy, Long.MAX_VALUE))
          .as("the check after a batch's delete")
          .isEmpty();
      assertThat(ids(table)).as("realtime's rows").hasSize(38);
    }
  }

  @Test
  void aFileRemovedAfterTheStartStopsTheCommitBeforeItCanDropDeletes() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(table, 128L << 20);
      assertThat(compaction.dataFilesIn()).isEqualTo(1);

      // Another writer (a TRUNCATE) removes the file the compaction left in place; a delete
      // lands. Committed, Iceberg's minimum would rise past the delete and drop it.
      DataFile left =
          BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME)).values().stream()
              .filter(f -> !compaction.rewrittenLocations().contains(f.location()))
              .findFirst()
              .orElseThrow();
      table.newDelete().toBranch(Branches.REALTIME).deleteFile(left).commit();
      DeleteFile landed = KeyFiles.deletes(table, SCHEMA, List.of(5));
      table.newRowDelta().toBranch(Branches.REALTIME).addDeletes(landed).commit();

      assertThatThrownBy(compaction::commit)
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining(
              "removed 1 data files since " + compaction.start().snapshotId());
      table.refresh();
      assertThat(BranchFiles.liveDeleteFiles(table, table.snapshot(Branches.REALTIME)))
          .extracting(DeleteFile::location)
          .containsExactly(landed.location());
    }
  }

  @Test
  void aCommitThatDroppedDeletesItDidNotMeanToIsFoundOut() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      DataFile only = BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME))
          .values()
          .iterator()
          .next();
      Snapshot start = table.snapshot(Branches.REALTIME);
      DeleteFile landed = KeyFiles.deletes(table, SCHEMA, List.of(5));
      table.newRowDelta().toBranch(Branches.REALTIME).addDeletes(landed).commit();
      table.newAppend().appendFile(KeyFiles.data(table, SCHEMA, List.of(100))).commit();
      // What a compaction did before it left a file in place: every file rewritten at the
      // start's sequence number, and Iceberg drops the delete that landed meanwhile.
      table
          .newRewrite()
          .toBranch(Branches.REALTIME)
          .validateFromSnapshot(start.snapshotId())
          .dataSequenceNumber(start.sequenceNumber())
          .rewriteFiles(Set.of(only), Set.of(KeyFiles.data(table, SCHEMA, KeyFiles.ids(0, 10))))
          .commit();

      assertThat(RealtimeCompaction.lostDeletes(table, table.snapshot(Branches.REALTIME), Set.of()))
          .containsExactly(landed.location());
      assertThat(RealtimeCompaction.lostDeletes(
              table, table.snapshot(Branches.REALTIME), Set.of(landed.location())))
          .isEmpty();
    }
  }

  @Test
  void thePolicyLeavesOneSmallFileAndRewritesOneFileOnlyToApplyDeletes() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      // Two small files, old enough: the older alone would be rewritten into one, again and again.
      CompactionPolicy policy = new CompactionPolicy(1 << 20, 1 << 19, 10, 1 << 20, 1, 100);
      long now = System.currentTimeMillis() + 60_000;
      assertThat(RealtimeCompaction.prepare(table, policy, now)).isEmpty();

      append(table, 20, 30);
      RealtimeCompaction three = RealtimeCompaction.prepare(table, policy, now).orElseThrow();
      assertThat(three.dataFilesIn()).isEqualTo(2);
      assertThat(three.reason()).endsWith("one file left in place");
      three.commit();

      // A delete of a row in the compacted file: rewriting that file alone applies it.
      table
          .newRowDelta()
          .toBranch(Branches.REALTIME)
          .addDeletes(KeyFiles.deletes(table, SCHEMA, List.of(4)))
          .commit();
      RealtimeCompaction one = RealtimeCompaction.prepare(table, policy, now).orElseThrow();
      assertThat(one.dataFilesIn()).isEqualTo(1);
      assertThat(one.commit().equalityDeletesDropped()).isEqualTo(1);
      assertThat(ids(table)).doesNotContain(4).hasSize(29);
      assertThat(RealtimeCompaction.prepare(table, policy, now)).isEmpty();
    }
  }

  @Test
  void smallFilesNoBinCanPairAreNotRewrittenAtEveryCheck() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      for (int from = 10; from < 30; from += 10) {
        append(table, from, from + 10);
      }
      List<Long> sizes =
          BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME)).values().stream()
              .map(DataFile::fileSizeInBytes)
              .sorted()
              .toList();
      // Every file is small, and no two of the files rewritten fit in one bin.
      long target = sizes.get(0) + sizes.get(1) - 1;
      CompactionPolicy policy =
          new CompactionPolicy(target, sizes.get(2) + 1, 10, Long.MAX_VALUE, 1, 100);
      long now = System.currentTimeMillis() + 60_000;
      assertThat(RealtimeCompaction.prepare(table, policy, now)).isEmpty();

      table
          .newRowDelta()
          .toBranch(Branches.REALTIME)
          .addDeletes(KeyFiles.deletes(table, SCHEMA, List.of(4)))
          .commit();
      assertThat(RealtimeCompaction.prepare(table, policy, now))
          .as("a delete to apply makes the rewrite worth it")
          .isPresent();
    }
  }

  @Test
  void aCommitThatLosesTheRaceOnEveryAttemptIcebergMakesIsMadeAgainWithTheSameFiles()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      // One attempt per Iceberg commit, so that each lost race ends Iceberg's retries.
      table.updateProperties().set(TableProperties.COMMIT_NUM_RETRIES, "0").commit();
      List<DeleteFile> landed = new ArrayList<>();
      int races = CommitRetry.ATTEMPTS - 1;
      Table racing = racing(warehouse, table, races, landed);
      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(racing, 128L << 20);
      assertThat(compaction.dataFilesIn()).isEqualTo(1);

      RealtimeCompaction.Result result = compaction.commit();

      assertThat(landed).as("ingest's commits that won the races").hasSize(races);
      table.refresh();
      Snapshot head = table.snapshot(Branches.REALTIME);
      assertThat(head.snapshotId()).isEqualTo(result.snapshotId());
      assertThat(BranchFiles.liveDataFiles(table, head).keySet())
          .as("the files the compaction wrote the first time are the ones committed")
          .containsAll(compaction.writtenLocations())
          .doesNotContainAnyElementsOf(compaction.rewrittenLocations());
      assertThat(BranchFiles.liveDeleteFiles(table, head))
          .extracting(DeleteFile::location)
          .as("the deletes committed by the writers that won")
          .containsExactlyInAnyOrderElementsOf(
              landed.stream().map(DeleteFile::location).toList());
      assertThat(ids(table)).doesNotContain(1, 2, 3, 4).hasSize(20 - races);
    }
  }

  @Test
  void aCommitThatLosesEveryRoundDeletesItsFilesAndSaysSo() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      table.updateProperties().set(TableProperties.COMMIT_NUM_RETRIES, "0").commit();
      List<DeleteFile> landed = new ArrayList<>();
      Table racing = racing(warehouse, table, CommitRetry.ATTEMPTS, landed);
      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(racing, 128L << 20);

      assertThatThrownBy(compaction::commit).isInstanceOf(CommitFailedException.class);

      assertThat(landed).hasSize(CommitRetry.ATTEMPTS);
      assertThat(compaction.writtenLocations())
          .isNotEmpty()
          .allSatisfy(l -> assertThat(Path.of(l.replaceFirst("^file:", ""))).doesNotExist());
      table.refresh();
      assertThat(table.snapshot(Branches.REALTIME).summary())
          .doesNotContainKey(SummaryKeys.MAINTENANCE);
      assertThat(ids(table)).hasSize(20 - CommitRetry.ATTEMPTS);
    }
  }

  /**
   * The catalog applies the commit, then reports an error that does not say whether it did (a REST
   * call whose reply was lost). The compaction is on the branch: its files are kept, and it counts
   * as committed.
   */
  @Test
  void aCommitThatLandsThoughTheCatalogReportsAnErrorKeepsItsFiles() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      Table lostReply = CommitsThrough.table(table, (ops, base, metadata) -> {
        ops.commit(base, metadata);
        throw new RESTException("Read timed out after the server applied the commit");
      });
      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(lostReply, 128L << 20);

      RealtimeCompaction.Result result = compaction.commit();

      table.refresh();
      assertThat(table.snapshot(Branches.REALTIME).summary())
          .as("the compaction landed")
          .containsEntry(SummaryKeys.MAINTENANCE, "compaction");
      assertThat(result.snapshotId())
          .isEqualTo(table.snapshot(Branches.REALTIME).snapshotId());
      assertThat(compaction.writtenLocations())
          .isNotEmpty()
          .allSatisfy(l -> assertThat(Path.of(l.replaceFirst("^file:", ""))).exists());
      assertThat(ids(table)).hasSize(20);
    }
  }

  /** An error that says nothing of the outcome, and nothing on the branch: the files are kept. */
  @Test
  void aCommitThatFailsWithAnErrorThatIsNoRefusalKeepsItsFiles() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      Table timedOut = CommitsThrough.table(table, (ops, base, metadata) -> {
        throw new RESTException("Read timed out");
      });
      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(timedOut, 128L << 20);

      assertThatThrownBy(compaction::commit).isInstanceOf(RESTException.class);

      table.refresh();
      assertThat(table.snapshot(Branches.REALTIME).summary())
          .doesNotContainKey(SummaryKeys.MAINTENANCE);
      assertThat(compaction.writtenLocations())
          .isNotEmpty()
          .allSatisfy(l -> assertThat(Path.of(l.replaceFirst("^file:", ""))).exists());
    }
  }

  /**
   * The catalog applies the commit, then reports it refused (a JDBC pool that ran the update again
   * after a lost connection: 0 rows). Iceberg cleans up after what it takes for a failure, the
   * landed snapshot's manifest list with it: the compaction says so and names the repair, and
   * keeps the data files the branch references.
   */
  @Test
  void aCommitReportedRefusedThatLandedNamesTheRepairAndKeepsItsFiles() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      long parent = table.snapshot(Branches.REALTIME).snapshotId();
      AtomicInteger calls = new AtomicInteger();
      Table ranTwice = CommitsThrough.table(table, (ops, base, metadata) -> {
        ops.commit(base, metadata);
        if (calls.getAndIncrement() == 0) {
          throw new CommitFailedException("Failed to update table: 0 rows (the update ran again)");
        }
      });
      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(ranTwice, 128L << 20);

      assertThatThrownBy(compaction::commit)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("deleted that snapshot's manifest list")
          .hasMessageContaining("back to its parent " + parent);

      assertThat(compaction.writtenLocations())
          .isNotEmpty()
          .allSatisfy(l -> assertThat(Path.of(l.replaceFirst("^file:", ""))).exists());
    }
  }

  @Test
  void aDeletionVectorOfARewrittenFileSinceTheStartStopsTheCommit() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(table, 128L << 20);
      String rewritten = compaction.rewrittenLocations().iterator().next();
      DataFile file =
          BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME)).get(rewritten);

      // Another writer deletes a row of a file being rewritten by position, then ingest commits
      // on top: the vector is below the branch's head when the compaction commits.
      OutputFileFactory files =
          OutputFileFactory.builderFor(table, 1, 1).format(FileFormat.PUFFIN).build();
      BaseDVFileWriter writer = new BaseDVFileWriter(files, path -> null);
      try (writer) {
        writer.delete(file.location(), 0, table.spec(), null);
      }
      DeleteFile dv = writer.result().deleteFiles().get(0);
      table.newRowDelta().toBranch(Branches.REALTIME).addDeletes(dv).commit();
      table
          .newRowDelta()
          .toBranch(Branches.REALTIME)
          .addDeletes(KeyFiles.deletes(table, SCHEMA, List.of(12)))
          .commit();
      assertThat(RealtimeCompaction.onlyEqualityDeletesAdded(table.snapshot(Branches.REALTIME)))
          .as("ingest's snapshot says it added equality deletes only")
          .isTrue();

      assertThatThrownBy(compaction::commit)
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining("found new position delete for replaced data file")
          .hasMessageContaining(file.location());
      table.refresh();
      assertThat(table.snapshot(Branches.REALTIME).summary())
          .doesNotContainKey(SummaryKeys.MAINTENANCE);
    }
  }

  @Test
  void theCheckForPositionDeletesStartsAtTheHeadAfterEqualityDeletesOnly() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = realtime(warehouse);
      append(table, 10, 20);
      RealtimeCompaction compaction = RealtimeCompaction.prepareAll(table, 128L << 20);
      List<String> between = new ArrayList<>();
      for (int id : new int[] {3, 4, 5}) {
        table
            .newRowDelta()
            .toBranch(Branches.REALTIME)
            .addDeletes(KeyFiles.deletes(table, SCHEMA, List.of(id)))
            .commit();
        between.add(table.snapshot(Branches.REALTIME).manifestListLocation());
      }
      // The manifest lists of the snapshots below the head are gone: Iceberg's check from the
      // start would read them.
      for (String list : between.subList(0, 2)) {
        Files.delete(Path.of(list.replaceFirst("^file:", "")));
      }

      compaction.commit();

      assertThat(ids(table)).doesNotContain(3, 4, 5).hasSize(17);
    }
  }

  /**
   * {@code table} through operations whose first {@code races} commits lose the race for the
   * metadata: just before each, another writer (a catalog of its own, as another process) commits a
   * delete of the next id from 1 on realtime, which lands in {@code landed}.
   */
  private static Table racing(
      TemporaryWarehouse warehouse, Table table, int races, List<DeleteFile> landed) {
    AtomicInteger left = new AtomicInteger(races);
    return CommitsThrough.table(table, (ops, base, metadata) -> {
      if (left.getAndDecrement() > 0) {
        Catalog other = warehouse.openCatalog();
        try (AutoCloseable closing = (AutoCloseable) other) {
          Table theirs = other.loadTable(
              TableIdentifier.parse(table.name().substring(table.name().indexOf('.') + 1)));
          DeleteFile d = KeyFiles.deletes(theirs, SCHEMA, List.of(landed.size() + 1));
          theirs.newRowDelta().toBranch(Branches.REALTIME).addDeletes(d).commit();
          landed.add(d);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
      ops.commit(base, metadata);
    });
  }

  private static List<Integer> ids(Table table) throws Exception {
    List<Integer> ids = new ArrayList<>();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table)
        .useSnapshot(table.snapshot(Branches.REALTIME).snapshotId())
        .build()) {
      rows.forEach(r -> ids.add((Integer) r.getField("id")));
    }
    return ids;
  }
}
