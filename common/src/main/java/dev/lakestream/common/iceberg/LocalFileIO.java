package dev.lakestream.common.iceberg;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * A {@link FileIO} for a warehouse on the local disk (plain paths or {@code file:} URIs), through
 * java.nio. Hadoop's local filesystem, Iceberg's default, starts a {@code chmod} process for every
 * file it writes when Hadoop's native library is absent (it is, in this jar): slow, and a Ctrl-C
 * sent to the process group kills those children mid-write. The embedded default catalog uses this
 * instead; shared warehouses use their object store's FileIO.
 */
public final class LocalFileIO implements FileIO {

  @Override
  public InputFile newInputFile(String path) {
    return org.apache.iceberg.Files.localInput(file(path));
  }

  @Override
  public OutputFile newOutputFile(String path) {
    File file = file(path);
    try {
      // Race-free, unlike the check-then-mkdirs of Iceberg's local output file.
      Files.createDirectories(file.toPath().getParent());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the folder of " + path, e);
    }
    return org.apache.iceberg.Files.localOutput(file);
  }

  @Override
  public void deleteFile(String path) {
    try {
      Files.delete(file(path).toPath());
    } catch (NoSuchFileException e) {
      // Already gone: deleting is idempotent.
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + path, e);
    }
  }

  static File file(String location) {
    String path = location;
    if (path.startsWith("file://")) {
      path = path.substring("file://".length());
    } else if (path.startsWith("file:")) {
      path = path.substring("file:".length());
    }
    return Path.of(path).toFile();
  }
}
