package dev.lakestream.sync.convert;

import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.common.iceberg.DeleteFileJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.SynchronousQueue;
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
import org.apache.iceberg.deletes.Deletes;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DeleteWriteResult;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.util.StructLikeSet;

/**
 * Converts the equality deletes of a {@link ConvertGroup} into deletion vectors: for each task a
 * {@link PositionResolver} finds the positions of its data file (the {@link ScanResolver} by
 * reading the file's key columns, or the key index's positions carried in the task), skipping
 * positions the file's current vector already deletes; then ONE Puffin file is written with a
 * {@code deletion-vector-v1} blob per data file that has a match, each merging that file's current
 * vector. A data file with no match gets no vector. The tasks' files are read several at once
 * ({@link #FileConverter(int)}); the Puffin file is written once all are read. Thread-safe.
 *
 * <p>The vectors it writes are kept in memory (serialized, as in the Puffin file; up to a budget of
 * bytes, the oldest written dropped first), by their identity: Puffin file, offset and length. A
 * data file that gets deletes in every cycle has, in the next cycle, the vector this converter
 * wrote as its current one, and merges it from memory instead of reading it again: on object
 * storage that read was a request per data file per cycle. A vector is a blob of an immutable
 * file, so a kept one never goes stale; one whose cycle did not commit is never named again and ages
 * out. A vector merged into a new one is dropped; one of a file a cycle found nothing more in stays.
 * One not kept (another instance's, from before a restart, or replaced in a cycle that is run
 * again) is read.
 */
public final class FileConverter {

  private final ScanResolver scan = new ScanResolver();
  private final PositionResolver indexed = new PositionResolver.IndexedPositions();
  private final AtomicLong writerIds = new AtomicLong();
  /** Reads a group's data files and vectors, several at once; null: one after the other. */
  private final ExecutorService readers;
  /** How many of a group's files are read at once. */
  private final int readThreads;
  /** The serialized vectors this converter wrote, by {@link #vectorId}. */
  private final KeptVectors written;

  private final AtomicLong vectorsRead = new AtomicLong();
  private final AtomicLong vectorsReused = new AtomicLong();

  /** A converter that reads a group's files one after the other. */
  public FileConverter() {
    this(1);
  }

  /** A converter that reads up to {@code readThreads} of a group's files at once, keeping 64 MiB of vectors. */
  public FileConverter(int readThreads) {
    this(readThreads, 64L << 20);
  }

  /**
   * A converter that reads up to {@code readThreads} of a group's files at once, for each group it
   * converts (each stream thread's on threads of its own): on object storage each read waits for its
   * requests' round trips, and a group of 32 files read one after the other waited for all of them
   * in turn. Idle threads end. It keeps up to {@code keptVectorBytes} of the vectors it wrote (0:
   * none).
   */
  public FileConverter(int readThreads, long keptVectorBytes) {
    if (readThreads < 1) {
      throw new IllegalArgumentException("readThreads must be positive: " + readThreads);
    }
    this.readThreads = readThreads;
    this.written = new KeptVectors(keptVectorBytes);
    if (readThreads == 1) {
      this.readers = null;
    } else {
      AtomicLong threads = new AtomicLong();
      // No queue and no bound: a group takes at most readThreads of them, and its stream thread
      // waits for them, so there are never more than readThreads per stream thread.
      this.readers = new ThreadPoolExecutor(
          0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "lakestream-convert-read-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
          });
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
    BaseDeleteLoader loader = ContentFiles.deleteLoader(table.io());
    // The deleted keys the group's tasks share, loaded once for the group: a set too large for the
    // resolver's caches would otherwise be loaded again by every file read at the same time.
    Map<String, StructLikeSet> groupKeys = new ConcurrentHashMap<>();
    List<Found> found = new ArrayList<>();
    if (readers == null || group.tasks().size() == 1) {
      for (ConvertTask task : group.tasks()) {
        found.add(find(table, specs, loader, task, groupKeys));
      }
    } else {
      found = findAtOnce(table, specs, loader, group.tasks(), groupKeys);
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
      Table table,
      Map<Integer, PartitionSpec> specs,
      BaseDeleteLoader loader,
      ConvertTask task,
      Map<String, StructLikeSet> groupKeys) {
    try {
      DataFile file = task.dataFile(specs);
      DeleteFile currentDv = task.currentDv(specs);
      PositionDeleteIndex current = currentDv == null ? null : current(loader, currentDv, file);
      return new Found(
          file,
          current,
          task.positions() == null
              ? scan.resolve(table, task, file, current, groupKeys)
              : indexed.resolve(table, task, file, current));
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "converting " + task.dataFilePath() + ": " + e.getClass().getSimpleName() + ": "
              + e.getMessage(),
          e);
    }
  }

