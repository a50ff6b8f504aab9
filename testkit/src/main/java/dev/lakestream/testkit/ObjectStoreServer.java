package dev.lakestream.testkit;

import dev.lakestream.embedded.Folders;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * An S3-compatible object store on a loopback port, for warehouses on object storage: S3Proxy (its
 * S3 API in front of Apache jclouds' filesystem blob store) in a JVM of its own, with a fresh folder
 * and one bucket, checking AWS signatures (v2 and v4) against its own access key. Iceberg's {@code
 * S3FileIO} (the AWS SDK v2) talks to it as it talks to S3 or MinIO: path-style requests, signed
 * PUTs and ranged GETs, prefix listings, batch deletes.
 *
 * <p>S3Proxy's classpath is the one the {@code object-store} module writes at build time ({@code
 * object-store/target/s3proxy-classpath.txt}); it runs apart because it brings its own Jetty and
 * Jackson. Stopped and its folder deleted on close; stopped when the JVM exits.
 */
public final class ObjectStoreServer implements AutoCloseable {

  public static final String BUCKET = "lake";
  public static final String ACCESS_KEY = "lakestream";
  public static final String SECRET_KEY = "lakestream-object-store-secret";

  private static final Path CLASSPATH_FILE =
      Path.of("object-store", "target", "s3proxy-classpath.txt");

  private final Process server;
  private final Path dir;
  private final int port;
  private final Thread stopOnExit;

  private ObjectStoreServer(Process server, Path dir, int port) {
    this.server = server;
    this.dir = dir;
    this.port = port;
    this.stopOnExit = new Thread(this::stopQuietly, "object-store-stop");
    Runtime.getRuntime().addShutdownHook(stopOnExit);
  }

