package dev.lakestream.sync.index;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.serialization.BytesSerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The key index against lookups of a table dropped and made again, of mirrored compactions, and of
 * keys of megabytes.
 */
class KeyIndexTest {

  private static final String T = "t.items";
  /** A table keyed by a string {@code id}, with a string {@code name}. */
  private static final Schema TEXT_KEYED = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.StringType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get())),
      Set.of(1));

  /**
   * A cycle planned on a table, whose lookup reaches the index after the table was dropped and
   * made again: its files are not indexed for the new table. Were they, their rows (sequence
   * numbers of the old table, higher than the new one's) would outrank the new table's, the pruning
   * of a later cycle would drop the entry of a row the new table holds, and a delete of that row
   * would then find nothing: two live rows of one key on main.
   */
  @Test
  void aLookupPlannedOnADroppedTableLeavesTheIndexOfTheTableMadeAgainAlone() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      KeyIndex index = new KeyIndex(store());
      Table old = warehouse.v3Table("t", "items", KeyFiles.ID_NAME).create();
      DataFile oldFile = KeyFiles.data(old, KeyFiles.ID_NAME, KeyFiles.ids(1, 4));
      IndexLookup late =
          lookup(old, "planned-on-old", List.of(added(old, oldFile, 57)), Map.of(), List.of());

      warehouse.catalog().dropTable(TableIdentifier.parse(T), false);
      Table made = warehouse.v3Table("t", "items", KeyFiles.ID_NAME).create();
      IndexResult stale = index.lookup(made, late);
      assertThat(stale.keysIndexed()).isZero();
      assertThat(index.indexed(T, 0, oldFile.location())).isFalse();

      // The new table's own cycles: key 1 written at 2, updated at 3 and again at 4, each
      // update's equality delete paired with the file before it.
      DataFile first = KeyFiles.data(made, KeyFiles.ID_NAME, List.of(1, 2));
      index.lookup(made, lookup(made, "c2", List.of(added(made, first, 2)), Map.of(), List.of()));
      Update second = updateKeyOne(index, made, first, 3);
      assertThat(second.result().positions()).containsEntry(first.location(), List.of(0L));
      Update third = updateKeyOne(index, made, second.file(), 4);

      assertThat(third.result().positions())
          .as("the row of key 1 the update at 4 replaces")
          .containsEntry(second.file().location(), List.of(0L));
    }
  }

  /**
   * The index of a table dropped and made again under its name is forgotten a step at a time: one
   * lookup's transaction would not delete an index of millions of keys before its timeout, and would
   * fail at every attempt. Until it is gone, lookups answer that their files be scanned, and
   * nothing of the old table's index is used.
   */
  @Test
  void theIndexOfADroppedTableIsForgottenInStepsAndUnusedMeanwhile() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      KeyValueStore<Bytes, byte[]> store = store();
      KeyIndex index = new KeyIndex(store, 40);
      Table old = warehouse.v3Table("t", "items", KeyFiles.ID_NAME).create();
      DataFile oldFile = KeyFiles.data(old, KeyFiles.ID_NAME, KeyFiles.ids(0, 100));
      index.lookup(old, lookup(old, "c1", List.of(added(old, oldFile, 1)), Map.of(), List.of()));
      assertThat(index.indexed(T, 0, oldFile.location())).isTrue();

      warehouse.catalog().dropTable(TableIdentifier.parse(T), false);
      Table made = warehouse.v3Table("t", "items", KeyFiles.ID_NAME).create();
      DataFile first = KeyFiles.data(made, KeyFiles.ID_NAME, List.of(1, 2));
      DeleteFile delete = KeyFiles.deletes(made, KeyFiles.ID_NAME, List.of(1));
      List<IndexResult> results = new ArrayList<>();
      do {
        results.add(index.lookup(
            made,
            lookup(
                made,
                "c2",
                List.of(added(made, first, 2)),
                Map.of(first.location(), List.of(delete.location())),
                List.of(deleted(made, delete, 3)))));
      } while (results.get(results.size() - 1).positions().isEmpty() && results.size() < 10);

      // 100 entries and 4 records of the old file and partition, 40 at a time.
      assertThat(results).as("lookups until the old index was gone").hasSize(3);
      assertThat(results.subList(0, 2))
          .as("the lookups while it was being forgotten")
          .allSatisfy(r -> {
            assertThat(r.unresolvedFiles()).containsExactly(first.location());
            assertThat(r.keysIndexed()).isZero();
          });
      assertThat(results.get(2).positions())
          .as("the new table's row of key 1, which the delete removes")
          .isEqualTo(Map.of(first.location(), List.of(0L)));
      assertThat(index.indexed(T, 0, oldFile.location())).isFalse();
      assertThat(entryBytes(store)).as("entries of the new table's two keys").isEqualTo(2 * 16);
    }
  }

  /**
   * Each mirrored compaction forgets the files it replaces and indexes the one that replaces them:
   * the keys' entries of the forgotten files go as the new file is indexed, so a key that is never
   * updated again keeps one entry however often its row is compacted, and a delete still finds it.
   */
  @Test
  void aMirroredCompactionLeavesOneEntryPerKey() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      KeyValueStore<Bytes, byte[]> store = store();
      KeyIndex index = new KeyIndex(store);
      Table table = warehouse.v3Table("t", "items", KeyFiles.ID_NAME).create();
      DataFile a = KeyFiles.data(table, KeyFiles.ID_NAME, KeyFiles.ids(0, 50));
      DataFile b = KeyFiles.data(table, KeyFiles.ID_NAME, KeyFiles.ids(50, 100));
      index.lookup(
          table,
          lookup(
              table, "c1", List.of(added(table, a, 1), added(table, b, 2)), Map.of(), List.of()));
      assertThat(entryBytes(store)).as("entries after indexing 100 keys").isEqualTo(100 * 16);

      DataFile previous = null;
      List<String> replaced = List.of(a.location(), b.location());
      for (int compaction = 1; compaction <= 3; compaction++) {
        DataFile compacted = KeyFiles.data(table, KeyFiles.ID_NAME, KeyFiles.ids(0, 100));
        index.lookup(
            table,
            new IndexLookup(
                T,
                "compaction" + compaction,
                0,
                1,
                List.of(added(table, compacted, 2)),
                replaced,
                List.of(),
                Map.of(),
                table.uuid().toString()));
        assertThat(entryBytes(store))
            .as("entries after compaction %s of the 100 keys", compaction)
            .isEqualTo(100 * 16);
        previous = compacted;
        replaced = List.of(compacted.location());
      }

      DeleteFile delete = KeyFiles.deletes(table, KeyFiles.ID_NAME, List.of(42));
      IndexResult result = index.lookup(
          table,
          lookup(
              table,
              "c3",
              List.of(),
              Map.of(previous.location(), List.of(delete.location())),
              List.of(deleted(table, delete, 3))));
      assertThat(result.unresolvedFiles()).isEmpty();
      assertThat(result.positions())
          .as("the position of key 42's row in the last compacted file")
          .containsExactly(Map.entry(previous.location(), List.of(42L)));
    }
  }

  /**
   * A primary key of megabytes is stored as its digest: its changelog record would be larger than
   * Kafka takes, and the stream thread would fail at every commit. Its delete still finds its row,
   * and a key just short of the limit, stored whole, is not confused with it.
   */
  @Test
  void aKeyOfMegabytesIsStoredAsItsDigestAndItsDeleteFindsItsRow() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      KeyValueStore<Bytes, byte[]> store = store();
      KeyIndex index = new KeyIndex(store);
      Table table = warehouse.v3Table("t", "items", TEXT_KEYED).create();
      String huge = "k".repeat(2_000_000);
      String justShort = "s".repeat(KeyIndex.MAX_STORED_KEY - 8);
      DataFile first = KeyFiles.data(table, TEXT_KEYED, List.of("small", huge, justShort));
      index.lookup(
          table, lookup(table, "c1", List.of(added(table, first, 1)), Map.of(), List.of()));
      assertThat(largestStoreKey(store))
          .as("bytes of the largest store key")
          .isLessThanOrEqualTo(KeyIndex.MAX_STORED_KEY + 64);

      DataFile second = KeyFiles.data(table, TEXT_KEYED, List.of(huge, justShort));
      DeleteFile delete = KeyFiles.deletes(table, TEXT_KEYED, List.of(huge, justShort));
      IndexResult result = index.lookup(
          table,
          lookup(
              table,
              "c2",
              List.of(added(table, second, 2)),
              Map.of(first.location(), List.of(delete.location())),
              List.of(deleted(table, delete, 2))));
      assertThat(result.unresolvedFiles()).isEmpty();
      assertThat(result.positions())
          .as("the rows of the long key and of the key just short of the limit")
          .containsOnlyKeys(first.location());
      assertThat(result.positions().get(first.location())).containsExactlyInAnyOrder(1L, 2L);
    }
  }

  /**
   * An index kept by a version that stored a long key whole (its changelog took keys up to about
   * 1 MB): its entries are still found by a delete, and move under the digest when the key is
   * indexed again. It is not built again, and is marked with this version, which the earlier one
   * does not take as its own.
   */
  @Test
  void aLongKeyKeptWholeByAnEarlierVersionIsFoundAndMovedUnderItsDigest() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      KeyValueStore<Bytes, byte[]> store = store();
      KeyIndex index = new KeyIndex(store);
      Table table = warehouse.v3Table("t", "items", TEXT_KEYED).create();
      String longKey = "k".repeat(5_000);
      DataFile first = KeyFiles.data(table, TEXT_KEYED, List.of("small", longKey));
      index.lookup(
          table, lookup(table, "c1", List.of(added(table, first, 1)), Map.of(), List.of()));
      // As the earlier version kept it.
      Record key = GenericRecord.create(KeyFiles.keySchema(TEXT_KEYED));
      key.setField("id", longKey);
      byte[] keyBytes = new KeyCodec(KeyFiles.keySchema(TEXT_KEYED)).bytes(key);
      Bytes digest = KeyIndex.entryKey(T, keyBytes);
      Bytes whole = KeyIndex.wholeEntryKey(T, keyBytes);
      store.put(whole, store.delete(digest));
      store.put(versionKey(), versionValue(KeyCodec.VERSION_WHOLE_LONG_KEYS, table));

      DeleteFile delete = KeyFiles.deletes(table, TEXT_KEYED, List.of(longKey));
      IndexResult result = index.lookup(
          table,
          lookup(
              table,
              "c2",
              List.of(),
              Map.of(first.location(), List.of(delete.location())),
              List.of(deleted(table, delete, 2))));
      assertThat(result.positions())
          .as("the long key's row, found where the earlier version kept it")
          .containsExactly(Map.entry(first.location(), List.of(1L)));
      assertThat(store.get(versionKey()))
          .as("the index marked with this version (one before digests builds it again)")
          .isEqualTo(versionValue(KeyCodec.VERSION, table));

      DataFile second = KeyFiles.data(table, TEXT_KEYED, List.of(longKey));
      index.lookup(
          table, lookup(table, "c3", List.of(added(table, second, 3)), Map.of(), List.of()));
      assertThat(store.get(whole)).as("entries under the whole key").isNull();
      assertThat(store.get(digest)).as("entries under the digest").isNotNull();
      DeleteFile again = KeyFiles.deletes(table, TEXT_KEYED, List.of(longKey));
      IndexResult later = index.lookup(
          table,
          lookup(
              table,
              "c4",
              List.of(),
              Map.of(second.location(), List.of(again.location())),
              List.of(deleted(table, again, 4))));
      assertThat(later.positions()).containsExactly(Map.entry(second.location(), List.of(0L)));
    }
  }

  /** The store key of the encoding version of {@link #T}'s index. */
  private static Bytes versionKey() {
    byte[] name = T.getBytes(StandardCharsets.UTF_8);
    return Bytes.wrap(ByteBuffer.allocate(2 + name.length)
        .put((byte) 'V')
        .put(name)
        .put((byte) 0)
        .array());
  }

  private static byte[] versionValue(int version, Table table) {
    byte[] uuid = table.uuid().toString().getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(4 + uuid.length).putInt(version).put(uuid).array();
  }

  private static int largestStoreKey(KeyValueStore<Bytes, byte[]> store) {
    int largest = 0;
    try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
      while (it.hasNext()) {
        largest = Math.max(largest, it.next().key.get().length);
      }
    }
    return largest;
  }

  /** The bytes of every key's entries in the store. */
  private static long entryBytes(KeyValueStore<Bytes, byte[]> store) {
    long bytes = 0;
    try (KeyValueIterator<Bytes, byte[]> it =
        store.prefixScan(Bytes.wrap(new byte[] {'E'}), new BytesSerializer())) {
      while (it.hasNext()) {
        bytes += it.next().value.length;
      }
    }
    return bytes;
  }

  /** A file an update wrote, and the index's answer to its cycle. */
  private record Update(DataFile file, IndexResult result) {}

  /**
   * A cycle of an update of key 1 at {@code sequence}: its file, and its equality delete paired
   * with {@code previous}, the file holding the key's row before.
   */
  private static Update updateKeyOne(KeyIndex index, Table table, DataFile previous, long sequence)
      throws Exception {
    DataFile file = KeyFiles.data(table, KeyFiles.ID_NAME, List.of(1));
    DeleteFile delete = KeyFiles.deletes(table, KeyFiles.ID_NAME, List.of(1));
    IndexResult result = index.lookup(
        table,
        lookup(
            table,
            "c" + sequence,
            List.of(added(table, file, sequence)),
            Map.of(previous.location(), List.of(delete.location())),
            List.of(deleted(table, delete, sequence))));
    return new Update(file, result);
  }

  private static IndexLookup lookup(
      Table table,
      String cycle,
      List<CyclePlan.SequencedFile> added,
      Map<String, List<String>> taskDeletes,
      List<CyclePlan.SequencedDelete> deletes) {
    return new IndexLookup(
        T, cycle, 0, 1, added, List.of(), deletes, taskDeletes, table.uuid().toString());
  }

  private static CyclePlan.SequencedFile added(Table table, DataFile file, long sequence) {
    return new CyclePlan.SequencedFile(DataFileJson.of(file, table.spec()), sequence);
  }

  private static CyclePlan.SequencedDelete deleted(Table table, DeleteFile file, long sequence) {
    return new CyclePlan.SequencedDelete(DeleteFileJson.of(file, table.spec()), sequence);
  }

  private static KeyValueStore<Bytes, byte[]> store() {
    KeyValueStore<Bytes, byte[]> store = Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore("key-index"), Serdes.Bytes(), Serdes.ByteArray())
        .withLoggingDisabled()
        .build();
    store.init(new MockProcessorContext<>().getStateStoreContext(), store);
    return store;
  }
}
