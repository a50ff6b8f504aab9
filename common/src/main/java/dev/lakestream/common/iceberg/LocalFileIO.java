package dev.lakestream.common.iceberg;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * A {@link FileIO} for a warehouse on the local disk (plain paths or {@code file:} URIs), through
 * java.nio. Hadoop's local filesystem, Iceberg's default, starts a {@code chmod} process for every
 * file it writes when Hadoop's native library is absent (it is, in this jar): slow, and a Ctrl-C
 * sent to the process group kills those children mid-write. The embedded default catalog uses this
 * instead; shared warehouses use their object store's FileIO.
 *
 * <p>It keeps the catalog properties it is initialized with and returns them from {@link
 * #properties()}, as Iceberg's own FileIOs do: Iceberg reads its manifest cache's settings ({@code
 * io.manifest.cache-enabled}, ...) from there, and a FileIO without them never caches.
 */
public final class LocalFileIO implements SupportsPrefixOperations {

  private Map<String, String> properties = Map.of();

  @Override
  public void initialize(Map<String, String> props) {
    this.properties = Map.copyOf(props);
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  @Override
  public InputFile newInputFile(String path) {
    return org.apache.iceberg.Files.localInput(file(path)); // name clash
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
    return org.apache.iceberg.Files.localOutput(file); // name clash
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

  /** The files under {@code prefix} (a folder), with their sizes and last-modified times. */
  @Override
  public Iterable<FileInfo> listPrefix(String prefix) {
    Path root = file(prefix).toPath();
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    List<FileInfo> files = new ArrayList<>();
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : (Iterable<Path>) paths::iterator) {
        BasicFileAttributes attributes;
        try {
          attributes = Files.readAttributes(p, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
          continue;
        }
        if (attributes.isRegularFile()) {
          files.add(new FileInfo(
              location(prefix, p),
              attributes.size(),
              attributes.lastModifiedTime().toMillis()));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + prefix, e);
    }
    return files;
  }

  @Override
  public void deletePrefix(String prefix) {
    for (FileInfo f : listPrefix(prefix)) {
      deleteFile(f.location());
    }
  }

  /** A listed path in the form of the prefix ({@code file:} URI or plain path). */
  private static String location(String prefix, Path path) {
    String p = path.toString();
    if (prefix.startsWith("file://")) {
      return "file://" + p;
    } else if (prefix.startsWith("file:")) {
      return "file:" + p;
    }
    return p;
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
