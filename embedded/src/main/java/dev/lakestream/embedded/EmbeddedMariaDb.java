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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A MariaDB server of its own, from the machine's binaries (Debian's {@code mariadb-server}), with a
 * fresh data folder (a copy of one mariadb-install-db made once per JVM), listening on a loopback
 * port, binary log in ROW format with FULL row images (what Debezium's binlog connectors need).
 * Stopped and its folder deleted on close; stopped when the JVM exits.
 *
 * <p>Its Unix socket goes to a short path under {@code /tmp}: a socket in the data folder would pass
 * the 107-byte limit when the checkout's path is long.
 */
public final class EmbeddedMariaDb implements AutoCloseable {

  /**
   * The version the server reports: Debezium 3.6.1's MySQL connector (its MariaDB connector is not
   * published at that version) reads MariaDB 10.11's own version as a MySQL 8.4 or later and asks
   * for {@code SHOW BINARY LOG STATUS}, which MariaDB does not have; reporting a MySQL 5.7 version
   * (MariaDB lets a server set it at start) makes it use {@code SHOW MASTER STATUS}, which MariaDB
   * has. Without "MariaDB" in it: the connector's binary-log client then reads the log as a MySQL
   * replica does, each transaction opened by a {@code BEGIN}; told it is MariaDB, it asks for
   * MariaDB's GTID events instead, and a restarted connector skips the first rows written after its
   * offsets.
   */
  public static final String REPORTED_VERSION = "5.7.19-log-10.11";

  /** The settings of every server, before the caller's overrides. */
  private static final Map<String, String> SETTINGS = Map.of(
      "version", REPORTED_VERSION,
      "log-bin", "mariadb-bin",
      "binlog-format", "ROW",
      "binlog-row-image", "FULL",
      "server-id", "1",
      "character-set-server", "utf8mb4",
      "collation-server", "utf8mb4_general_ci",
      "innodb-flush-log-at-trx-commit", "0");

  private final Process server;
  private final Path dataDir;
  private final Path socket;
  private final int port;
  private Thread stopOnExit;

  private EmbeddedMariaDb(Process server, Path dataDir, Path socket, int port) {
    this.server = server;
    this.dataDir = dataDir;
    this.socket = socket;
    this.port = port;
  }

  /** True when this machine has MariaDB server binaries. */
  public static boolean installed() {
    return serverBinary() != null && installDbBinary() != null;
  }

  public static EmbeddedMariaDb start() throws Exception {
    return start(Map.of());
  }

  /** A server with some settings ({@code binlog-row-image}, ...) changed from this class's defaults. */
  public static EmbeddedMariaDb start(Map<String, String> overrides) throws Exception {
    if (!installed()) {
      throw new IllegalStateException(
          "no MariaDB server binaries (mariadbd, mariadb-install-db): apt-get install mariadb-server");
    }
    Path parent = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
    Path dataDir = Files.createTempDirectory(parent, "mariadb-");
    Path socket = Files.createTempFile(Path.of("/tmp"), "mdb-", ".sock");
    Files.delete(socket);
    String user = System.getProperty("user.name");
    // A copy of the data folder mariadb-install-db made for this JVM's first server.
    run(List.of("cp", "-a", template(parent, user) + "/.", dataDir.toString()));
    int port = freePort();
    Map<String, String> settings = new LinkedHashMap<>(SETTINGS);
    settings.putAll(overrides);
    List<String> command = new ArrayList<>(List.of(
        serverBinary().toString(),
        "--no-defaults",
        "--datadir=" + dataDir,
        "--user=" + user,
        "--port=" + port,
        "--bind-address=127.0.0.1",
        "--socket=" + socket,
        "--pid-file=" + dataDir.resolve("mariadb.pid"),
        "--log-error=" + dataDir.resolve("server.log")));
    settings.forEach((name, value) -> command.add("--" + name + "=" + value));
    Process server = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(dataDir.resolve("console.log").toFile())
        .start();
    EmbeddedMariaDb db = new EmbeddedMariaDb(server, dataDir, socket, port);
    db.stopOnExit = new Thread(db::stopQuietly, "mariadb-stop");
    Runtime.getRuntime().addShutdownHook(db.stopOnExit);
    try {
      db.awaitReady();
      // Root over TCP, with the password the connectors and tests use (a fresh server's has none).
      try (Connection c = DriverManager.getConnection(db.jdbcUrl(""), "root", "");
          Statement st = c.createStatement()) {
        st.execute("ALTER USER 'root'@'localhost' IDENTIFIED BY 'root'");
        st.execute("CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY 'root'");
        st.execute("GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION");
        st.execute("FLUSH PRIVILEGES");
      }
    } catch (Exception e) {
      db.close(); // a server that did not come up is stopped and its folder removed
      throw e;
    }
    return db;
  }

  /**
   * A data folder made by mariadb-install-db once per JVM, never served; each server starts on a copy
   * of it. Tests start a server each, and the install takes about a second where the copy takes a
   * fifth of that. Deleted when the JVM exits.
   */
  private static Path template;

  private static synchronized Path template(Path parent, String user) throws Exception {
    if (template != null) {
      return template;
    }
    template = Folders.filledForThisJvm(
        parent,
        "mariadb-template-",
        f -> run(List.of(
            installDbBinary().toString(),
            "--no-defaults",
            "--datadir=" + f,
            "--user=" + user,
            "--auth-root-authentication-method=normal",
            "--skip-test-db")));
    return template;
  }

  public int port() {
    return port;
  }

  public String user() {
    return "root";
  }

  public String password() {
    return "root";
  }

  /** A JDBC URL of {@code database} (empty: none), for MySQL Connector/J (which MariaDB accepts). */
  public String jdbcUrl(String database) {
    return "jdbc:mariadb://127.0.0.1:" + port + "/" + database;
  }

  public Connection connect(String database) throws SQLException {
    return DriverManager.getConnection(jdbcUrl(database), user(), password());
  }

  public void execute(String... statements) throws SQLException {
    try (Connection c = connect("");
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  /**
   * Loads {@code zone} (an IANA name, such as {@code Europe/Berlin}) from the operating system's
   * zoneinfo into the server's time zone tables, so that {@code SET time_zone} can name it (a fresh
   * server knows only offsets and {@code SYSTEM}). Needs Debian's {@code tzdata} and the MariaDB
   * client.
   */
  public void loadTimeZone(String zone) throws Exception {
    Path file = Path.of("/usr/share/zoneinfo", zone);
    if (!Files.isRegularFile(file)) {
      throw new IllegalStateException("no " + file + ": apt-get install tzdata");
    }
    Process convert = new ProcessBuilder(
            firstExecutable("/usr/bin/mariadb-tzinfo-to-sql", "/usr/bin/mysql_tzinfo_to_sql")
                .toString(),
            file.toString(),
            zone)
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
    byte[] sql = convert.getInputStream().readAllBytes();
    if (!convert.waitFor(60, TimeUnit.SECONDS) || convert.exitValue() != 0 || sql.length == 0) {
      throw new IllegalStateException("mariadb-tzinfo-to-sql " + file + " failed");
    }
    Process client = new ProcessBuilder(
            firstExecutable("/usr/bin/mariadb", "/usr/bin/mysql").toString(),
            "--no-defaults",
            "--protocol=TCP",
            "--host=127.0.0.1",
            "--port=" + port,
            "--user=" + user(),
            "--password=" + password(),
            "mysql")
        .redirectErrorStream(true)
        .start();
    try (var in = client.getOutputStream()) {
      in.write(sql);
    } catch (IOException e) {
      // The client stopped reading: its output below says why.
    }
    String out = new String(client.getInputStream().readAllBytes());
    if (!client.waitFor(60, TimeUnit.SECONDS) || client.exitValue() != 0) {
      throw new IllegalStateException("loading time zone " + zone + " failed: " + out);
    }
  }

  private static Path firstExecutable(String... candidates) {
    for (String candidate : candidates) {
      if (new File(candidate).canExecute()) {
        return Path.of(candidate);
      }
    }
    throw new IllegalStateException(
        "none of " + List.of(candidates) + " (apt-get install mariadb-server)");
  }

  private void awaitReady() throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    SQLException last = null;
    while (System.currentTimeMillis() < deadline) {
      if (!server.isAlive()) {
        throw new IllegalStateException("mariadbd exited (" + server.exitValue() + "): "
            + readQuietly(dataDir.resolve("server.log"))
            + readQuietly(dataDir.resolve("console.log")));
      }
      try (Connection c = DriverManager.getConnection(jdbcUrl(""), "root", "")) {
        return; // a fresh server's root has no password yet
      } catch (SQLException e) {
        last = e;
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException("MariaDB did not accept connections within 60 s", last);
  }

  @Override
  public void close() throws Exception {
    if (stopOnExit != null) {
      try {
        Runtime.getRuntime().removeShutdownHook(stopOnExit);
      } catch (IllegalStateException e) {
        // The JVM is shutting down already; the hook stops the server.
      }
    }
    try {
      // Killed, not shut down: its folder goes next, so InnoDB's clean shutdown (seconds) is waste.
      server.destroyForcibly();
      stopQuietly();
    } finally {
      Folders.delete(dataDir);
    }
  }

  private void stopQuietly() {
    server.destroy();
    try {
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly();
        server.waitFor(10, TimeUnit.SECONDS);
      }
      Files.deleteIfExists(socket);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      // Best effort.
    }
  }

  private static Path serverBinary() {
    for (String candidate :
        List.of("/usr/sbin/mariadbd", "/usr/sbin/mysqld", "/usr/bin/mariadbd")) {
      if (new File(candidate).canExecute()) {
        return Path.of(candidate);
      }
    }
    return null;
  }

  private static Path installDbBinary() {
    for (String candidate : List.of(
        "/usr/bin/mariadb-install-db",
        "/usr/bin/mysql_install_db",
        "/usr/scripts/mariadb-install-db")) {
      if (new File(candidate).canExecute()) {
        return Path.of(candidate);
      }
    }
    return null;
  }

  private static void run(List<String> command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed:\n" + out);
    }
  }

  private static String readQuietly(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file) : "";
    } catch (IOException e) {
      return "";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
