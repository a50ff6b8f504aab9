package dev.lakestream.sync.convert;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.ContentFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.StructLikeSet;

/**
 * Converts the equality deletes of one {@link ConvertTask} into a deletion vector for its data
 * file: reads only the file's key columns (a row's position is its ordinal), skips positions its
 * current vector already deletes, probes the keys of the deletes, and writes one Puffin {@code
 * deletion-vector-v1} that merges the current vector. No match, no vector.
 *
 * <p>Keys of equality-delete files are cached (they are shared by the tasks of a cycle); the cache
 * is bounded by the number of keys it holds. Thread-safe.
 */
public final class FileConverter {

  private static final long CACHED_KEYS = 5_000_000;

  private final Cache<String, StructLikeSet> deleteKeys =
      Caffeine.newBuilder().maximumWeight(CACHED_KEYS).weigher((String k, StructLikeSet v) -> Math.max(1, v.size())).build();
  private final AtomicLong writerIds = new AtomicLong();

  public ConvertResult convert(Table table, ConvertTask task) {
    var specs = table.specs();
    DataFile file = task.dataFile(specs);
    List<DeleteFile> deletes = task.deleteFiles(specs);
    DeleteFile currentDv = task.currentDv(specs);
    Set<Integer> keyIds = new HashSet<>(deletes.get(0).equalityFieldIds());
    Schema keySchema = TypeUtil.select(table.schema(), keyIds);
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));

    StructLikeSet keys = StructLikeSet.create(keySchema.asStruct());
    for (DeleteFile d : deletes) {
      if (!new HashSet<>(d.equalityFieldIds()).equals(keyIds)) {
        throw new IllegalStateException(
            "table " + task.table() + ": equality deletes with different key columns in one task ("
                + d.equalityFieldIds() + " and " + keyIds + ")");
      }
      keys.addAll(deleteKeys.get(d.location(), p -> loader.loadEqualityDeletes(List.of(d), keySchema)));
    }
    PositionDeleteIndex current =
        currentDv == null ? null : loader.loadPositionDeletes(List.of(currentDv), file.location());

    List<Long> matched = new ArrayList<>();
    long rows = 0;
    try (CloseableIterable<Record> records =
        Parquet.read(table.io().newInputFile(file.location()))
            .project(keySchema)
            .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(keySchema, fileSchema))
            .build()) {
      long position = 0;
      for (Record key : records) {
        if ((current == null || !current.isDeleted(position)) && keys.contains(key)) {
          matched.add(position);
        }
        position++;
      }
      rows = position;
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + file.location() + " of " + task.table(), e);
    }

    if (matched.isEmpty()) {
      return new ConvertResult(task.table(), task.cycleId(), file.location(), null, List.of(), 0, rows, file.fileSizeInBytes());
    }
    DeleteWriteResult written = writeDv(table, file, matched, current);
    DeleteFile dv = written.deleteFiles().get(0);
    return new ConvertResult(
        task.table(),
        task.cycleId(),
        file.location(),
        ContentFiles.toJson(dv, specs.get(dv.specId())),
        written.rewrittenDeleteFiles().stream().map(f -> ContentFiles.toJson(f, specs.get(f.specId()))).toList(),
        matched.size(),
        rows,
        file.fileSizeInBytes());
  }

  private DeleteWriteResult writeDv(Table table, DataFile file, List<Long> positions, PositionDeleteIndex current) {
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 0, writerIds.incrementAndGet())
            .format(FileFormat.PUFFIN)
            .operationId(UUID.randomUUID().toString())
            .build();
    Supplier<org.apache.iceberg.io.OutputFile> output = () -> files.newOutputFile().encryptingOutputFile();
    BaseDVFileWriter writer = new BaseDVFileWriter(output, path -> current);
    try (writer) {
      for (long pos : positions) {
        writer.delete(file.location(), pos, table.specs().get(file.specId()), file.partition());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("writing a deletion vector for " + file.location(), e);
    }
    return writer.result();
  }
}
