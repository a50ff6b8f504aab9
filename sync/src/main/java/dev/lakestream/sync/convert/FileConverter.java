package dev.lakestream.sync.convert;

import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.DeleteFileJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.OutputFileFactory;

/**
 * Converts the equality deletes of one {@link ConvertTask} into a deletion vector for its data
 * file: a {@link PositionResolver} finds the positions (the {@link ScanResolver} by reading the
 * file's key columns, or the key index's positions carried in the task), skipping positions its
 * current vector already deletes; then one Puffin {@code deletion-vector-v1} is written that merges
 * the current vector. No match, no vector. Thread-safe.
 */
public final class FileConverter {

  private final PositionResolver scan = new ScanResolver();
  private final PositionResolver indexed = new PositionResolver.IndexedPositions();
  private final AtomicLong writerIds = new AtomicLong();

  public ConvertResult convert(Table table, ConvertTask task) {
    var specs = table.specs();
    DataFile file = task.dataFile(specs);
    DeleteFile currentDv = task.currentDv(specs);
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> table.io().newInputFile(f.location()));
    PositionDeleteIndex current =
        currentDv == null ? null : loader.loadPositionDeletes(List.of(currentDv), file.location());

    PositionResolver.Resolution found =
        (task.positions() == null ? scan : indexed).resolve(table, task, file, current);
    List<Long> matched = found.positions();
    if (matched.isEmpty()) {
      return new ConvertResult(
          task.table(),
          task.cycleId(),
          file.location(),
          null,
          List.of(),
          0,
          found.rowsScanned(),
          found.bytesRead());
    }
    DeleteWriteResult written = writeDv(table, file, matched, current);
    DeleteFile dv = written.deleteFiles().get(0);
    return new ConvertResult(
        task.table(),
        task.cycleId(),
        file.location(),
        DeleteFileJson.of(dv, specs),
        written.rewrittenDeleteFiles().stream()
            .map(f -> DeleteFileJson.of(f, specs))
            .toList(),
        matched.size(),
        found.rowsScanned(),
        found.bytesRead());
  }

  private DeleteWriteResult writeDv(
      Table table, DataFile file, List<Long> positions, PositionDeleteIndex current) {
    OutputFileFactory files = OutputFileFactory.builderFor(table, 0, writerIds.incrementAndGet())
        .format(FileFormat.PUFFIN)
        .operationId(UUID.randomUUID().toString())
        .build();
    Supplier<OutputFile> output = () -> files.newOutputFile().encryptingOutputFile();
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
