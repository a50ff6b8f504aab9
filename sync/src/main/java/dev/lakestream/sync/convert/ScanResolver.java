package dev.lakestream.sync.convert;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.common.iceberg.KeyColumns;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.StructLikeSet;

/**
 * Reads only the data file's key columns (a row's position is its ordinal) and probes the keys of
 * the task's equality deletes. Keys of delete files are cached (the tasks of a cycle share them),
 * and so are the unions of several files' keys: a cycle's tasks, one per data file, mostly carry the
 * same delete files, and merging them again for every data file was a fifth of sync's stream
 * threads at 5,000 changes/s. Both caches are bounded by the heap their keys take (an eighth of the
 * JVM's heap for the files' keys, a quarter of that for unions: one resolver serves all of an app's
 * stream threads); a set larger than that is used for its task and not kept. The sets they hold are
 * never changed after they are made. Thread-safe.
 *
 * <p>Iceberg's delete loader holds the deleted keys in Iceberg's internal form (a date as days, a
 * time or timestamp as microseconds, fixed bytes as a buffer), while the generic reader of the data
 * file gives {@code java.time} values and arrays: each data file key is wrapped in that form before
 * it is probed, as Iceberg's own readers do, or a key with such a column would never match. Cached
 * keys are cached per key type too: a key column widened ({@code int} to {@code long}) reads the
 * same delete file into other values.
 */
public final class ScanResolver implements PositionResolver {

  /** Keys sampled from a set to estimate what one takes on the heap. */
  private static final int SAMPLED_KEYS = 32;

  private final Cache<String, StructLikeSet> deleteKeys;
  private final Cache<String, StructLikeSet> unions;

  /** Caches of keys up to an eighth of the JVM's heap, and a quarter of that for unions. */
  public ScanResolver() {
    this(Runtime.getRuntime().maxMemory() / 8);
  }

  /** Caches of keys up to {@code budgetBytes} of heap, and a quarter of that for unions. */
  ScanResolver(long budgetBytes) {
    this.deleteKeys = Caffeine.newBuilder()
        .maximumWeight(budgetBytes)
        .weigher((String k, StructLikeSet v) -> weight(v))
        .build();
    this.unions = Caffeine.newBuilder()
        .maximumWeight(budgetBytes / 4)
        .weigher((String k, StructLikeSet v) -> weight(v))
        .build();
  }

  @Override
  public Resolution resolve(
      Table table, ConvertTask task, DataFile file, PositionDeleteIndex current) {
    return resolve(table, task, file, current, new ConcurrentHashMap<>());
  }

  /**
   * As {@link #resolve(Table, ConvertTask, DataFile, PositionDeleteIndex)}, the deleted keys taken
   * from {@code groupKeys} when another task of the same group loaded them (and put there when this
   * one loads them): the tasks of a group read at once share one copy of a set, even one too large
   * for the caches.
   */
  public Resolution resolve(
      Table table,
      ConvertTask task,
      DataFile file,
      PositionDeleteIndex current,
      Map<String, StructLikeSet> groupKeys) {
    List<DeleteFile> deletes = task.deleteFiles(table.specs());
    Set<Integer> keyIds = new HashSet<>(deletes.get(0).equalityFieldIds());
    for (DeleteFile d : deletes) {
      if (!new HashSet<>(d.equalityFieldIds()).equals(keyIds)) {
        throw new IllegalStateException(
            "table " + task.table() + ": equality deletes with different key columns in one task ("
                + d.equalityFieldIds() + " and " + keyIds + ")");
      }
    }
    Schema keySchema = TypeUtil.select(table.schema(), keyIds);
    String keyType = keySchema.asStruct().toString();
    BaseDeleteLoader loader = ContentFiles.deleteLoader(table.io());
    String setKey = keyType + "\n"
        + String.join("\n", deletes.stream().map(DeleteFile::location).toList());
    StructLikeSet keys = groupKeys.computeIfAbsent(
        setKey,
        k -> deletes.size() == 1
            ? keysOf(deletes.get(0), loader, keySchema, keyType)
            : unions.get(k, u -> {
              StructLikeSet union = StructLikeSet.create(keySchema.asStruct());
              deletes.forEach(d -> union.addAll(keysOf(d, loader, keySchema, keyType)));
              return union;
            }));
    InternalRecordWrapper internal = new InternalRecordWrapper(keySchema.asStruct());
    List<Long> matched = new ArrayList<>();
    long[] position = {0};
    long rows = KeyColumns.forEach(table, file, keySchema, key -> {
      if ((current == null || !current.isDeleted(position[0]))
          && keys.contains(internal.wrap(key))) {
        matched.add(position[0]);
      }
      position[0]++;
    });
    return new Resolution(matched, rows, KeyColumns.bytes(file, keySchema));
  }

  private static int weight(StructLikeSet keys) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, estimatedBytes(keys)));
  }

  /**
   * The heap {@code keys} take, roughly: per key about 150 bytes for the set's node, the wrapper
   * and the record, and each value's object (a boxed number 48 bytes, a string or byte buffer its
   * length and a header), averaged over a few keys. ScanResolverTest compares it with the heap a
   * loaded delete file's keys take.
   */
  static long estimatedBytes(StructLikeSet keys) {
    long sampled = 0;
    long bytes = 0;
    for (StructLike key : keys) {
      bytes += 150;
      for (int i = 0; i < key.size(); i++) {
        bytes += valueBytes(key.get(i, Object.class));
      }
      if (++sampled == SAMPLED_KEYS) {
        break;
      }
    }
    return sampled == 0 ? 0 : bytes * keys.size() / sampled;
  }

  private static long valueBytes(Object value) {
    if (value == null) {
      return 8;
    } else if (value instanceof CharSequence text) {
      return 64 + text.length();
    } else if (value instanceof ByteBuffer buffer) {
      return 80 + buffer.remaining();
    } else if (value instanceof byte[] array) {
      return 24 + array.length;
    } else if (value instanceof Number || value instanceof Boolean) {
      return value instanceof BigDecimal ? 96 : 48;
    }
    return 64;
  }

  /** The heap the cached sets are estimated to take, in bytes (both caches). */
  long cachedBytes() {
    long bytes = 0;
    for (Cache<String, StructLikeSet> cache : List.of(deleteKeys, unions)) {
      cache.cleanUp();
      bytes += cache.policy().eviction().orElseThrow().weightedSize().orElseThrow();
    }
    return bytes;
  }

  private StructLikeSet keysOf(
      DeleteFile d, BaseDeleteLoader loader, Schema keySchema, String keyType) {
    return deleteKeys.get(
        keyType + "\n" + d.location(), p -> loader.loadEqualityDeletes(List.of(d), keySchema));
  }
}
