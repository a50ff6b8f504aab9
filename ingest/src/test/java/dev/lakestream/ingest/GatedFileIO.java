package dev.lakestream.ingest;

import dev.lakestream.common.iceberg.LocalFileIO;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * The local file system, with a hold on Iceberg's manifest files (every commit writes one): a test
 * sees which threads commit, can keep a commit waiting until it lets it go, or make it fail. The
 * state is static (Iceberg creates the FileIO from the catalog properties); tests {@link #reset}
 * it.
 */
public final class GatedFileIO implements FileIO {

  /** The threads that wrote a manifest, in order. */
  static final List<String> WRITERS = new CopyOnWriteArrayList<>();

  private static volatile CountDownLatch gate;
  private static volatile CountDownLatch held;
  private static volatile boolean failing;

  private final LocalFileIO local = new LocalFileIO();

  static void reset() {
    WRITERS.clear();
    gate = null;
    held = null;
    failing = false;
  }

  /** Holds the next manifest writes until {@link #open}. */
  static void shut() {
    held = new CountDownLatch(1);
    gate = new CountDownLatch(1);
  }

  /** Waits until a writer is held at the gate. */
  static void awaitHeld() throws InterruptedException {
    if (!held.await(120, TimeUnit.SECONDS)) {
      throw new AssertionError("waited 120 s for a commit to reach the gate");
    }
  }

  static void open() {
    gate.countDown();
  }

  /** Makes every manifest write fail. */
  static void fail() {
    failing = true;
  }

  @Override
  public void initialize(Map<String, String> properties) {
    local.initialize(properties);
  }

  @Override
  public InputFile newInputFile(String path) {
    return local.newInputFile(path);
  }

  @Override
  public OutputFile newOutputFile(String path) {
    if (path.endsWith(".avro")) {
      WRITERS.add(Thread.currentThread().getName());
      if (failing) {
        throw new UncheckedIOException(new IOException("gated failure writing " + path));
      }
      CountDownLatch waitFor = gate;
      if (waitFor != null) {
        held.countDown();
        try {
          if (!waitFor.await(120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the gate stayed closed for 120 s");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted at the gate", e);
        }
      }
    }
    return local.newOutputFile(path);
  }

  @Override
  public void deleteFile(String path) {
    local.deleteFile(path);
  }
}
