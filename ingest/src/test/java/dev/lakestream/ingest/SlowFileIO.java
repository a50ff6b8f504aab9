package dev.lakestream.ingest;

import dev.lakestream.common.iceberg.LocalFileIO;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * The local file system as a slow object store: closing a written Parquet file (an upload's
 * completion) takes {@code slow-io.close-ms} (a catalog property) milliseconds, and opening one to
 * read it {@code slow-io.open-ms}. {@link #FAIL_NEXT_OPEN} makes the next open of a Parquet file
 * fail, as a store that answers with an error would.
 */
public final class SlowFileIO implements FileIO {

  public static final String CLOSE_MS = "slow-io.close-ms";
  public static final String OPEN_MS = "slow-io.open-ms";

  /** Set: the next open of a Parquet file to read throws (and clears it). */
  public static final AtomicBoolean FAIL_NEXT_OPEN = new AtomicBoolean();

  private final LocalFileIO local = new LocalFileIO();
  private long closeMs;
  private long openMs;

  @Override
  public void initialize(Map<String, String> properties) {
    local.initialize(properties);
    closeMs = Long.parseLong(properties.getOrDefault(CLOSE_MS, "0"));
    openMs = Long.parseLong(properties.getOrDefault(OPEN_MS, "0"));
  }

  @Override
  public InputFile newInputFile(String path) {
    if (path.endsWith(".parquet") && FAIL_NEXT_OPEN.compareAndSet(true, false)) {
      throw new IllegalStateException("simulated failure opening " + path);
    }
    if (openMs > 0 && path.endsWith(".parquet")) {
      try {
        Thread.sleep(openMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while opening slowly", e);
      }
    }
    return local.newInputFile(path);
  }

  @Override
  public OutputFile newOutputFile(String path) {
    OutputFile file = local.newOutputFile(path);
    if (!path.endsWith(".parquet")) {
      return file;
    }
    return new OutputFile() {
      @Override
      public PositionOutputStream create() {
        return slow(file.create());
      }

      @Override
      public PositionOutputStream createOrOverwrite() {
        return slow(file.createOrOverwrite());
      }

      @Override
      public String location() {
        return file.location();
      }

      @Override
      public InputFile toInputFile() {
        return file.toInputFile();
      }
    };
  }

  private PositionOutputStream slow(PositionOutputStream out) {
    return new PositionOutputStream() {
      @Override
      public long getPos() throws IOException {
        return out.getPos();
      }

      @Override
      public void write(int b) throws IOException {
        out.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
      }

      @Override
      public void close() throws IOException {
        try {
          Thread.sleep(closeMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while closing slowly", e);
        }
        out.close();
      }
    };
  }

  @Override
  public void deleteFile(String path) {
    local.deleteFile(path);
  }
}
