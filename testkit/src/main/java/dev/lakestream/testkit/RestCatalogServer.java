package dev.lakestream.testkit;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.RetryableValidationException;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;

/**
 * An Iceberg REST catalog over HTTP on the loopback interface, serving a catalog of the test's
 * (the {@link TemporaryWarehouse}'s JDBC catalog) through Iceberg's own server-side handlers ({@link
 * CatalogHandlers}: requirement checks, the commit and its retries on the server, sequence-number
 * conflicts answered as commit conflicts), so the apps run through Iceberg's REST client exactly
 * as against a REST catalog service: every load and commit is an HTTP request with the protocol's
 * JSON.
 *
 * <p>It serves what the pipeline and the tests use: config, namespaces, tables (list, create, load,
 * exists, commit, drop, rename) and metrics reports (accepted and dropped). Other routes answer 404.
 * It counts commits, those refused as conflicts (HTTP 409) and those refused as bad requests (HTTP
 * 400).
 */
public final class RestCatalogServer implements AutoCloseable {

  private static final String NAMESPACE_SEPARATOR = "%1F";

  private final Catalog backing;
  private final HttpServer server;
  private final ExecutorService handlers = Executors.newFixedThreadPool(8, r -> {
    Thread t = new Thread(r, "rest-catalog-server");
    t.setDaemon(true);
    return t;
  });
  private final ObjectMapper mapper = new ObjectMapper();
  private final AtomicLong commits = new AtomicLong();
  private final AtomicLong conflicts = new AtomicLong();
  private final AtomicLong badRequests = new AtomicLong();
  private final boolean sequenceConflictsAsBadRequests;
  private final AtomicReference<Runnable> beforeNextCommit = new AtomicReference<>();