  /** The vector {@code dv} of {@code file}: kept in memory when this converter wrote it, else read. */
  private PositionDeleteIndex current(BaseDeleteLoader loader, DeleteFile dv, DataFile file) {
    if (dv.contentOffset() != null
        && dv.contentSizeInBytes() != null
        && file.location().equals(dv.referencedDataFile())) {
      byte[] kept = written.get(vectorId(dv));
      if (kept != null) {
        try {
          // Checks the bytes against the vector's recorded length and count (and their own
          // checksum).
          PositionDeleteIndex index = PositionDeleteIndex.deserialize(kept, dv);
          vectorsReused.incrementAndGet();
          return index;
        } catch (RuntimeException e) {
          // Not the vector the table records under this identity: read the one it does.
        }
      }
    }
    vectorsRead.incrementAndGet();
    return loader.loadPositionDeletes(List.of(dv), file.location());
  }

  /** A vector's identity: its Puffin file, and where in it its blob is. */
  private static String vectorId(DeleteFile dv) {
    return dv.location() + "@" + dv.contentOffset() + "+" + dv.contentSizeInBytes();
  }

  /** Current vectors read from storage since this converter was made. */
  public long vectorsRead() {
    return vectorsRead.get();
  }

  /** Current vectors merged from memory (this converter wrote them) since it was made. */
  public long vectorsReused() {
    return vectorsReused.get();
  }

  /**
   * Keeps the vector written for {@code f} as the writer wrote it: its new positions and the ones
   * it merged. Kept only when it matches what the table records of it (count and length).
   */
  private void keep(Found f, DeleteFile dv) {
    if (f.current() != null) {
      // Replaced by the new one once the cycle commits (a cycle run again reads it).
      for (DeleteFile replaced : f.current().deleteFiles()) {
        written.drop(vectorId(replaced));
      }
    }
    if (dv.contentSizeInBytes() == null || !written.fits(dv.contentSizeInBytes())) {
      return;
    }
    PositionDeleteIndex merged =
        Deletes.toPositionIndex(CloseableIterable.withNoopClose(f.resolution().positions()));
    if (f.current() != null) {
      merged.merge(f.current());
    }
    ByteBuffer blob = merged.serialize();
    if (merged.cardinality() == dv.recordCount() && blob.remaining() == dv.contentSizeInBytes()) {
      byte[] bytes;
      if (blob.hasArray() && blob.arrayOffset() == 0 && blob.array().length == blob.remaining()) {
        bytes = blob.array();
      } else {
        bytes = new byte[blob.remaining()];
        blob.get(bytes);
      }
      written.keep(vectorId(dv), bytes);
    }
  }

  /**
   * Every task's finding, in the group's order, its files read on up to {@link #readThreads} lanes
   * at once (lane i takes tasks i, i + lanes, ...). Returns or throws only once every lane is done,
   * so no read of the group outlives the call. The first task that failed in the group's order fails
   * the group, as reading in turn would have; later failures are added to it as suppressed.
   */
  private List<Found> findAtOnce(
      Table table,
      Map<Integer, PartitionSpec> specs,
      BaseDeleteLoader loader,
      List<ConvertTask> tasks,
      Map<String, StructLikeSet> groupKeys) {
    int lanes = Math.min(readThreads, tasks.size());
    Object[] outcomes = new Object[tasks.size()]; // a Found, or the Throwable its task threw
    List<Future<?>> running = new ArrayList<>();
    Throwable notStarted = null;
    try {
      for (int lane = 0; lane < lanes; lane++) {
        int first = lane;
        running.add(readers.submit(() -> {
          for (int i = first; i < tasks.size(); i += lanes) {
            try {
              outcomes[i] = find(table, specs, loader, tasks.get(i), groupKeys);
            } catch (Throwable t) {
              outcomes[i] = t;
            }
          }
        }));
      }
    } catch (RuntimeException | Error e) {
      notStarted = e; // a lane's thread could not start: the lanes that did are still awaited
    }
    boolean interrupted = false;
    for (Future<?> lane : running) {
      while (true) {
        try {
          lane.get();
          break;
        } catch (InterruptedException e) {
          interrupted = true; // the reads finish first; the interrupt is kept for the caller
        } catch (ExecutionException e) {
          break; // not reached: a lane keeps what its tasks throw
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    Throwable failure = notStarted;
    List<Found> found = new ArrayList<>();
    for (int i = 0; failure == null && i < outcomes.length; i++) {
      if (outcomes[i] instanceof Found f) {
        found.add(f);
      } else if (outcomes[i] instanceof Throwable t) {
        failure = t;
      }
    }
    if (failure == null) {
      return found;
    }
    for (Object outcome : outcomes) {
      if (outcome instanceof Throwable t && t != failure) {
        failure.addSuppressed(t);
      }
    }
    if (failure instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failure instanceof Error error) {
      throw error;
    }
    throw new IllegalStateException(failure);
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
    dvs.forEach((path, dv) -> keep(matched.get(path), dv));
    return new Written(dvs, rewritten);
  }
}
