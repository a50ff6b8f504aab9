package dev.lakestream.enginecheck;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the pipeline the way a user does, from the launcher's jar in a JVM of its own (its Kafka,
 * Iceberg and Jackson never meet Spark's).
 */
final class LakestreamJar {

  private LakestreamJar() {}

  static Path jar() {
    Path jar = Path.of(System.getProperty("lakestream.jar", "../launcher/target/lakestream.jar"));
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("no launcher jar at " + jar.toAbsolutePath()
          + ": build it first (mvn -B verify from the project root builds it before this module)");
    }
    return jar;
  }

  /** Runs {@code java -jar lakestream.jar ARGS}, its output to {@code log}; fails unless it exits 0. */
  static void run(Path log, long timeoutMinutes, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx2g",
        "-jar",
        jar().toString()));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
    if (!process.waitFor(timeoutMinutes, TimeUnit.MINUTES)) {
      process.destroyForcibly().waitFor();
      throw new IllegalStateException(
          String.join(" ", args) + " did not finish in " + timeoutMinutes + " min; see " + log);
    }
    if (process.exitValue() != 0) {
      throw new IllegalStateException(
          String.join(" ", args) + " exited " + process.exitValue() + "; see " + log);
    }
  }
}
