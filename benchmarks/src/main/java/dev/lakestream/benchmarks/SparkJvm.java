package dev.lakestream.benchmarks;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Spark in a JVM of its own (it cannot share a classpath with the project's Iceberg and Jackson):
 * the engine-check module's {@code SparkBench} on that module's test classpath, which {@code mvn
 * install} writes to {@code engine-check/target/spark-classpath.txt}. Returns its {@code RESULT} lines.
 */
final class SparkJvm {

  private static final List<String> OPENS = List.of(
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
          "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
          "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
          "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
          "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
      "-Djdk.reflect.useDirectMethodHandle=false", "-Dio.netty.tryReflectionSetAccessible=true");

  private SparkJvm() {}

  static List<String[]> run(String heap, String... args) throws IOException, InterruptedException {
    Path module = Report.projectRoot().resolve("engine-check");
    Path classpathFile = module.resolve("target/spark-classpath.txt");
    if (!Files.exists(classpathFile)) {
      throw new IllegalStateException("no " + classpathFile
          + ": run mvn -B -q clean install -DskipTests from the project root first");
    }
    String classpath = module.resolve("target/test-classes")
        + File.pathSeparator
        + Files.readString(classpathFile).trim();
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx" + heap,
        "-XX:+IgnoreUnrecognizedVMOptions"));
    command.addAll(OPENS);
    command.addAll(List.of("-cp", classpath, "dev.lakestream.enginecheck.SparkBench"));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    Process process = pb.start();
    List<String[]> results = new ArrayList<>();
    List<String> tail = new ArrayList<>();
    try (BufferedReader out = new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = out.readLine()) != null; ) {
        if (line.startsWith("RESULT\t")) {
          System.out.println("  spark: " + line.substring(7).replace('\t', ' '));
          results.add(line.substring(7).split("\t"));
        } else {
          tail.add(line);
          if (tail.size() > 40) {
            tail.remove(0);
          }
        }
      }
    }
    if (process.waitFor() != 0) {
      throw new IllegalStateException(
          "Spark exited " + process.exitValue() + ":\n" + String.join("\n", tail));
    }
    return results;
  }
}
