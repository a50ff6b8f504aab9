package dev.lakestream.sync.convert;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.KeyColumns;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
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
 * threads at 5,000 changes/s. Both caches are bounded by the number of keys held; the sets they hold
 * are never changed after they are made. Thread-safe.
 *
 * <p>Iceberg's delete loader holds the deleted keys in Iceberg's internal form (a date as days, a
 * time or timestamp as microseconds, fixed bytes as a buffer), while the generic reader of the data
 * file gives {@code java.time} values and arrays: each data file key is wrapped in that form before
 * it is probed, as Iceberg's own readers do, or a key with such a column would never match. Cached
 * keys are cached per key type too: a key column widened ({@code int} to {@code long}) reads the
 * same delete file into other values.
 */
public final class ScanResolver implements PositionResolver {

  private static final long CACHED_KEYS = 5_000_000;

  private final Cache<String, StructLikeSet> deleteKeys = Caffeine.newBuilder()
      .maximumWeight(CACHED_KEYS)
      .weigher((String k, StructLikeSet v) -> Math.max(1, v.size()))
      .build();

  private final Cache<String, StructLikeSet> unions = Caffeine.newBuilder()
      .maximumWeight(CACHED_KEYS / 5)
      .weigher((String k, StructLikeSet v) -> Math.max(1, v.size()))
      .build();

  @Override
  public Resolution resolve(
      Table table, ConvertTask task, DataFile file, PositionDeleteIndex current) {
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
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));
    StructLikeSet keys = deletes.size() == 1
        ? keysOf(deletes.get(0), loader, keySchema, keyType)
        : unions.get(
            keyType + "\n"
                + String.join("\n", deletes.stream().map(DeleteFile::location).toList()),
            k -> {
              StructLikeSet union = StructLikeSet.create(keySchema.asStruct());
              deletes.forEach(d -> union.addAll(keysOf(d, loader, keySchema, keyType)));
              return union;
            });
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

  private StructLikeSet keysOf(
      DeleteFile d, BaseDeleteLoader loader, Schema keySchema, String keyType) {
    return deleteKeys.get(
        keyType + "\n" + d.location(), p -> loader.loadEqualityDeletes(List.of(d), keySchema));
  }
}
