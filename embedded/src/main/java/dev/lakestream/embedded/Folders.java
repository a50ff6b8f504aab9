package dev.lakestream.embedded;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Deletes the throwaway folders of the in-process servers and test warehouses. */
public final class Folders {

  private Folders() {}

  /** Fills a fresh folder. */
  public interface Filler {
    void fill(Path folder) throws Exception;
  }

  /**
   * A fresh folder under {@code parent}, named from {@code prefix}, filled by {@code filler} and
   * deleted when the JVM exits; deleted at once when {@code filler} fails (the caller may try again).
   */
  public static Path filledForThisJvm(Path parent, String prefix, Filler filler) throws Exception {
    Path folder = Files.createTempDirectory(parent, prefix);
    try {
      filler.fill(folder);
    } catch (Exception e) {
      delete(folder);
      throw e;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(folder), prefix + "delete"));
    return folder;
  }

  /** Deletes {@code dir} and everything in it; a folder already gone is fine. */
  public static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + dir, e);
    }
  }
}
