package dev.lakestream.sync.convert;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * The positions a task's equality deletes hit in its data file are those of the rows whose key one
 * of the task's delete files holds, whatever other tasks with other delete files the same resolver
 * (and its caches of keys) resolved before.
 */
class ScanResolverTest {

  private static final Schema SCHEMA = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get())),
      Set.of(1));
  private static final Schema KEY = TypeUtil.select(SCHEMA, Set.of(1));

  @Test
  void eachTaskMatchesTheKeysOfItsOwnDeleteFilesOnlyWhateverWasResolvedBefore() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", SCHEMA).create();
      Random random = new Random(7);
      List<List<Long>> fileKeys = new ArrayList<>();
      List<DataFile> dataFiles = new ArrayList<>();
      for (int f = 0; f < 3; f++) {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
          ids.add((long) random.nextInt(2_000));
        }
        fileKeys.add(ids);
        dataFiles.add(writeData(table, ids));
      }
      List<Set<Long>> deleteKeys = new ArrayList<>();
      List<DeleteFile> deleteFiles = new ArrayList<>();
      for (int d = 0; d < 3; d++) {
        Set<Long> ids = new TreeSet<>();
        while (ids.size() < 150) {
          ids.add((long) random.nextInt(2_000));
        }
        deleteKeys.add(ids);
        deleteFiles.add(writeDeletes(table, ids));
      }
      // Subsets of the delete files in an order where a union cached for one subset would give
      // another subset's task the wrong keys.
      List<List<Integer>> subsets = List.of(
          List.of(0, 1, 2),
          List.of(1, 2),
          List.of(2),
          List.of(0, 1, 2),
          List.of(0, 2),
          List.of(1, 2),
          List.of(0),
          List.of(2, 1));

      ScanResolver resolver = new ScanResolver();
      for (int round = 0; round < subsets.size(); round++) {
        List<Integer> subset = subsets.get(round);
        int f = round % dataFiles.size();
        ConvertTask task = new ConvertTask(
            "t.items",
            "cycle-" + round,
            DataFileJson.of(dataFiles.get(f), table.spec()),
            null,
            subset.stream()
                .map(d -> DeleteFileJson.of(deleteFiles.get(d), table.spec()))
                .toList());

        PositionResolver.Resolution got = resolver.resolve(table, task, dataFiles.get(f), null);

        List<Long> expected = new ArrayList<>();
        for (int p = 0; p < fileKeys.get(f).size(); p++) {
          long id = fileKeys.get(f).get(p);
          if (subset.stream().anyMatch(d -> deleteKeys.get(d).contains(id))) {
            expected.add((long) p);
          }
        }
        assertThat(got.positions())
            .as("file %d with delete files %s", f, subset)
            .containsExactlyElementsOf(expected);
        assertThat(expected).as("the case is not empty").isNotEmpty();
      }
    }
  }

  private static GenericFileWriterFactory writers(Table table) {
    return new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET)
        .deleteFileFormat(FileFormat.PARQUET)
        .dataSchema(SCHEMA)
        .equalityFieldIds(new int[] {1})
        .equalityDeleteRowSchema(KEY)
        .build();
  }

  private static DataFile writeData(Table table, List<Long> ids) throws Exception {
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, 1).format(FileFormat.PARQUET).build();
    DataWriter<Record> writer =
        writers(table).newDataWriter(files.newOutputFile(), table.spec(), null);
    try (writer) {
      for (long id : ids) {
        Record row = GenericRecord.create(SCHEMA);
        row.setField("id", id);
        row.setField("name", "n" + id);
        writer.write(row);
      }
    }
    return writer.toDataFile();
  }

  private static DeleteFile writeDeletes(Table table, Set<Long> ids) throws Exception {
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, 2).format(FileFormat.PARQUET).build();
    EqualityDeleteWriter<Record> writer =
        writers(table).newEqualityDeleteWriter(files.newOutputFile(), table.spec(), null);
    try (writer) {
      for (long id : ids) {
        Record key = GenericRecord.create(KEY);
        key.setField("id", id);
        writer.write(key);
      }
    }
    return writer.toDeleteFile();
  }
}
