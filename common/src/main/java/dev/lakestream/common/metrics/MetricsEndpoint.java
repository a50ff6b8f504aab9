package dev.lakestream.common.metrics;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a Micrometer registry in Prometheus text format at {@code /metrics}, and {@code /health}:
 * 200 while the app is healthy, 503 otherwise (for container health checks). Port 0 picks a free
 * port; a negative port serves nothing (the registry still counts).
 */
public final class MetricsEndpoint implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(MetricsEndpoint.class);

  private final PrometheusMeterRegistry registry;
  private final HttpServer server;
  private volatile BooleanSupplier healthy = () -> true;

  public MetricsEndpoint(int port) throws IOException {
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // Meters registered globally (Iceberg's commit reports) show here too.
    io.micrometer.core.instrument.Metrics.addRegistry(registry);
    if (port < 0) {
      this.server = null;
      return;
    }
    try {
      this.server = HttpServer.create(new InetSocketAddress(port), 0);
    } catch (java.net.BindException e) {
      registry.close();
      throw new IllegalStateException(
          "metrics port " + port + " is in use; set lakestream.metrics.port to a free port, 0 for any, or -1 for none", e);
    }
    server.createContext(
        "/metrics",
        exchange -> {
          byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
          exchange.sendResponseHeaders(200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    server.createContext(
        "/health",
        exchange -> {
          boolean ok = healthy.getAsBoolean();
          byte[] body = (ok ? "UP\n" : "DOWN\n").getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(ok ? 200 : 503, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    server.start();
    LOG.info("Metrics at http://localhost:{}/metrics", port());
  }

  /** What {@code /health} reports. */
  public void health(BooleanSupplier healthy) {
    this.healthy = healthy;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public int port() {
    return server == null ? -1 : server.getAddress().getPort();
  }

  @Override
  public void close() {
    if (server != null) {
      server.stop(0);
    }
    io.micrometer.core.instrument.Metrics.removeRegistry(registry);
    registry.close();
  }
}
