package dev.lakestream.embedded;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.connect.cli.ConnectStandalone;
import org.apache.kafka.connect.runtime.Connect;
import org.apache.kafka.connect.runtime.standalone.StandaloneHerder;

/**
 * A real Kafka Connect worker (standalone mode) in the test JVM, with Connect's JSON converter
 * embedding schemas, and its REST API on a loopback port: connectors are registered as users do,
 * by POSTing their JSON config to {@code /connectors}. Plugins are found by service loading (fast);
 * the Debezium connectors are on the classpath.
 */
public final class EmbeddedConnect implements AutoCloseable {

  /** What {@link #main} prints once its connector runs. */
  public static final String READY = "EMBEDDED-CONNECT-READY";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Connect<StandaloneHerder> connect;
  private final URI rest;
  private final HttpClient http = HttpClient.newHttpClient();

  private EmbeddedConnect(Connect<StandaloneHerder> connect) {
    this.connect = connect;
    this.rest = connect.rest().serverUrl();
  }

  public static EmbeddedConnect start(String bootstrapServers) throws Exception {
    Path dir = Files.createTempDirectory("connect-");
    return start(bootstrapServers, dir.resolve("connect.offsets"), 1000);
  }

  /**
   * Copies a worker's offsets file to {@code to} as one flush wrote it, waiting up to {@code
   * timeout} for the file and for a whole copy. Connect rewrites the file in place, so a copy
   * taken while it writes is cut short; a worker started on a cut-short file reads it as no
   * offsets at all (Connect ignores the end of file it meets) and its connector takes a new
   * snapshot, where a test meant it to resume from older offsets.
   */
  public static Path copyOffsets(Path offsetsFile, Path to, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (Files.exists(offsetsFile)) {
        Files.copy(offsetsFile, to, StandardCopyOption.REPLACE_EXISTING);
        try (ObjectInputStream in = new ObjectInputStream(Files.newInputStream(to))) {
          if (in.readObject() instanceof Map<?, ?> && in.read() == -1) {
            return to;
          }
        } catch (IOException e) {
          // Cut short by a write in progress: copy again.
        }
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "no whole copy of Connect's offsets file " + offsetsFile + " within " + timeout);
      }
      Thread.sleep(50);
    }
  }

  /**
   * A worker whose source offsets are kept in {@code offsetsFile} (so a worker started again on the
   * same file resumes where the last one flushed) and flushed every {@code offsetFlushMs}.
   */
  public static EmbeddedConnect start(String bootstrapServers, Path offsetsFile, long offsetFlushMs)
      throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put("bootstrap.servers", bootstrapServers);
    props.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
    props.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
    props.put("key.converter.schemas.enable", "true");
    props.put("value.converter.schemas.enable", "true");
    props.put("offset.storage.file.filename", offsetsFile.toString());
    props.put("offset.flush.interval.ms", Long.toString(offsetFlushMs));
    props.put("listeners", "http://127.0.0.1:0");
    props.put("plugin.discovery", "service_load");
    // Connect exits the JVM on some startup failures; in a test that must be an exception.
    Exit.setExitProcedure((status, message) -> {
      throw new IllegalStateException("Kafka Connect tried to exit (" + status + "): " + message);
    });
    return new EmbeddedConnect(new ConnectStandalone().startConnect(props));
  }

  public URI restUrl() {
    return rest;
  }

  /**
   * Registers a connector from its Kafka Connect REST JSON ({@code {"name": ..., "config": {...}}})
   * with {@code overrides} applied to its config, and waits until its task runs.
   */
  public void createConnector(String connectorJson, Map<String, String> overrides)
      throws Exception {
    ObjectNode connector = (ObjectNode) JSON.readTree(connectorJson);
    ObjectNode config = (ObjectNode) connector.get("config");
    overrides.forEach(config::put);
    String name = connector.get("name").asText();
    HttpResponse<String> created = http.send(
        HttpRequest.newBuilder(rest.resolve("/connectors"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(connector)))
            .build(),
        HttpResponse.BodyHandlers.ofString());
    if (created.statusCode() / 100 != 2) {
      throw new IllegalStateException("creating connector " + name + " failed: "
          + created.statusCode() + " " + created.body() + validationErrorsOrNothing(name, config));
    }
    awaitState(name, "RUNNING", true);
  }

  /** The connector {@code name}'s status as Kafka Connect's REST API gives it (JSON). */
  public String status(String name) throws Exception {
    return statusResponse(name).body();
  }

  private HttpResponse<String> statusResponse(String name) throws Exception {
    return http.send(
        HttpRequest.newBuilder(rest.resolve("/connectors/" + name + "/status"))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Deletes the connector {@code name} (its stored offsets stay, as Kafka Connect keeps them). */
  public void deleteConnector(String name) throws Exception {
    call("DELETE", "/connectors/" + name, null);
  }

  /**
   * Restarts the connector {@code name} the way an operator does through the REST API: stops it,
   * resumes it, and waits until its task runs again (a new task, which starts as after a worker's
   * restart).
   */
  public void restartConnector(String name) throws Exception {
    stopConnector(name);
    resumeConnector(name, "RUNNING");
  }

  /**
   * Stops the connector {@code name} through the REST API and waits until it is stopped and its
   * task gone (Connect takes the task down after it marks the connector stopped).
   */
  public void stopConnector(String name) throws Exception {
    call("PUT", "/connectors/" + name + "/stop", null);
    awaitState(name, "STOPPED", false);
    awaitStatus(name, "without a task", status -> status.path("tasks").isEmpty());
  }

  /**
   * Resumes the stopped connector {@code name} through the REST API and waits until its task is in
   * {@code taskState} ({@code RUNNING}, or {@code FAILED} for a task expected to fail); 120 s at most.
   */
  public void resumeConnector(String name, String taskState) throws Exception {
    call("PUT", "/connectors/" + name + "/resume", null);
    awaitState(name, taskState, true);
  }

  /**
   * The source offsets Connect holds for the connector {@code name}, as its REST API gives them
   * ({@code {"offsets": [{"partition": ..., "offset": ...}]}}).
   */
  public String offsets(String name) throws Exception {
    return call("GET", "/connectors/" + name + "/offsets", null);
  }

  /**
   * Changes some of the connector {@code name}'s settings the way an operator does through the REST
   * API ({@code PATCH /connectors/{name}/config}): {@code changes} replace those settings, the
   * others stay, and Kafka Connect restarts the connector with them. Waits until its task has them
   * and runs.
   */
  public void patchConfig(String name, Map<String, String> changes) throws Exception {
    call("PATCH", "/connectors/" + name + "/config", JSON.writeValueAsString(changes));
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (true) {
      JsonNode config = JSON.readTree(call("GET", "/connectors/" + name + "/tasks", null))
          .path(0)
          .path("config");
      if (changes.entrySet().stream()
          .allMatch(c -> c.getValue().equals(config.path(c.getKey()).asText(null)))) {
        break;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("connector " + name + ": its task does not have " + changes
            + " after 120 s: " + config);
      }
      Thread.sleep(200);
    }
    awaitState(name, "RUNNING", true);
  }

  /**
   * Sets the connector {@code name}'s offsets back to {@code offsets} (as {@link #offsets} gave
   * them earlier) the way an operator does through the REST API: stops the connector, alters its
   * offsets, resumes it, and waits until its task runs. It then publishes again everything it
   * published since those offsets, as a worker does that crashed before flushing them.
   */
  public void rewindOffsets(String name, String offsets) throws Exception {
    stopConnector(name);
    call("PATCH", "/connectors/" + name + "/offsets", offsets);
    resumeConnector(name, "RUNNING");
  }

  /** Waits until the connector (or its first task) is in {@code state}; 120 s at most. */
  private void awaitState(String name, String state, boolean task) throws Exception {
    awaitStatus(name, (task ? "task " : "") + state, status -> {
      String now = (task ? status.path("tasks").path(0) : status.path("connector"))
          .path("state")
          .asText();
      if (!state.equals(now) && "FAILED".equals(now)) {
        throw new IllegalStateException("connector " + name + " failed: " + status);
      }
      return state.equals(now);
    });
  }

  /** Waits until the connector's status (REST JSON) meets {@code reached}; 120 s at most. */
  private void awaitStatus(String name, String what, Predicate<JsonNode> reached) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    String last = "";
    while (System.currentTimeMillis() < deadline) {
      HttpResponse<String> response = statusResponse(name);
      last = response.body();
      if (response.statusCode() == 200 && reached.test(JSON.readTree(last))) {
        return;
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "connector " + name + ": not " + what + " after 120 s: " + last);
  }

  /** One REST call; its body, or an exception naming the call when Connect refuses it. */
  private String call(String method, String path, String body) throws Exception {
    HttpResponse<String> response = http.send(
        HttpRequest.newBuilder(rest.resolve(path))
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .timeout(Duration.ofSeconds(60))
            .build(),
        HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new IllegalStateException(
          method + " " + path + " failed: " + response.statusCode() + " " + response.body());
    }
    return response.body();
  }

  /**
   * The errors Connect's validation finds in a connector's config, as {@code "; key: error"}
   * parts (a failed creation does not always say them: some Connect versions fail while listing
   * them).
   */
  private String validationErrorsOrNothing(String name, ObjectNode config) {
    try {
      return validationErrors(name, config);
    } catch (Exception e) {
      return "";
    }
  }

  private String validationErrors(String name, ObjectNode config) throws Exception {
    config.put("name", name);
    String plugin = config.path("connector.class").asText();
    HttpResponse<String> validated = http.send(
        HttpRequest.newBuilder(rest.resolve("/connector-plugins/" + plugin + "/config/validate"))
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(config)))
            .timeout(Duration.ofSeconds(60))
            .build(),
        HttpResponse.BodyHandlers.ofString());
    if (validated.statusCode() != 200) {
      return "";
    }
    StringBuilder errors = new StringBuilder();
    for (JsonNode entry : JSON.readTree(validated.body()).path("configs")) {
      JsonNode value = entry.path("value");
      for (JsonNode error : value.path("errors")) {
        errors.append("; ").append(value.path("name").asText()).append(": ").append(error.asText());
      }
    }
    return errors.toString();
  }

  /**
   * A worker in a process of its own, for tests that kill it: {@code BOOTSTRAP OFFSETS_FILE
   * FLUSH_MS CONNECTOR_JSON_FILE}. Registers the connector, prints {@link #READY}, and runs until
   * the process ends.
   */
  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println(
          "usage: EmbeddedConnect BOOTSTRAP OFFSETS_FILE FLUSH_MS CONNECTOR_JSON_FILE");
      System.exit(2);
    }
    EmbeddedConnect connect = start(args[0], Path.of(args[1]), Long.parseLong(args[2]));
    connect.createConnector(Files.readString(Path.of(args[3])), Map.of());
    System.out.println(READY);
    System.out.flush();
    Thread.currentThread().join();
  }

  @Override
  public void close() {
    connect.stop();
    connect.awaitStop();
    Exit.resetExitProcedure();
  }
}
