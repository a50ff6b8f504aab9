package dev.lakestream.sync.convert;

import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.common.iceberg.DeleteFileJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;

/**
 * Converts the equality deletes of a {@link ConvertGroup} into deletion vectors: for each task a
 * {@link PositionResolver} finds the positions of its data file (the {@link ScanResolver} by
 * reading the file's key columns, or the key index's positions carried in the task), skipping
 * positions the file's current vector already deletes; then ONE Puffin file is written with a
 * {@code deletion-vector-v1} blob per data file that has a match, each merging that file's current
 * vector. A data file with no match gets no vector. The tasks' files are read several at once
 * ({@link #FileConverter(int)}); the Puffin file is written once all are read. Thread-safe.
 */
public final class FileConverter {

  private final PositionResolver scan = new ScanResolver();
  private final PositionResolver indexed = new PositionResolver.IndexedPositions();
  private final AtomicLong writerIds = new AtomicLong();
  /** Reads a group's data files and vectors, several at once; null: one after the other. */
  private final ExecutorService readers;

  /** A converter that reads a group's files one after the other. */
  public FileConverter() {
    this(1);
  }

  /**
   * A converter that reads up to {@code readThreads} of a group's files at once (for all the stream
   * threads it serves): on object storage each read waits for its requests' round trips, and a
   * group of 32 files read one after the other waited for all of them in turn. Idle threads end.
   */
  public FileConverter(int readThreads) {
    if (readThreads < 1) {
      throw new IllegalArgumentException("readThreads must be positive: " + readThreads);
    }
    if (readThreads == 1) {
      this.readers = null;
    } else {
      AtomicLong threads = new AtomicLong();
      ThreadPoolExecutor pool = new ThreadPoolExecutor(
          readThreads, readThreads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "lakestream-convert-read-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
          });
      pool.allowCoreThreadTimeOut(true);
      this.readers = pool;
    }
  }

  /** One data file's part of a group: what was found, and the vector it merges. */
  private record Found(
      DataFile file, PositionDeleteIndex current, PositionResolver.Resolution resolution) {}

  /** The task alone, as a group of one. */
  public ConvertResult convert(Table table, ConvertTask task) {
    return convert(table, ConvertGroup.of(task)).get(0);
  }

  /**
   * The results of the group's tasks, in the group's order. A task that cannot be converted fails
   * the group, with an error that names its data file.
   */
  public List<ConvertResult> convert(Table table, ConvertGroup group) {
    Map<Integer, PartitionSpec> specs = table.specs();
    BaseDeleteLoader loader = new BaseDeleteLoader(f -> ContentFiles.input(table.io(), f));
    List<Found> found = new ArrayList<>();
    if (readers == null || group.tasks().size() == 1) {
      for (ConvertTask task : group.tasks()) {
        found.add(find(table, specs, loader, task));
      }
    } else {
      List<Future<Found>> finding = new ArrayList<>();
      for (ConvertTask task : group.tasks()) {
        finding.add(readers.submit(() -> find(table, specs, loader, task)));
      }
      found = inOrder(finding);
    }
    Written written = write(table, found);
    List<ConvertResult> results = new ArrayList<>();
    for (Found f : found) {
      String path = f.file().location();
      DeleteFile dv = written.dvs().get(path);
      results.add(new ConvertResult(
          group.table(),
          group.cycleId(),
          path,
          dv == null ? null : DeleteFileJson.of(dv, specs),
          written.rewritten().getOrDefault(path, List.of()).stream()
              .map(d -> DeleteFileJson.of(d, specs))
              .toList(),
          dv == null ? 0 : f.resolution().positions().size(),
          f.resolution().rowsScanned(),
          f.resolution().bytesRead()));
    }
    return results;
  }

  /** What the task's data file holds of its deletes, and the vector it has now. */
  private Found find(
      Table table, Map<Integer, PartitionSpec> specs, BaseDeleteLoader loader, ConvertTask task) {
    try {
      DataFile file = task.dataFile(specs);
      DeleteFile currentDv = task.currentDv(specs);
      PositionDeleteIndex current = currentDv == null
          ? null
          : loader.loadPositionDeletes(List.of(currentDv), file.location());
      return new Found(
          file,
          current,
          (task.positions() == null ? scan : indexed).resolve(table, task, file, current));
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "converting " + task.dataFilePath() + ": " + e.getClass().getSimpleName() + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Every task's finding, in the group's order, once all are done; the first failure in that order
   * is thrown, as the reads one after the other would have thrown it.
   */
  private static List<Found> inOrder(List<Future<Found>> finding) {
    List<Found> found = new ArrayList<>();
    Throwable failure = null;
    for (Future<Found> f : finding) {
      try {
        Found one = f.get();
        if (failure == null) {
          found.add(one);
        }
      } catch (ExecutionException e) {
        failure = failure == null ? e.getCause() : failure;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        finding.forEach(other -> other.cancel(true));
        throw new IllegalStateException("interrupted while reading a group's data files", e);
      }
    }
    if (failure instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failure instanceof Error error) {
      throw error;
    }
    if (failure != null) {
      throw new IllegalStateException(failure);
    }
    return found;
  }

  /** The vectors written, and the vectors they replace, by referenced data file. */
  private record Written(Map<String, DeleteFile> dvs, Map<String, List<DeleteFile>> rewritten) {}

  private Written write(Table table, List<Found> found) {
    Map<String, Found> matched = new LinkedHashMap<>();
    for (Found f : found) {
      if (!f.resolution().positions().isEmpty()) {
        matched.put(f.file().location(), f);
      }
    }
    if (matched.isEmpty()) {
      return new Written(Map.of(), Map.of());
    }
    OutputFileFactory files = OutputFileFactory.builderFor(table, 0, writerIds.incrementAndGet())
        .format(FileFormat.PUFFIN)
        .operationId(UUID.randomUUID().toString())
        .build();
    BaseDVFileWriter writer = new BaseDVFileWriter(files, path -> {
      Found f = matched.get(path);
      return f == null ? null : f.current();
    });
    try (writer) {
      for (Found f : matched.values()) {
        PartitionSpec spec = table.specs().get(f.file().specId());
        for (long pos : f.resolution().positions()) {
          writer.delete(f.file().location(), pos, spec, f.file().partition());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "writing the deletion vectors of " + matched.size() + " data files, the first "
              + matched.keySet().iterator().next(),
          e);
    }
    DeleteWriteResult result = writer.result();
    Map<String, DeleteFile> dvs = new HashMap<>();
    for (DeleteFile dv : result.deleteFiles()) {
      if (!matched.containsKey(dv.referencedDataFile())
          || dvs.put(dv.referencedDataFile(), dv) != null) {
        throw new IllegalStateException("the deletion-vector writer returned " + dv.location()
            + " for " + dv.referencedDataFile() + ", which it was not given once");
      }
    }
    if (!dvs.keySet().equals(matched.keySet())) {
      throw new IllegalStateException("the deletion-vector writer wrote vectors for " + dvs.size()
          + " of " + matched.size() + " data files");
    }
    Map<String, List<DeleteFile>> rewritten = new HashMap<>();
    for (DeleteFile old : result.rewrittenDeleteFiles()) {
      if (!matched.containsKey(old.referencedDataFile())) {
        throw new IllegalStateException("the deletion-vector writer replaced " + old.location()
            + " of " + old.referencedDataFile() + ", a data file it was not given");
      }
      rewritten
          .computeIfAbsent(old.referencedDataFile(), k -> new ArrayList<>())
          .add(old);
    }
    return new Written(dvs, rewritten);
  }
}
