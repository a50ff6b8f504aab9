package dev.lakestream.sync.index;

import dev.lakestream.common.Sha256;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.common.iceberg.KeyColumns;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.kafka.common.serialization.BytesSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key index of one or more index partitions: primary key to (data file, row position) for the
 * rows of the data files it has indexed, in a Kafka Streams key-value store (RocksDB,
 * changelogged). Keys are spread over partitions by hash; a partition indexes, of every data file,
 * the keys that hash to it.
 *
 * <p>Never trusted blindly: a file the partition has not indexed is reported unresolved (the cycle
 * scans it); an entry whose file is gone (compacted away) is dropped; an entry is used only for a
 * file and delete the cycle's plan pairs. An entry the cycle does not use is pruned once a newer
 * row of its key is in a file indexed before the cycle (the delete that came with the newer row
 * removed it). Resolution is idempotent: a cycle planned again resolves the same positions.
 *
 * <p>Store layout, every key prefixed with a kind byte and {@code table\0}:
 * {@code E key} → (file id, position)* (a key of more than {@value #MAX_STORED_KEY} bytes as a
 * digest, see {@link #entryKey}); {@code F p path} → (file id, data sequence number);
 * {@code I p id} → (data sequence number, path); {@code N p} → next file id; {@code K p} →
 * number of partitions; {@code V} → the {@link KeyCodec#VERSION} the entries are written in and the
 * UUID of the table they index.
 */
public final class KeyIndex {

  private static final BytesSerializer BYTES = new BytesSerializer();
  /** Positions one result may carry (about 0.5 MB of JSON). */
  static final long MAX_POSITIONS = 60_000;

  /** Encoded primary keys longer than this are stored as their digest ({@link #entryKey}). */
  static final int MAX_STORED_KEY = 1_024;

  private static final Logger LOG = LoggerFactory.getLogger(KeyIndex.class);

  /**
   * Store records one call removes of an index being cleared: each is a changelog record of the
   * task's transaction, which must end within its timeout however large the index.
   */
  static final int CLEAR_STEP = 50_000;

  private final KeyValueStore<Bytes, byte[]> store;
  private final int clearStep;

  public KeyIndex(KeyValueStore<Bytes, byte[]> store) {
    this(store, CLEAR_STEP);
  }

  KeyIndex(KeyValueStore<Bytes, byte[]> store, int clearStep) {
    this.store = store;
    this.clearStep = clearStep;
  }

  /** Files and bytes one lookup read, and keys it indexed and resolved. */
  private static final class Work {
    long keysIndexed;
    long deleteKeys;
    long filesRead;
    long bytesRead;
  }

  /**
   * Applies one partition's share of a cycle and resolves its delete keys: the cycle's file
   * changes first ({@link #apply}), then its deletes ({@link #resolveDeletes}), then the entries
   * the deletes made stale are pruned and the result is capped to one record ({@link #result}).
   */
  public IndexResult lookup(Table table, IndexLookup lookup) {
    String t = lookup.table();
    int p = lookup.partition();
    if (lookup.tableUuid() != null && !lookup.tableUuid().equals(table.uuid().toString())) {
      // Planned on a table since dropped and made again under its name: its files are not the new
      // table's, and indexing them would let their rows outrank the new table's own. The cycle
      // cannot commit to the new table; it scans meanwhile, and the index is left as it is.
      LOG.info(
          "Key index {} partition {}: cycle {} was planned on table {}, which is now {}; not indexed",
          t,
          p,
          lookup.cycleId(),
          lookup.tableUuid(),
          table.uuid());
      return unresolved(lookup);
    }
    if (!sameTable(t, table.uuid().toString())) {
      return unresolved(lookup); // an earlier index is still being cleared: the cycle scans
    }
    registerPartitions(t, p, lookup.partitions());
    Schema keySchema = KeyColumns.keySchema(table);
    KeyCodec codec = new KeyCodec(keySchema);
    Work work = new Work();
    Set<String> pending = apply(table, lookup, keySchema, codec, work);
    Map<String, Set<Long>> positions = new HashMap<>();
    Map<Bytes, Set<Long>> used = new HashMap<>();
    resolveDeletes(table, lookup, keySchema, codec, positions, used, work);
    used.forEach((entryKey, ids) -> prune(t, p, entryKey, ids, pending));
    return result(lookup, positions, work);
  }

  /** A result that resolves nothing: every file of the cycle's tasks is scanned instead. */
  public static IndexResult unresolved(IndexLookup lookup) {
    return new IndexResult(
        lookup.table(),
        lookup.cycleId(),
        lookup.partition(),
        Map.of(),
        List.copyOf(lookup.taskDeletes().keySet()),
        0,
        0,
        0,
        0);
  }

  /**
   * Forgets the files the cycle removes and indexes those it adds (once: a cycle planned again
   * finds them indexed); returns the paths of the added files.
   */
  private Set<String> apply(
      Table table, IndexLookup lookup, Schema keySchema, KeyCodec codec, Work work) {
    String t = lookup.table();
    int p = lookup.partition();
    for (String path : lookup.removeDataFiles()) {
      forget(t, p, path);
    }
    Set<String> added = new HashSet<>();
    for (CyclePlan.SequencedFile f : lookup.addDataFiles()) {
      DataFile file = f.file().decode(table.specs());
      added.add(file.location());
      if (fileId(t, p, file.location()) == null) {
        work.keysIndexed +=
            index(table, t, p, lookup.partitions(), file, f.dataSequenceNumber(), keySchema, codec);
        work.bytesRead += KeyColumns.bytes(file, keySchema);
        work.filesRead++;
      }
    }
    return added;
  }

  /**
   * Resolves the keys of this partition in the cycle's equality deletes to positions in the data
   * files the plan pairs each delete with.
   */
  private void resolveDeletes(
      Table table,
      IndexLookup lookup,
      Schema keySchema,
      KeyCodec codec,
      Map<String, Set<Long>> positions,
      Map<Bytes, Set<Long>> used,
      Work work) {
    String t = lookup.table();
    int p = lookup.partition();
    BaseDeleteLoader loader = ContentFiles.deleteLoader(table.io());
    Map<String, Set<String>> pairedFiles = new HashMap<>();
    lookup
        .taskDeletes()
        .forEach((dataPath, deletes) -> deletes.forEach(
            d -> pairedFiles.computeIfAbsent(d, k -> new HashSet<>()).add(dataPath)));
    for (CyclePlan.SequencedDelete sequenced : lookup.deleteFiles()) {
      DeleteFile delete = sequenced.file().decode(table.specs());
      Set<String> paired = pairedFiles.getOrDefault(delete.location(), Set.of());
      if (paired.isEmpty()) {
        continue;
      }
      work.bytesRead += KeyColumns.bytes(delete, keySchema);
      work.filesRead++;
      for (StructLike key : loader.loadEqualityDeletes(List.of(delete), keySchema)) {
        byte[] keyBytes = codec.bytes(key);
        if (KeyCodec.partition(keyBytes, lookup.partitions()) != p) {
          continue;
        }
        work.deleteKeys++;
        resolve(t, p, keyBytes, sequenced.dataSequenceNumber(), paired, positions, used);
      }
    }
  }

  /**
   * The result: positions per task file; files the partition has not indexed are unresolved (the
   * cycle scans them), and so are the files with the most positions once the result would pass
   * one Kafka record.
   */
  private IndexResult result(IndexLookup lookup, Map<String, Set<Long>> positions, Work work) {
    List<String> unresolved = new ArrayList<>();
    for (String path : lookup.taskDeletes().keySet()) {
      if (fileId(lookup.table(), lookup.partition(), path) == null) {
        unresolved.add(path);
        positions.remove(path);
      }
    }
    long total = positions.values().stream().mapToLong(Set::size).sum();
    if (total > MAX_POSITIONS) {
      List<String> largest = new ArrayList<>(positions.keySet());
      largest.sort(
          (a, b) -> Integer.compare(positions.get(b).size(), positions.get(a).size()));
      for (String path : largest) {
        if (total <= MAX_POSITIONS) {
          break;
        }
        total -= positions.remove(path).size();
        unresolved.add(path);
      }
    }
    Map<String, List<Long>> out = new HashMap<>();
    positions.forEach((path, set) -> out.put(path, new ArrayList<>(set)));
    return new IndexResult(
        lookup.table(),
        lookup.cycleId(),
        lookup.partition(),
        out,
        unresolved,
        work.deleteKeys,
        work.keysIndexed,
        work.filesRead,
        work.bytesRead);
  }

  /**
   * Adds the keys of {@code file} that hash to partition {@code p}; returns how many. A key's
   * entries of files the index has forgotten are dropped on the way: a mirrored compaction forgets
   * the files it replaces and indexes the file that replaces them, so without this each compaction
   * would leave one dead entry per key, kept until a delete of the key met it.
   */
  public long index(
      Table table,
      String t,
      int p,
      int n,
      DataFile file,
      long sequence,
      Schema keySchema,
      KeyCodec codec) {
    long id = nextId(t, p);
    long[] count = {0};
    long[] position = {0};
    Map<Long, Boolean> known = new HashMap<>();
    known.put(id, true); // this file's own entries: its id is stored once all its keys are
    KeyColumns.forEach(table, file, keySchema, key -> {
      byte[] keyBytes = codec.bytes(key);
      if (KeyCodec.partition(keyBytes, n) == p) {
        Bytes entryKey = entryKey(t, keyBytes);
        Stored stored = stored(t, entryKey, keyBytes);
        byte[] old = stored == null ? null : stored.entries();
        if (stored != null && !stored.key().equals(entryKey)) {
          store.delete(stored.key()); // kept whole by an earlier version: moved under the digest
        }
        ByteBuffer entries = ByteBuffer.allocate((old == null ? 0 : old.length) + 16);
        if (old != null) {
          ByteBuffer olds = ByteBuffer.wrap(old);
          for (int i = 0; i < old.length / 16; i++) {
            long oldId = olds.getLong();
            long oldPosition = olds.getLong();
            if (known.computeIfAbsent(oldId, k -> fileOf(t, p, k) != null)) {
              entries.putLong(oldId).putLong(oldPosition);
            }
          }
        }
        entries.putLong(id).putLong(position[0]);
        store.put(entryKey, Arrays.copyOf(entries.array(), entries.position()));
        count[0]++;
      }
      position[0]++;
    });
    store.put(
        key('F', t, p, file.location().getBytes(StandardCharsets.UTF_8)),
        ByteBuffer.allocate(16).putLong(id).putLong(sequence).array());
    byte[] path = file.location().getBytes(StandardCharsets.UTF_8);
    store.put(
        key('I', t, p, ByteBuffer.allocate(8).putLong(id).array()),
        ByteBuffer.allocate(8 + path.length).putLong(sequence).put(path).array());
    return count[0];
  }

  /** Whether partition {@code p} has indexed the data file at {@code path}. */
  public boolean indexed(String t, int p, String path) {
    return fileId(t, p, path) != null;
  }

  /** The partitions of {@code t} this store holds, with their partition count. */
  public Map<Integer, Integer> partitions(String t) {
    Map<Integer, Integer> out = new HashMap<>();
    Bytes prefix = prefix('K', t);
    try (KeyValueIterator<Bytes, byte[]> it = store.prefixScan(prefix, BYTES)) {
      it.forEachRemaining(e -> out.put(
          ByteBuffer.wrap(e.key.get(), prefix.get().length, 4).getInt(),
          ByteBuffer.wrap(e.value).getInt()));
    }
    return out;
  }

  /** The tables this store holds an index of. */
  public Set<String> tables() {
    Set<String> out = new TreeSet<>();
    try (KeyValueIterator<Bytes, byte[]> it =
        store.prefixScan(Bytes.wrap(new byte[] {'K'}), BYTES)) {
      it.forEachRemaining(e -> {
        byte[] k = e.key.get();
        int end = 1;
        while (k[end] != 0) {
          end++;
        }
        out.add(new String(k, 1, end - 1, StandardCharsets.UTF_8));
      });
    }
    return out;
  }

  /**
   * Adds the positions of {@code keyBytes}'s rows that a delete at {@code deleteSequence} removes
   * from the files it is paired with; remembers the entries used, which pruning must keep.
   */
  private void resolve(
      String t,
      int p,
      byte[] keyBytes,
      long deleteSequence,
      Set<String> paired,
      Map<String, Set<Long>> positions,
      Map<Bytes, Set<Long>> used) {
    Stored stored = stored(t, entryKey(t, keyBytes), keyBytes);
    if (stored == null) {
      return;
    }
    Bytes entryKey = stored.key();
    byte[] value = stored.entries();
    Set<Long> usedIds = used.computeIfAbsent(entryKey, k -> new HashSet<>());
    ByteBuffer entries = ByteBuffer.wrap(value);
    for (int i = 0; i < value.length / 16; i++) {
      long id = entries.getLong();
      long pos = entries.getLong();
      byte[] file = fileOf(t, p, id);
      if (file == null) {
        continue;
      }
      long seq = ByteBuffer.wrap(file).getLong();
      String path = new String(file, 8, file.length - 8, StandardCharsets.UTF_8);
      if (seq < deleteSequence && paired.contains(path)) {
        positions.computeIfAbsent(path, k -> new TreeSet<>()).add(pos);
        usedIds.add(id);
      }
    }
  }

  /**
   * Drops the entries of a key whose file is gone, and those superseded: a newer row of the key is
   * in a file indexed before this cycle, so the delete that came with it removed this row. Entries
   * this cycle uses are kept (a cycle planned again must find them again).
   */
  private void prune(String t, int p, Bytes entryKey, Set<Long> usedIds, Set<String> pending) {
    byte[] value = store.get(entryKey);
    if (value == null) {
      return;
    }
    int count = value.length / 16;
    ByteBuffer entries = ByteBuffer.wrap(value);
    long[] ids = new long[count];
    long[] pos = new long[count];
    long[] seq = new long[count];
    boolean[] live = new boolean[count];
    long newest = Long.MIN_VALUE;
    for (int i = 0; i < count; i++) {
      ids[i] = entries.getLong();
      pos[i] = entries.getLong();
      byte[] file = fileOf(t, p, ids[i]);
      if (file != null) {
        live[i] = true;
        seq[i] = ByteBuffer.wrap(file).getLong();
        if (!pending.contains(new String(file, 8, file.length - 8, StandardCharsets.UTF_8))) {
          newest = Math.max(newest, seq[i]);
        }
      }
    }
    ByteBuffer kept = ByteBuffer.allocate(value.length);
    for (int i = 0; i < count; i++) {
      if (live[i] && (seq[i] >= newest || usedIds.contains(ids[i]))) {
        kept.putLong(ids[i]).putLong(pos[i]);
      }
    }
    if (kept.position() == 0) {
      store.delete(entryKey);
    } else if (kept.position() < value.length) {
      byte[] pruned = new byte[kept.position()];
      System.arraycopy(kept.array(), 0, pruned, 0, pruned.length);
      store.put(entryKey, pruned);
    }
  }

  /**
   * Makes sure the index of {@code t} is of the table with {@code uuid}, in this version's key
   * encoding. An index built with another encoding, or of a table of the same name that was dropped
   * (and created again), is forgotten: its entries would not be found, or would point into files
   * of another table. Cycles scan the files it lacks while the bootstrap indexes main again.
   *
   * <p>A large index is forgotten over several calls, {@value #CLEAR_STEP} store records at a time
   * (each call is in one Kafka transaction); until it is gone this returns false, and the caller
   * uses nothing of the index (a lookup answers that its files be scanned).
   */
  public boolean sameTable(String t, String uuid) {
    Bytes version = prefix('V', t);
    byte[] known = store.get(version);
    byte[] expected = versionValue(KeyCodec.VERSION, uuid);
    if (known != null
        && Arrays.equals(known, versionValue(KeyCodec.VERSION_WHOLE_LONG_KEYS, uuid))) {
      // Its long keys are found whole, and move under their digest as they are indexed again. The
      // new version marks it, so that a version before digests, which would not find what is
      // under them, builds the index again.
      store.put(version, expected);
      return true;
    }
    if (known == null || !Arrays.equals(known, expected)) {
      if (tables().contains(t) && !clearStep(t)) {
        return false;
      }
      store.put(version, expected);
    }
    return true;
  }

  private static byte[] versionValue(int encoding, String uuid) {
    byte[] id = uuid == null ? new byte[0] : uuid.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(4 + id.length).putInt(encoding).put(id).array();
  }

  /**
   * Forgets up to {@link #clearStep} records of {@code t}'s index in this store, its partition
   * records ({@code K}, by which {@link #tables} knows it) last; whether none is left.
   */
  private boolean clearStep(String t) {
    List<Bytes> keys = new ArrayList<>();
    for (char kind : new char[] {'E', 'F', 'I', 'N', 'K'}) {
      try (KeyValueIterator<Bytes, byte[]> it = store.prefixScan(prefix(kind, t), BYTES)) {
        while (it.hasNext() && keys.size() < clearStep) {
          keys.add(it.next().key);
        }
      }
      if (keys.size() >= clearStep) {
        break;
      }
    }
    keys.forEach(store::delete);
    boolean cleared = keys.size() < clearStep;
    LOG.info(
        "Key index of {}: {} records of the index of an earlier table of the name, or an earlier"
            + " encoding, removed{}",
        t,
        keys.size(),
        cleared ? "; it is built again" : "; more at the next lookup or bootstrap, cycles scan");
    return cleared;
  }

  private void registerPartitions(String t, int p, int n) {
    Bytes k = key('K', t, p, new byte[0]);
    byte[] known = store.get(k);
    if (known != null && ByteBuffer.wrap(known).getInt() != n) {
      throw new IllegalStateException(
          "the key index of " + t + " was built with " + ByteBuffer.wrap(known).getInt()
              + " partitions, the cycle uses " + n
              + ": reset the sync application's state (or go back) to change"
              + " sync.index.partitions");
    }
    if (known == null) {
      store.put(k, ByteBuffer.allocate(4).putInt(n).array());
    }
  }

  /** Forgets a data file: its entries are dropped when next met. */
  public void forget(String t, int p, String path) {
    Bytes byPath = key('F', t, p, path.getBytes(StandardCharsets.UTF_8));
    byte[] file = store.get(byPath);
    if (file != null) {
      store.delete(key(
          'I',
          t,
          p,
          ByteBuffer.allocate(8).putLong(ByteBuffer.wrap(file).getLong()).array()));
      store.delete(byPath);
    }
  }

  /** The paths of the files partition {@code p} of {@code t} has indexed. */
  public Set<String> indexedFiles(String t, int p) {
    Set<String> out = new HashSet<>();
    Bytes prefix = key('F', t, p, new byte[0]);
    try (KeyValueIterator<Bytes, byte[]> it = store.prefixScan(prefix, BYTES)) {
      it.forEachRemaining(e -> out.add(new String(
          e.key.get(),
          prefix.get().length,
          e.key.get().length - prefix.get().length,
          StandardCharsets.UTF_8)));
    }
    return out;
  }

  private Long fileId(String t, int p, String path) {
    byte[] file = store.get(key('F', t, p, path.getBytes(StandardCharsets.UTF_8)));
    return file == null ? null : ByteBuffer.wrap(file).getLong();
  }

  /** The stored (data sequence number, path) of the file with {@code id}, or null when forgotten. */
  private byte[] fileOf(String t, int p, long id) {
    return store.get(key('I', t, p, ByteBuffer.allocate(8).putLong(id).array()));
  }

  private long nextId(String t, int p) {
    Bytes k = key('N', t, p, new byte[0]);
    byte[] v = store.get(k);
    long id = v == null ? 1 : ByteBuffer.wrap(v).getLong();
    store.put(k, ByteBuffer.allocate(8).putLong(id + 1).array());
    return id;
  }

  /**
   * The store key of a primary key's entries. A key of more than {@value #MAX_STORED_KEY} bytes is
   * stored as {@code -1} (a length no encoded key starts with) and its SHA-256: the changelog
   * record of a key of megabytes would be refused by Kafka at every commit, and the stream thread
   * would fail on it for good.
   */
  static Bytes entryKey(String t, byte[] keyBytes) {
    if (keyBytes.length <= MAX_STORED_KEY) {
      return key('E', t, keyBytes);
    }
    byte[] digest = Sha256.of(keyBytes);
    return key(
        'E', t, ByteBuffer.allocate(4 + digest.length).putInt(-1).put(digest).array());
  }

  /** A key's entries and the store key they are under. */
  private record Stored(Bytes key, byte[] entries) {}

  /**
   * The entries of a key whose store key is {@code own}: under it, or under the whole key where a
   * version before digests kept a long key's entries (not indexed again since); null when none.
   */
  private Stored stored(String t, Bytes own, byte[] keyBytes) {
    byte[] entries = store.get(own);
    if (entries != null) {
      return new Stored(own, entries);
    }
    Bytes whole = wholeEntryKey(t, keyBytes);
    entries = whole == null ? null : store.get(whole);
    return entries == null ? null : new Stored(whole, entries);
  }

  /**
   * Where a version before digests kept the entries of a key of more than {@value
   * #MAX_STORED_KEY} bytes (the whole key; such a record fit a changelog of records up to about 1
   * MB); null for a shorter key. Found there until the key is indexed again, which moves them.
   */
  static Bytes wholeEntryKey(String t, byte[] keyBytes) {
    // A key of a megabyte or more never reached the changelog whole: none to find, and a delete of
    // it would send a record as large.
    return keyBytes.length <= MAX_STORED_KEY || keyBytes.length >= 1 << 20
        ? null
        : key('E', t, keyBytes);
  }

  private static Bytes prefix(char kind, String t) {
    byte[] name = t.getBytes(StandardCharsets.UTF_8);
    return Bytes.wrap(ByteBuffer.allocate(2 + name.length)
        .put((byte) kind)
        .put(name)
        .put((byte) 0)
        .array());
  }

  private static Bytes key(char kind, String t, byte[] rest) {
    byte[] prefix = prefix(kind, t).get();
    return Bytes.wrap(
        ByteBuffer.allocate(prefix.length + rest.length).put(prefix).put(rest).array());
  }

  private static Bytes key(char kind, String t, int p, byte[] rest) {
    byte[] prefix = prefix(kind, t).get();
    return Bytes.wrap(ByteBuffer.allocate(prefix.length + 4 + rest.length)
        .put(prefix)
        .putInt(p)
        .put(rest)
        .array());
  }
}