  /**
   * Starts a server and waits (up to 60 s) until it answers HTTP.
   *
   * <p>Also tells the AWS SDK of this JVM to add a checksum to a request only where the operation
   * requires one (its system property {@code aws.requestChecksumCalculation}, as the environment's
   * {@code AWS_REQUEST_CHECKSUM_CALCULATION=when_required} would): by default the SDK sends every
   * upload with a trailing CRC32 ({@code STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER}), which S3Proxy
   * refuses, as do S3-compatible stores older than the SDK's change (README, "Build and run").
   */
  public static ObjectStoreServer start() throws Exception {
    System.setProperty("aws.requestChecksumCalculation", "when_required");
    String classpath = Files.readString(classpathFile()).trim();
    Path parent = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
    Path dir = Files.createTempDirectory(parent, "object-store-");
    Files.createDirectories(dir.resolve("blobs").resolve(BUCKET)); // a bucket is a folder here
    int port = freePort();
    Files.writeString(
        dir.resolve("s3proxy.conf"),
        String.join(
            "\n",
            "s3proxy.endpoint=http://127.0.0.1:" + port,
            "s3proxy.authorization=aws-v2-or-v4",
            "s3proxy.identity=" + ACCESS_KEY,
            "s3proxy.credential=" + SECRET_KEY,
            // jclouds' first file-system store (S3Proxy calls it deprecated, for filesystem-nio2):
            // it lists each folder as a key ending in "/", as a bucket lists the folder markers a
            // console makes, which the maintenance's listings must leave alone.
            "jclouds.provider=filesystem",
            "jclouds.filesystem.basedir=" + dir.resolve("blobs"),
            ""));
    // S3Proxy ships no logging configuration, and Logback's default logs all at DEBUG: warnings to
    // the server's log, and its handler's line per request to a file of its own, for requests().
    Files.writeString(
        dir.resolve("logback.xml"),
        String.join(
            "\n",
            "<configuration>",
            "  <appender name=\"out\" class=\"ch.qos.logback.core.ConsoleAppender\">",
            "    <encoder><pattern>%d %level %logger{20} - %msg%n</pattern></encoder>",
            "  </appender>",
            "  <appender name=\"requests\" class=\"ch.qos.logback.core.FileAppender\">",
            "    <file>" + dir.resolve("requests.log") + "</file>",
            "    <encoder><pattern>%msg%n</pattern></encoder>",
            "  </appender>",
            "  <logger name=\"org.gaul.s3proxy.S3ProxyHandler\" level=\"DEBUG\" additivity=\"false\">",
            "    <appender-ref ref=\"requests\"/>",
            "  </logger>",
            "  <root level=\"WARN\"><appender-ref ref=\"out\"/></root>",
            "</configuration>",
            ""));
    List<String> command = List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",
        "-Dlogback.configurationFile=" + dir.resolve("logback.xml"),
        "-cp",
        classpath,
        "org.gaul.s3proxy.Main",
        "--properties",
        dir.resolve("s3proxy.conf").toString());
    Process process = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("server.log").toFile())
        .start();
    ObjectStoreServer store = new ObjectStoreServer(process, dir, port);
    try {
      store.awaitReady();
    } catch (Exception e) {
      store.close();
      throw e;
    }
    return store;
  }

  /** The S3 endpoint, {@code http://127.0.0.1:<port>}. */
  public String endpoint() {
    return "http://127.0.0.1:" + port;
  }

  /** A warehouse location in the bucket: {@code s3://lake/<name>}. */
  public String warehouse(String name) {
    return "s3://" + BUCKET + "/" + name;
  }

  /**
   * The Iceberg catalog properties of {@code S3FileIO} on this store, under Iceberg's names, as a
   * deployment on MinIO sets them.
   */
  public Map<String, String> fileIoProperties() {
    return Map.of(
        "io-impl",
        "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.endpoint",
        endpoint(),
        "s3.path-style-access",
        "true",
        "s3.access-key-id",
        ACCESS_KEY,
        "s3.secret-access-key",
        SECRET_KEY,
        "client.region",
        "us-east-1");
  }

  /**
   * A JDBC catalog (SQLite in {@code database}, on the local disk) whose warehouse is {@code
   * s3://lake/<warehouse>} on this store, under Iceberg's property names.
   */
  public Map<String, String> jdbcCatalogProperties(Path database, String warehouse) {
    Map<String, String> props = new TreeMap<>(fileIoProperties());
    props.put("catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog");
    props.put("uri", "jdbc:sqlite:" + database);
    props.put("jdbc.schema-version", "V1");
    props.put("warehouse", warehouse(warehouse));
    return props;
  }

  /**
   * The objects under {@code prefix} of the bucket (their keys, sorted), read from the store's own
   * folder rather than through S3: what the store holds, whatever its API would answer.
   */
  public List<String> objectKeys(String prefix) throws IOException {
    Path bucket = dir.resolve("blobs").resolve(BUCKET);
    try (Stream<Path> files = Files.walk(bucket)) {
      return files
          .filter(Files::isRegularFile)
          .map(f -> bucket.relativize(f).toString())
          .filter(key -> key.startsWith(prefix))
          .sorted()
          .toList();
    }
  }

  /**
   * The requests the server handled so far, by kind: the HTTP method, and for a {@code GET} of the
   * bucket itself (no key), {@code LIST}. What a workload costs on a store that bills per request.
   */
  public Map<String, Integer> requests() throws IOException {
    Path log = dir.resolve("requests.log");
    Map<String, Integer> counts = new TreeMap<>();
    if (!Files.exists(log)) {
      return counts;
    }
    String bucketUrl = endpoint() + "/" + BUCKET;
    for (String line : Files.readAllLines(log)) {
      int at = line.indexOf(REQUEST_LINE);
      if (at < 0) {
        continue;
      }
      String[] request = line.substring(at + REQUEST_LINE.length()).split("[ )?]", 3);
      if (request.length < 2) {
        continue;
      }
      String url = request[1];
      boolean bucket = url.equals(bucketUrl) || url.equals(bucketUrl + "/");
      counts.merge("GET".equals(request[0]) && bucket ? "LIST" : request[0], 1, Integer::sum);
    }
    return counts;
  }

  /** How S3Proxy's handler logs each request it receives: {@code request: Request(GET http://...)}. */
  private static final String REQUEST_LINE = "request: Request(";

  private void awaitReady() throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    Exception last = null;
    while (System.currentTimeMillis() < deadline) {
      if (!server.isAlive()) {
        throw new IllegalStateException("S3Proxy exited (" + server.exitValue() + "): " + log());
      }
      try {
        HttpURLConnection c =
            (HttpURLConnection) URI.create(endpoint() + "/").toURL().openConnection();
        c.setConnectTimeout(1000);
        c.setReadTimeout(5000);
        c.getResponseCode(); // any answer (an unsigned request is refused): it is up
        c.disconnect();
        return;
      } catch (IOException e) {
        last = e;
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException(
        "S3Proxy did not answer on " + endpoint() + " within 60 s: " + log(), last);
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("server.log"));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /**
   * The classpath file, looked for from the working directory up (a module's tests run in the
   * module's folder, the benchmarks in the project's).
   */
  private static Path classpathFile() {
    Path at = Path.of("").toAbsolutePath();
    for (Path p = at; p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve(CLASSPATH_FILE))) {
        return p.resolve(CLASSPATH_FILE);
      }
    }
    throw new IllegalStateException("no " + CLASSPATH_FILE + " in " + at
        + " or a folder above it: build the object-store module first (mvn -B install from the"
        + " project's root does)");
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(stopOnExit);
    } catch (IllegalStateException e) {
      // The JVM is shutting down already; the hook stops the server.
    }
    try {
      stopQuietly();
    } finally {
      Folders.delete(dir);
    }
  }

  private void stopQuietly() {
    server.destroy();
    try {
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly();
        server.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
