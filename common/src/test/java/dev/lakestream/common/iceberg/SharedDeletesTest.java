package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.TemporaryWarehouse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * Rows read with delete files shared across a snapshot's data files are the rows Iceberg's own
 * per-file read gives, and each delete file is read once, not once per data file it applies to.
 */
class SharedDeletesTest {

  private static final Schema SCHEMA = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "v", Types.StringType.get())),
      Set.of(1));

  @Test
  void aSnapshotsFilesReadWithSharedDeletesGiveIcebergsRowsAndEachDeleteFileIsReadOnce()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "rows", SCHEMA).create();
      // Eight batches as ingest writes them: each upserts keys (a data file) and deletes their
      // earlier versions (an equality-delete file), so every delete applies to the older files.
      Map<Long, String> model = new TreeMap<>();
      int deleteFiles = 0;
      for (int batch = 0; batch < 8; batch++) {
        List<Record> rows = new ArrayList<>();
        List<Long> keys = new ArrayList<>();
        for (long id = batch * 5L; id < batch * 5L + 20; id++) {
          String v = "b" + batch + "-" + id;
          rows.add(row(id, v));
          keys.add(id);
          model.put(id, v);
        }
        if (batch % 3 == 2) {
          keys.add(1_000L + batch); // a delete of a key no file holds
        }
        deleteFiles += commit(table, rows, keys);
      }
      table.refresh();
      List<FileScanTask> tasks = new ArrayList<>();
      try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
        planned.forEach(tasks::add);
      }
      int applied = tasks.stream().mapToInt(t -> t.deletes().size()).sum();
      assertThat(applied)
          .as("delete files applied, summed over data files")
          .isGreaterThan(deleteFiles);

      Map<Long, String> own = read(table, tasks, null);
      SharedDeletes shared = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
      Map<Long, String> withShared = read(table, tasks, shared);
      assertThat(own).isEqualTo(model);
      assertThat(withShared).isEqualTo(model);
      assertThat(shared.filesRead()).as("delete files read").isEqualTo(deleteFiles - 1);

      // With no room, every file is read as Iceberg would, and the rows are still right.
      SharedDeletes none = new SharedDeletes(table.io(), 0);
      assertThat(read(table, tasks, none)).isEqualTo(model);
      assertThat(none.filesRead()).isZero();
      // With room for some files only (about 20 long keys each, 10 heap bytes per estimated byte):
      // those are kept, the rest read per data file, and the rows are still right.
      SharedDeletes some = new SharedDeletes(table.io(), 2 * 21 * 8 * 10);
      assertThat(read(table, tasks, some)).isEqualTo(model);
      assertThat(some.filesRead()).isBetween(1L, (long) deleteFiles - 2);
    }
  }

  /**
   * {@link SnapshotRows} (what {@code verify} and the tests' invariants read) gives the rows
   * Iceberg's generic reader gives, at the head and at a snapshot of an earlier schema, and reads
   * each equality-delete file once, not once per older data file.
   */
  @Test
  void snapshotRowsAreIcebergsRowsAndReadEachDeleteFileOnce() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "rows", SCHEMA).create();
      long beforeColumnAdded = 0;
      int deleteFiles = 0;
      for (int batch = 0; batch < 8; batch++) {
        if (batch == 4) {
          table.refresh();
          beforeColumnAdded = table.currentSnapshot().snapshotId();
          table.updateSchema().addColumn("w", Types.IntegerType.get()).commit();
        }
        List<Record> rows = new ArrayList<>();
        List<Long> keys = new ArrayList<>();
        for (long id = batch * 5L; id < batch * 5L + 20; id++) {
          rows.add(row(id, "b" + batch + "-" + id));
          keys.add(id);
        }
        deleteFiles += commit(table, rows, keys);
      }
      table.refresh();
      for (long snapshot : List.of(beforeColumnAdded, table.currentSnapshot().snapshotId())) {
        List<List<Object>> icebergs = new ArrayList<>();
        try (CloseableIterable<Record> records =
            IcebergGenerics.read(table).useSnapshot(snapshot).build()) {
          for (Record r : records) {
            icebergs.add(values(FileRows.inColumns(table.schema(), r)));
          }
        }
        SharedDeletes deletes = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
        List<List<Object>> ours = new ArrayList<>();
        SnapshotRows.forEach(
            table, snapshot, deletes, SnapshotRows.MAX_SORTED_FILES, r -> ours.add(values(r)));
        // Batch b upserts keys 5b to 5b + 19: 35 keys after four batches, 55 after eight.
        assertThat(ours)
            .as("rows of snapshot %s", snapshot)
            .hasSize(snapshot == beforeColumnAdded ? 35 : 55);
        assertThat(ours).containsExactlyInAnyOrderElementsOf(icebergs);
        assertThat(ours.get(0)).as("in the table's columns").hasSize(3);
        if (snapshot != beforeColumnAdded) {
          assertThat(deletes.filesRead()).as("delete files read").isEqualTo(deleteFiles - 1);
          // Past the limit of files it sorts, Iceberg's reader reads them: the same rows.
          SharedDeletes unused = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
          List<List<Object>> streamed = new ArrayList<>();
          SnapshotRows.forEach(table, snapshot, unused, 7, r -> streamed.add(values(r)));
          assertThat(streamed).containsExactlyInAnyOrderElementsOf(icebergs);
          assertThat(unused.filesRead())
              .as("delete files read through the shared loader")
              .isZero();
        }
      }
    }
  }

  /**
   * One loader reading two tables in turn, the second's files older by sequence number than the
   * first's: none of the first table's deleted keys are applied to the second's rows.
   */
  @Test
  void snapshotRowsApplyNoDeleteOfAnEarlierReadWithTheSameLoader() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table first = warehouse.v3Table("t", "first", SCHEMA).create();
      Table second = warehouse.v3Table("t", "second", SCHEMA).create();
      // The first table's files start at sequence number 3, above every one of the second's.
      first.newAppend().commit();
      first.newAppend().commit();
      for (int batch = 0; batch < 3; batch++) {
        commit(first, List.of(row(batch, "first")), List.of(0L, 1L, 2L, 10L, 11L));
      }
      commit(second, List.of(row(10, "second"), row(11, "second")), List.of(10L, 11L));
      // Its bounds (9 to 30) overlap the older file's keys, so Iceberg lists it for that file.
      commit(second, List.of(row(20, "second")), List.of(9L, 30L));
      first.refresh();
      second.refresh();
      SharedDeletes reused = new SharedDeletes(first.io(), SharedDeletes.defaultBudgetBytes());
      List<List<Object>> firstRows = new ArrayList<>();
      SnapshotRows.forEach(
          first,
          first.currentSnapshot().snapshotId(),
          reused,
          SnapshotRows.MAX_SORTED_FILES,
          r -> firstRows.add(values(r)));
      assertThat(firstRows).containsExactly(List.of(2L, "first"));
      List<List<Object>> secondRows = new ArrayList<>();
      SnapshotRows.forEach(
          second,
          second.currentSnapshot().snapshotId(),
          reused,
          SnapshotRows.MAX_SORTED_FILES,
          r -> secondRows.add(values(r)));
      assertThat(secondRows)
          .containsExactlyInAnyOrder(
              List.of(10L, "second"), List.of(11L, "second"), List.of(20L, "second"));
    }
  }

  /** The values of {@code r}, in its columns' order. */
  private static List<Object> values(Record r) {
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < r.size(); i++) {
      out.add(r.get(i));
    }
    return out;
  }

  /**
   * Read newest first, saying each file's sequence number, the data files share one growing set of
   * deleted keys: each delete file's keys are merged once, not once per older data file, and the
   * rows are still Iceberg's. Batches of keys far from the others have delete files whose bounds
   * keep Iceberg from listing them for the older files: they are in the shared set anyway, and
   * match nothing there. Read in another order, each file gets its own set, and the rows are right.
   */
  @Test
  void dataFilesReadNewestFirstShareOneGrowingSetOfDeletedKeys() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "rows", SCHEMA).create();
      Map<Long, String> model = new TreeMap<>();
      for (int batch = 0; batch < 10; batch++) {
        long from = batch < 6 ? batch * 5L : 5_000 + (batch % 2) * 3;
        List<Record> rows = new ArrayList<>();
        List<Long> keys = new ArrayList<>();
        for (long id = from; id < from + 10; id++) {
          String v = "b" + batch + "-" + id;
          rows.add(row(id, v));
          keys.add(id);
          model.put(id, v);
        }
        commit(table, rows, keys);
      }
      table.refresh();
      List<FileScanTask> tasks = new ArrayList<>();
      try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
        planned.forEach(tasks::add);
      }
      Map<String, Long> listed = new TreeMap<>();
      Map<String, DeleteFile> deleteFiles = new TreeMap<>();
      long perFileKeys = 0;
      for (FileScanTask t : tasks) {
        for (DeleteFile d : t.deletes()) {
          listed.put(d.location(), d.recordCount());
          deleteFiles.put(d.location(), d);
          perFileKeys += d.recordCount();
        }
      }
      long distinctKeys = listed.values().stream().mapToLong(Long::longValue).sum();
      assertThat(perFileKeys).as("the case merges keys again per file").isGreaterThan(distinctKeys);
      boolean leftOutByBounds = tasks.stream().anyMatch(t -> deleteFiles.values().stream()
          .anyMatch(d -> d.dataSequenceNumber() > t.file().dataSequenceNumber()
              && t.deletes().stream().noneMatch(l -> l.location().equals(d.location()))));
      assertThat(leftOutByBounds)
          .as("a delete file left out of an older file's list")
          .isTrue();

      List<FileScanTask> newestFirst = new ArrayList<>(tasks);
      newestFirst.sort(Comparator.comparingLong((FileScanTask t) -> t.file().dataSequenceNumber())
          .reversed());
      SharedDeletes growing = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
      assertThat(read(table, newestFirst, growing, true)).isEqualTo(model);
      assertThat(growing.keysMerged())
          .as("each listed delete file's keys merged once")
          .isEqualTo(distinctKeys);

      List<FileScanTask> oldestFirst = new ArrayList<>(newestFirst);
      Collections.reverse(oldestFirst);
      SharedDeletes ascending = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
      assertThat(read(table, oldestFirst, ascending, true)).isEqualTo(model);
      assertThat(ascending.keysMerged()).isEqualTo(perFileKeys);
      SharedDeletes unsaid = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
      assertThat(read(table, newestFirst, unsaid, false)).isEqualTo(model);
      assertThat(unsaid.keysMerged()).isEqualTo(perFileKeys);
      assertThat(read(table, tasks, null)).isEqualTo(model);
    }
  }

  /**
   * An equality delete of a partition applies to that partition's files only: a set shared across
   * files would apply it to the older files of every partition. Region {@code b}'s row of key 1 is
   * older than region {@code a}'s delete of key 1 and must stay.
   */
  @Test
  void deletesOfAPartitionAreNotSharedAcrossPartitions() throws Exception {
    Schema schema = new Schema(
        List.of(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.required(2, "region", Types.StringType.get()),
            Types.NestedField.optional(3, "v", Types.StringType.get())),
        Set.of(1, 2));
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse
          .v3Table("t", "regions", schema)
          .withPartitionSpec(PartitionSpec.builderFor(schema).identity("region").build())
          .create();
      Schema idOnly = TypeUtil.select(schema, Set.of(1));
      GenericFileWriterFactory writers = writers(table, schema);
      OutputFileFactory files = files(table);
      // Oldest: region b's key 1; then region a's key 1; then region a's delete of key 1 with its
      // new row, and region b's delete of keys 0 and 2 (so region b's file has a delete whose key
      // bounds do not rule it out).
      table
          .newAppend()
          .appendFile(region(writers, files, table, schema, "b", 1, "b-old"))
          .commit();
      table
          .newAppend()
          .appendFile(region(writers, files, table, schema, "a", 1, "a-old"))
          .commit();
      table
          .newRowDelta()
          .addRows(region(writers, files, table, schema, "a", 1, "a-new"))
          .addDeletes(regionDelete(writers, files, table, schema, idOnly, "a", 1))
          .addDeletes(regionDelete(writers, files, table, schema, idOnly, "b", 0, 2))
          .commit();
      table.refresh();
      List<FileScanTask> tasks = new ArrayList<>();
      try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
        planned.forEach(tasks::add);
      }
      tasks.sort(Comparator.comparingLong((FileScanTask t) -> t.file().dataSequenceNumber())
          .reversed());
      SharedDeletes shared = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
      List<String> values = new ArrayList<>();
      for (FileScanTask task : tasks) {
        shared.nextDataFile(task.file().dataSequenceNumber());
        FileRows.forEach(
            table, task, table.schema(), shared, r -> values.add((String) r.getField("v")));
      }
      assertThat(values).containsExactlyInAnyOrder("a-new", "b-old");
      assertThat(tasks.get(2).deletes())
          .as("region b's file has region b's delete to apply")
          .hasSize(1);
    }
  }

  private static DataFile region(
      GenericFileWriterFactory writers,
      OutputFileFactory files,
      Table table,
      Schema schema,
      String region,
      long id,
      String v)
      throws IOException {
    Record row = GenericRecord.create(schema);
    row.setField("id", id);
    row.setField("region", region);
    row.setField("v", v);
    PartitionKey partition = partitionOf(table, schema, region);
    DataWriter<Record> data = writers.newDataWriter(
        files.newOutputFile(table.spec(), partition), table.spec(), partition);
    try (data) {
      data.write(row);
    }
    return data.toDataFile();
  }

  private static DeleteFile regionDelete(
      GenericFileWriterFactory writers,
      OutputFileFactory files,
      Table table,
      Schema schema,
      Schema idOnly,
      String region,
      long... ids)
      throws IOException {
    PartitionKey partition = partitionOf(table, schema, region);
    EqualityDeleteWriter<Record> deletes = writers.newEqualityDeleteWriter(
        files.newOutputFile(table.spec(), partition), table.spec(), partition);
    try (deletes) {
      for (long id : ids) {
        Record key = GenericRecord.create(idOnly);
        key.setField("id", id);
        deletes.write(key);
      }
    }
    return deletes.toDeleteFile();
  }

  /** The partition of {@code region}'s rows. */
  private static PartitionKey partitionOf(Table table, Schema schema, String region) {
    Record row = GenericRecord.create(schema);
    row.setField("region", region);
    PartitionKey partition = new PartitionKey(table.spec(), schema);
    partition.partition(row);
    return partition;
  }

  private static Map<Long, String> read(
      Table table, List<FileScanTask> tasks, SharedDeletes shared, boolean say) {
    Map<Long, String> out = new TreeMap<>();
    for (FileScanTask task : tasks) {
      if (say) {
        shared.nextDataFile(task.file().dataSequenceNumber());
      }
      FileRows.forEach(table, task, table.schema(), shared, r -> {
        String earlier = out.put((Long) r.getField("id"), (String) r.getField("v"));
        assertThat(earlier).as("key %s live in two files", r.getField("id")).isNull();
      });
    }
    return out;
  }

  private static Map<Long, String> read(
      Table table, List<FileScanTask> tasks, SharedDeletes shared) {
    Map<Long, String> out = new TreeMap<>();
    for (FileScanTask task : tasks) {
      FileRows.forEach(table, task, table.schema(), shared, r -> {
        String earlier = out.put((Long) r.getField("id"), (String) r.getField("v"));
        assertThat(earlier).as("key %s live in two files", r.getField("id")).isNull();
      });
    }
    return out;
  }

  private static Record row(long id, String v) {
    Record r = GenericRecord.create(SCHEMA);
    r.setField("id", id);
    r.setField("v", v);
    return r;
  }

  /** Commits a data file of {@code rows} and an equality-delete file of {@code keys}; 1 delete file. */
  private static int commit(Table table, List<Record> rows, List<Long> keys) throws IOException {
    Schema keySchema = TypeUtil.select(SCHEMA, Set.of(1));
    GenericFileWriterFactory writers = writers(table, SCHEMA);
    OutputFileFactory files = files(table);
    EqualityDeleteWriter<Record> deletes =
        writers.newEqualityDeleteWriter(files.newOutputFile(), table.spec(), null);
    try (deletes) {
      for (long id : keys) {
        Record k = GenericRecord.create(keySchema);
        k.setField("id", id);
        deletes.write(k);
      }
    }
    DataWriter<Record> data = writers.newDataWriter(files.newOutputFile(), table.spec(), null);
    try (data) {
      rows.forEach(data::write);
    }
    DataFile dataFile = data.toDataFile();
    DeleteFile deleteFile = deletes.toDeleteFile();
    // One commit, as ingest's: a delete applies to older files only, not to its own batch's rows.
    table.newRowDelta().addRows(dataFile).addDeletes(deleteFile).commit();
    return 1;
  }

  /** Writers of {@code schema}'s rows, and of equality deletes by its field 1 ({@code id}). */
  private static GenericFileWriterFactory writers(Table table, Schema schema) {
    return new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET)
        .deleteFileFormat(FileFormat.PARQUET)
        .dataSchema(schema)
        .equalityFieldIds(new int[] {1})
        .equalityDeleteRowSchema(TypeUtil.select(schema, Set.of(1)))
        .build();
  }

  private static OutputFileFactory files(Table table) {
    return OutputFileFactory.builderFor(table, 0, 0)
        .format(FileFormat.PARQUET)
        .operationId(UUID.randomUUID().toString())
        .build();
  }
}
