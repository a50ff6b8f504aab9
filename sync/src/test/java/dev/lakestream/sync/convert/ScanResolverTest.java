package dev.lakestream.sync.convert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.testkit.Heap;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.StructLikeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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

  /**
   * With the default budget (every set kept), one that keeps some files' keys and no union, and
   * none that keeps anything.
   */
  @ParameterizedTest
  @ValueSource(longs = {-1, 60_000, 0})
  void eachTaskMatchesTheKeysOfItsOwnDeleteFilesOnlyWhateverWasResolvedBefore(long budget)
      throws Exception {
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
        dataFiles.add(KeyFiles.data(table, SCHEMA, new ArrayList<>(ids)));
      }
      List<Set<Long>> deleteKeys = new ArrayList<>();
      List<DeleteFile> deleteFiles = new ArrayList<>();
      for (int d = 0; d < 3; d++) {
        Set<Long> ids = new TreeSet<>();
        while (ids.size() < 150) {
          ids.add((long) random.nextInt(2_000));
        }
        deleteKeys.add(ids);
        deleteFiles.add(KeyFiles.deletes(table, SCHEMA, new ArrayList<>(ids)));
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

      ScanResolver resolver = budget < 0 ? new ScanResolver() : new ScanResolver(budget);
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
      // The caches hold what their budget allows, weighed by the heap their keys take.
      long oneFile = ScanResolver.estimatedBytes(
          new BaseDeleteLoader(d -> table.io().newInputFile(d.location()))
              .loadEqualityDeletes(List.of(deleteFiles.get(0)), KeyFiles.keySchema(SCHEMA)));
      if (budget == 0) {
        assertThat(resolver.cachedBytes()).isZero();
      } else {
        assertThat(resolver.cachedBytes()).isGreaterThanOrEqualTo(oneFile);
      }
      if (budget > 0) {
        assertThat(resolver.cachedBytes()).isLessThanOrEqualTo(budget + budget / 4);
      }
    }
  }

  /**
   * The tasks of one group share one load of their deleted keys, even a set the caches do not keep
   * (a budget of 0 keeps nothing): once loaded for the group, the delete file is not read again.
   */
  @Test
  void aGroupsTasksShareOneLoadOfKeysTheCachesDoNotKeep() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse.v3Table("t", "items", SCHEMA).create();
      DataFile first = KeyFiles.data(table, SCHEMA, new ArrayList<>(List.of(1L, 2L, 3L, 4L)));
      DataFile second = KeyFiles.data(table, SCHEMA, new ArrayList<>(List.of(4L, 5L, 6L, 2L)));
      DeleteFile deletes = KeyFiles.deletes(table, SCHEMA, new ArrayList<>(List.of(2L, 4L)));
      ScanResolver resolver = new ScanResolver(0);
      Map<String, StructLikeSet> groupKeys = new ConcurrentHashMap<>();
      ConvertTask one = task(table, first, deletes);
      ConvertTask two = task(table, second, deletes);

      assertThat(resolver.resolve(table, one, first, null, groupKeys).positions())
          .containsExactly(1L, 3L);
      Files.delete(Path.of(deletes.location()));
      assertThat(resolver.resolve(table, two, second, null, groupKeys).positions())
          .as("the second task of the group, its delete file gone")
          .containsExactly(0L, 3L);
      assertThat(groupKeys).hasSize(1);
      // Caffeine evicts what exceeds the budget in its maintenance, on another thread: let it run
      // (on a loaded machine it had not yet, and the set was still cached).
      assertThat(resolver.cachedBytes()).isZero();
      assertThatThrownBy(() -> resolver.resolve(table, two, second, null))
          .as("outside the group the caches kept nothing, so the file is read again")
          .isInstanceOf(RuntimeException.class);
    }
  }

  private static ConvertTask task(Table table, DataFile file, DeleteFile deletes) {
    return new ConvertTask(
        "t.items",
        "cycle",
        DataFileJson.of(file, table.spec()),
        null,
        List.of(DeleteFileJson.of(deletes, table.spec())));
  }

  /**
   * A key with a column of each type PostgreSQL and MySQL keys map to matches its deletes: the
   * deleted keys are read in Iceberg's internal form (a date as days, a time or timestamp as
   * microseconds), the data file's in Java's ({@code LocalDate}, {@code OffsetDateTime}).
   */
  @Test
  void keysWithDateTimeDecimalUuidAndByteColumnsMatchTheirDeletes() throws Exception {
    OffsetDateTime base = OffsetDateTime.of(2026, 3, 29, 1, 30, 0, 123_456_000, ZoneOffset.UTC);
    Map<String, Map.Entry<Type, IntFunction<Object>>> kinds = new LinkedHashMap<>();
    kinds.put(
        "date", Map.entry(Types.DateType.get(), i -> LocalDate.of(2020, 1, 1).plusDays(i)));
    kinds.put("time", Map.entry(Types.TimeType.get(), i -> LocalTime.of(0, 0).plusSeconds(i * 7L)));
    kinds.put("timestamp", Map.entry(Types.TimestampType.withoutZone(), i -> base.toLocalDateTime()
        .plusMinutes(i)));
    kinds.put("timestamptz", Map.entry(Types.TimestampType.withZone(), i -> base.plusMinutes(i)));
    kinds.put(
        "decimal", Map.entry(Types.DecimalType.of(12, 3), i -> BigDecimal.valueOf(i * 1_001L, 3)));
    kinds.put("string", Map.entry(Types.StringType.get(), i -> "k" + i));
    kinds.put("uuid", Map.entry(Types.UUIDType.get(), i -> new UUID(7, i)));
    kinds.put(
        "binary",
        Map.entry(
            Types.BinaryType.get(),
            i -> ByteBuffer.wrap(new byte[] {1, (byte) i, (byte) (i >> 8)})));
    kinds.put("int", Map.entry(Types.IntegerType.get(), i -> i * 3));
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      for (var kind : kinds.entrySet()) {
        Schema schema = new Schema(
            List.of(
                Types.NestedField.required(1, "id", Types.LongType.get()),
                Types.NestedField.required(2, "k", kind.getValue().getKey()),
                Types.NestedField.optional(3, "name", Types.StringType.get())),
            Set.of(1, 2));
        Schema key = KeyFiles.keySchema(schema);
        IntFunction<Object> value = kind.getValue().getValue();
        Table table = warehouse.v3Table("t", "key_" + kind.getKey(), schema).create();
        List<Record> rows = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          Record row = GenericRecord.create(schema);
          row.setField("id", (long) i % 10);
          row.setField("k", value.apply(i));
          row.setField("name", "n" + i);
          rows.add(row);
        }
        // Every third row's key is deleted; so is a key with the same id and another value, and
        // one with the same value and another id: neither is in the file.
        List<Long> expected = new ArrayList<>();
        List<Record> keys = new ArrayList<>();
        for (int i = 0; i < 100; i += 3) {
          Record k = GenericRecord.create(key);
          k.setField("id", (long) i % 10);
          k.setField("k", value.apply(i));
          keys.add(k);
          expected.add((long) i);
        }
        Record otherValue = GenericRecord.create(key);
        otherValue.setField("id", 1L);
        otherValue.setField("k", value.apply(500));
        keys.add(otherValue);
        Record otherId = GenericRecord.create(key);
        otherId.setField("id", 11L);
        otherId.setField("k", value.apply(1));
        keys.add(otherId);
        DataFile dataFile = KeyFiles.dataFile(table, schema, rows);
        DeleteFile deletes = KeyFiles.deleteFile(table, schema, keys);
        ConvertTask task = new ConvertTask(
            table.name(),
            "cycle-1",
            DataFileJson.of(dataFile, table.spec()),
            null,
            List.of(DeleteFileJson.of(deletes, table.spec())));

        PositionResolver.Resolution got = new ScanResolver().resolve(table, task, dataFile, null);

        assertThat(got.positions())
            .as("a key of id and a %s", kind.getKey())
            .containsExactlyElementsOf(expected);
      }
    }
  }

  /**
   * The caches' bound is only as good as the estimate of what a set of keys takes: compared with
   * the heap the keys of a loaded delete file take, for a numeric key and a 36-character text key.
   */
  @Test
  void theEstimatedBytesAreNearTheHeapLoadedKeysTake() throws Exception {
    int count = 100_000;
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      for (Type type : List.of(Types.LongType.get(), Types.StringType.get())) {
        Schema schema = new Schema(
            List.of(
                Types.NestedField.required(1, "id", type),
                Types.NestedField.optional(2, "name", Types.StringType.get())),
            Set.of(1));
        Schema key = KeyFiles.keySchema(schema);
        Table table = warehouse.v3Table("t", "keys_" + type.typeId(), schema).create();
        List<Record> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          Record k = GenericRecord.create(key);
          k.setField(
              "id",
              type.equals(Types.LongType.get())
                  ? (Object) (i * 7L)
                  : new UUID(i, i * 31L).toString());
          keys.add(k);
        }
        DeleteFile deletes = KeyFiles.deleteFile(table, schema, keys);
        keys.clear();
        BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));
        long before = Heap.inUse();
        StructLikeSet loaded = loader.loadEqualityDeletes(List.of(deletes), key);
        long measured = Heap.inUse() - before;
        assertThat(loaded).hasSize(count);
        long estimated = ScanResolver.estimatedBytes(loaded);
        assertThat((double) estimated / measured)
            .as("%s keys: estimated %d bytes, measured %d", type, estimated, measured)
            .isBetween(0.75, 1.5);
      }
    }
  }
}
