package dev.lakestream.common.iceberg;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.SnapshotUpdate;

/**
 * Runs a commit's manifest work on the committing thread. Iceberg hands each step of a commit
 * (filtering, merging, listing manifests, and writing the new ones) to its worker pool and waits
 * for it by polling every 10 ms; a small commit (a round's few new files) spends most of its time
 * in those waits, and ingest commits many times a second. Done inline, each step is finished when
 * it is waited for. What is given up: reading and writing many manifests in parallel, which only
 * the occasional manifest merge does.
 */
public final class InlineManifestWork {

  private static final ExecutorService INLINE = new Inline();

  private InlineManifestWork() {}

  /** Runs each task as it is submitted, on the submitting thread; never shut down. */
  private static final class Inline extends AbstractExecutorService {
    @Override
    public void execute(Runnable command) {
      command.run();
    }

    @Override
    public void shutdown() {}

    @Override
    public List<Runnable> shutdownNow() {
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return false;
    }
  }

  public static <T extends SnapshotUpdate<T>> T on(T update) {
    return update.scanManifestsWith(INLINE).writeManifestsWith(INLINE, 1);
  }
}