  private RestCatalogServer(Catalog backing, boolean sequenceConflictsAsBadRequests)
      throws IOException {
    this.backing = backing;
    this.sequenceConflictsAsBadRequests = sequenceConflictsAsBadRequests;
    // As Iceberg's own client reads and writes the protocol's JSON (its RESTObjectMapper).
    mapper.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
    mapper.setPropertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE);
    mapper.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    RESTSerializers.registerAll(mapper);
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(handlers);
    server.start();
  }

  /** Serves {@code backing} (a catalog that supports namespaces) until closed. */
  public static RestCatalogServer serving(Catalog backing) throws IOException {
    return new RestCatalogServer(backing, false);
  }

  /**
   * Like {@link #serving}, but a commit whose snapshot's sequence number another commit took first
   * (a commit to one branch while another landed on the other) is refused as a bad request (HTTP
   * 400, which Iceberg's client does not retry) rather than as a conflict: as Iceberg's server code
   * answered it before apache/iceberg#15126, which REST servers built on it (the {@code
   * apache/iceberg-rest-fixture} images up to 1.10) still do.
   */
  public static RestCatalogServer servingSequenceConflictsAsBadRequests(Catalog backing)
      throws IOException {
    return new RestCatalogServer(backing, true);
  }

  public String uri() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /**
   * The Iceberg catalog properties of a client of this server: {@code type=rest}, the URI, and the
   * warehouse's file IO (the files are on the local disk both sides share).
   */
  public Map<String, String> catalogProperties(String ioImpl) {
    return Map.of("type", "rest", "uri", uri(), "io-impl", ioImpl);
  }

  /** Commits received (table updates), those refused as conflicts included. */
  public long commits() {
    return commits.get();
  }

  /** Commits refused as conflicts (HTTP 409): another commit landed since the client read the table. */
  public long conflicts() {
    return conflicts.get();
  }

  /**
   * Runs {@code other} (a commit of another writer, straight to the backing catalog) once, when the
   * next commit request arrives and before it is handled: the request then finds the table changed
   * since its client read it, as it would if the other commit had landed a moment before.
   */
  public void beforeNextCommit(Runnable other) {
    beforeNextCommit.set(other);
  }

  /** Commits refused as bad requests (HTTP 400). */
  public long badRequests() {
    return badRequests.get();
  }

  @Override
  public void close() {
    server.stop(0);
    handlers.shutdownNow();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      byte[] body = exchange.getRequestBody().readAllBytes();
      List<String> path = Arrays.asList(exchange.getRequestURI().getRawPath().split("/"));
      // "", "v1", ...
      List<String> route = path.size() > 2 ? path.subList(2, path.size()) : List.of();
      try {
        Object response = route(method, route, body);
        if (response == null) {
          exchange.sendResponseHeaders(204, -1);
        } else {
          send(exchange, 200, mapper.writeValueAsBytes(response));
        }
      } catch (RuntimeException | IOException caught) {
        Exception e = caught;
        if (sequenceConflictsAsBadRequests
            && caught instanceof CommitFailedException
            && caught.getCause() instanceof RetryableValidationException sequence) {
          e = sequence;
        }
        int code = codeOf(e);
        if (code == 409 && isCommit(method, route)) {
          conflicts.incrementAndGet();
        }
        if (code == 400 && isCommit(method, route)) {
          badRequests.incrementAndGet();
        }
        ErrorResponse error = ErrorResponse.builder()
            .responseCode(code)
            .withType(e.getClass().getSimpleName())
            .withMessage(String.valueOf(e.getMessage()))
            .build();
        if ("HEAD".equals(method)) {
          exchange.sendResponseHeaders(code, -1);
        } else {
          send(exchange, code, mapper.writeValueAsBytes(error));
        }
      }
    }
  }

  private Object route(String method, List<String> route, byte[] body) throws IOException {
    SupportsNamespaces namespaces = (SupportsNamespaces) backing;
    if (route.equals(List.of("config")) && method.equals("GET")) {
      return ConfigResponse.builder().build();
    }
    if (route.equals(List.of("tables", "rename")) && method.equals("POST")) {
      CatalogHandlers.renameTable(backing, read(body, RenameTableRequest.class));
      return null;
    }
    if (route.isEmpty() || !route.get(0).equals("namespaces")) {
      throw notFound(method, route);
    }
    if (route.size() == 1) {
      return switch (method) {
        case "GET" -> CatalogHandlers.listNamespaces(namespaces, Namespace.empty());
        case "POST" ->
          CatalogHandlers.createNamespace(namespaces, read(body, CreateNamespaceRequest.class));
        default -> throw notFound(method, route);
      };
    }
    Namespace ns = RESTUtil.decodeNamespace(route.get(1), NAMESPACE_SEPARATOR);
    if (route.size() == 2) {
      switch (method) {
        case "GET":
          return CatalogHandlers.loadNamespace(namespaces, ns);
        case "HEAD":
          CatalogHandlers.namespaceExists(namespaces, ns);
          return null;
        case "DELETE":
          CatalogHandlers.dropNamespace(namespaces, ns);
          return null;
        default:
          throw notFound(method, route);
      }
    }
    if (route.size() == 3 && route.get(2).equals("properties") && method.equals("POST")) {
      return CatalogHandlers.updateNamespaceProperties(
          namespaces, ns, read(body, UpdateNamespacePropertiesRequest.class));
    }
    if (!route.get(2).equals("tables")) {
      throw notFound(method, route);
    }
    if (route.size() == 3) {
      return switch (method) {
        case "GET" -> CatalogHandlers.listTables(backing, ns);
        case "POST" -> {
          CreateTableRequest request = read(body, CreateTableRequest.class);
          // A staged create (a create transaction) makes no table until its commit.
          yield request.stageCreate()
              ? CatalogHandlers.stageTableCreate(backing, ns, request)
              : CatalogHandlers.createTable(backing, ns, request);
        }
        default -> throw notFound(method, route);
      };
    }
    TableIdentifier id = TableIdentifier.of(ns, RESTUtil.decodeString(route.get(3)));
    if (route.size() == 5 && route.get(4).equals("metrics") && method.equals("POST")) {
      return null;
    }
    if (route.size() != 4) {
      throw notFound(method, route);
    }
    switch (method) {
      case "GET":
        return CatalogHandlers.loadTable(backing, id, RESTCatalogProperties.SnapshotMode.ALL);
      case "HEAD":
        CatalogHandlers.tableExists(backing, id);
        return null;
      case "POST":
        commits.incrementAndGet();
        Runnable other = beforeNextCommit.getAndSet(null);
        if (other != null) {
          other.run();
        }
        return CatalogHandlers.updateTable(backing, id, read(body, UpdateTableRequest.class));
      case "DELETE":
        CatalogHandlers.dropTable(backing, id);
        return null;
      default:
        throw notFound(method, route);
    }
  }

  private static boolean isCommit(String method, List<String> route) {
    return method.equals("POST") && route.size() == 4 && route.get(2).equals("tables");
  }

  private static NotFoundException notFound(String method, List<String> route) {
    return new NotFoundException("no route %s /v1/%s", method, String.join("/", route));
  }

  private <T> T read(byte[] body, Class<T> type) throws IOException {
    return mapper.readValue(new String(body, StandardCharsets.UTF_8), type);
  }

  /** The status Iceberg's REST client maps back to the exception (its {@code ErrorHandlers}). */
  private static int codeOf(Exception e) {
    if (e instanceof NoSuchTableException
        || e instanceof NoSuchNamespaceException
        || e instanceof NotFoundException) {
      return 404;
    }
    if (e instanceof AlreadyExistsException
        || e instanceof CommitFailedException
        || e instanceof NamespaceNotEmptyException) {
      return 409;
    }
    if (e instanceof ValidationException
        || e instanceof IllegalArgumentException
        || e instanceof IOException) {
      return 400; // IOException: a body that is not the request's JSON
    }
    return 500; // CommitStateUnknownException and the rest: the client cannot tell what happened
  }

  private static void send(HttpExchange exchange, int code, byte[] bytes) throws IOException {
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }
}
