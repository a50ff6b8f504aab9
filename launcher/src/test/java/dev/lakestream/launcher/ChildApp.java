package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One app of the launcher ({@code lakestream ingest|sync}) in a JVM of its own, configured only by
 * {@code LAKESTREAM_*} environment variables, as a container is; or any main class with arguments.
 * {@link #kill()} ends it abruptly (SIGKILL: no shutdown hook, no clean close).
 */
final class ChildApp implements AutoCloseable {

  private final List<String> main;
  private final PipelineConfig config;
  private final Path log;
  private Process process;
  private int starts;

  ChildApp(String command, PipelineConfig config, Path log) {
    this(List.of(Lakestream.class.getName(), command), config, log);
  }

  /** {@code main}: the main class and its arguments. */
  ChildApp(List<String> main, PipelineConfig config, Path log) {
    this.main = List.copyOf(main);
    this.config = config;
    this.log = log;
  }

  void start() throws Exception {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx512m",
        "-XX:TieredStopAtLevel=1",
        "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
        "-cp",
        classpath));
    cmd.addAll(main);
    ProcessBuilder builder = new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(new File(log.toString())));
    Map<String, String> env = builder.environment();
    env.keySet().removeIf(k -> k.startsWith(PipelineConfig.ENV_PREFIX));
    config.asMap().forEach((key, value) -> env.put(PipelineConfig.envNameOf(key), value));
    process = builder.start();
    starts++;
  }

  int starts() {
    return starts;
  }

  void kill() throws Exception {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  boolean alive() {
    return process != null && process.isAlive();
  }

  @Override
  public void close() throws Exception {
    if (process != null && process.isAlive()) {
      process.destroy();
      if (!process.waitFor(40, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }
}
