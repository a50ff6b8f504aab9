package dev.lakestream.sync.convert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * A group's files read several at once convert exactly as read one after the other: the same
 * positions in the same data files' vectors, results in the group's order, and a failing file
 * named as the first in that order.
 */
class FileConverterTest {

  private static final Schema SCHEMA = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get())),
      Set.of(1));

  @Test
  void readingAGroupsFilesAtOnceConvertsExactlyAsReadingThemInTurn() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", SCHEMA).create();
      Random random = new Random(11);
      List<List<Long>> fileKeys = new ArrayList<>();
      List<DataFile> dataFiles = new ArrayList<>();
      for (int f = 0; f < 12; f++) {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
          ids.add((long) random.nextInt(3_000));
        }
        fileKeys.add(ids);
        dataFiles.add(KeyFiles.data(table, SCHEMA, new ArrayList<>(ids)));
      }
      List<Set<Long>> deleted = new ArrayList<>();
      List<DeleteFile> deleteFiles = new ArrayList<>();
      for (int d = 0; d < 2; d++) {
        Set<Long> ids = new TreeSet<>();
        while (ids.size() < 200) {
          ids.add((long) random.nextInt(3_000));
        }
        deleted.add(ids);
        deleteFiles.add(KeyFiles.deletes(table, SCHEMA, new ArrayList<>(ids)));
      }
      FileConverter inTurn = new FileConverter(1);
      FileConverter atOnce = new FileConverter(8);

      // Round 1: no vectors yet. Round 2: the second delete file over round 1's vectors.
      List<DeleteFileJson> current = new ArrayList<>();
      for (int f = 0; f < dataFiles.size(); f++) {
        current.add(null);
      }
      Set<Long> deletedSoFar = new HashSet<>();
      for (int round = 0; round < 2; round++) {
        List<ConvertTask> tasks = new ArrayList<>();
        for (int f = 0; f < dataFiles.size(); f++) {
          tasks.add(new ConvertTask(
              "t.items",
              "cycle-" + round,
              DataFileJson.of(dataFiles.get(f), table.spec()),
              current.get(f),
              List.of(DeleteFileJson.of(deleteFiles.get(round), table.spec()))));
        }
        ConvertGroup group = new ConvertGroup("t.items", "cycle-" + round, tasks);
        long named = tasks.stream().filter(t -> t.currentDv() != null).count();
        List<ConvertResult> one = inTurn.convert(table, group);
        List<ConvertResult> many = atOnce.convert(table, group);
        deletedSoFar.addAll(deleted.get(round));

        assertThat(many)
            .extracting(ConvertResult::dataFilePath)
            .containsExactlyElementsOf(
                dataFiles.stream().map(DataFile::location).toList());
        int withVectors = 0;
        for (int f = 0; f < dataFiles.size(); f++) {
          List<Long> expected = new ArrayList<>();
          for (int p = 0; p < fileKeys.get(f).size(); p++) {
            if (deletedSoFar.contains(fileKeys.get(f).get(p))) {
              expected.add((long) p);
            }
          }
          String path = dataFiles.get(f).location();
          assertThat(positions(table, many.get(f), path))
              .as("round %d, file %d, read at once", round, f)
              .containsExactlyElementsOf(expected);
          assertThat(positions(table, one.get(f), path))
              .as("round %d, file %d, read in turn", round, f)
              .containsExactlyElementsOf(expected);
          assertThat(many.get(f).keysMatched()).isEqualTo(one.get(f).keysMatched());
          assertThat(many.get(f).rowsScanned()).isEqualTo(one.get(f).rowsScanned());
          if (many.get(f).newDv() != null) {
            withVectors++;
            current.set(f, many.get(f).newDv());
          }
        }
        assertThat(withVectors).as("round %d converts something", round).isGreaterThan(6);
        if (round == 1) {
          assertThat(named).isGreaterThan(6);
          // Round 2 merged round 1's vectors, which the converter reading at once wrote: from
          // its memory; the other converter read them.
          assertThat(atOnce.vectorsReused()).isEqualTo(named);
          assertThat(atOnce.vectorsRead()).isZero();
          assertThat(inTurn.vectorsRead()).isEqualTo(named);
          assertThat(inTurn.vectorsReused()).isZero();
        }
      }
    }
  }

  @Test
  void theFirstFileThatCannotBeReadInTheGroupsOrderFailsIt() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", SCHEMA).create();
      DeleteFile deletes = KeyFiles.deletes(table, SCHEMA, new ArrayList<>(List.of(1L, 2L, 3L)));
      List<ConvertTask> tasks = new ArrayList<>();
      for (int f = 0; f < 10; f++) {
        DataFile file = f == 4 || f == 8
            ? DataFiles.builder(table.spec())
                .withPath(table.location() + "/data/missing-" + f + ".parquet")
                .withFormat(FileFormat.PARQUET)
                .withFileSizeInBytes(100)
                .withRecordCount(3)
                .build()
            : KeyFiles.data(table, SCHEMA, new ArrayList<>(List.of(1L, 5L, (long) f)));
        tasks.add(new ConvertTask(
            "t.items",
            "cycle",
            DataFileJson.of(file, table.spec()),
            null,
            List.of(DeleteFileJson.of(deletes, table.spec()))));
      }
      ConvertGroup group = new ConvertGroup("t.items", "cycle", tasks);
      for (FileConverter converter : List.of(new FileConverter(1), new FileConverter(8))) {
        assertThatThrownBy(() -> converter.convert(table, group))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("converting " + table.location() + "/data/missing-4.parquet");
      }
    }
  }

  @Test
  void aVectorItWroteIsMergedFromMemoryInTheNextCycleNotReadAgain() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", SCHEMA).create();
      List<Object> ids = new ArrayList<>();
      for (long id = 0; id < 100; id++) {
        ids.add(id);
      }
      DataFile file = KeyFiles.data(table, SCHEMA, ids);
      DeleteFile first = KeyFiles.deletes(table, SCHEMA, new ArrayList<>(List.of(1L, 2L, 3L)));
      DeleteFile second = KeyFiles.deletes(table, SCHEMA, new ArrayList<>(List.of(10L, 11L)));
      FileConverter converter = new FileConverter(1);
      ConvertResult cycle1 = converter.convert(table, task(table, file, null, first, "cycle-1"));
      assertThat(positions(table, cycle1, file.location())).containsExactly(1L, 2L, 3L);
      assertThat(converter.vectorsRead()).isZero();

      // Cycle 1's Puffin file is gone from storage from here on: only a vector kept in memory can
      // be merged. Cycle 2's deletes are of keys the file does not hold: no new vector, and cycle
      // 1's stays the current one.
      DeleteFile dv1 = cycle1.newDv(table.specs());
      table.io().deleteFile(dv1.location());
      DeleteFile elsewhere = KeyFiles.deletes(table, SCHEMA, new ArrayList<>(List.of(500L, 501L)));
      ConvertResult cycle2 =
          converter.convert(table, task(table, file, cycle1.newDv(), elsewhere, "cycle-2"));
      assertThat(cycle2.newDv()).isNull();
      // Cycle 3 merges cycle 1's vector.
      ConvertTask next = task(table, file, cycle1.newDv(), second, "cycle-3");
      ConvertResult cycle3 = converter.convert(table, next);
      assertThat(positions(table, cycle3, file.location())).containsExactly(1L, 2L, 3L, 10L, 11L);
      assertThat(cycle3.rewrittenDvs())
          .as("the merged vector is the one it replaces")
          .extracting(DeleteFileJson::path)
          .containsExactly(dv1.location());
      assertThat(converter.vectorsReused()).isEqualTo(2);
      assertThat(converter.vectorsRead()).isZero();

      // Another converter (another instance, or this one restarted) did not write it: it reads it.
      FileConverter other = new FileConverter(1);
      assertThatThrownBy(() -> other.convert(table, next))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("converting " + file.location());
      assertThat(other.vectorsRead()).isEqualTo(1);
    }
  }

  private static ConvertTask task(
      Table table, DataFile file, DeleteFileJson current, DeleteFile deletes, String cycle) {
    return new ConvertTask(
        "t.items",
        cycle,
        DataFileJson.of(file, table.spec()),
        current,
        List.of(DeleteFileJson.of(deletes, table.spec())));
  }

  private static List<Long> positions(Table table, ConvertResult result, String dataFile) {
    DeleteFile dv = result.newDv(table.specs());
    List<Long> positions = new ArrayList<>();
    if (dv == null) {
      return positions;
    }
    assertThat(dv.referencedDataFile()).isEqualTo(dataFile);
    PositionDeleteIndex index = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()))
        .loadPositionDeletes(List.of(dv), dataFile);
    index.forEach(positions::add);
    return positions;
  }
}
