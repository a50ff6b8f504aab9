package dev.lakestream.common.metrics;

import com.sun.net.httpserver.HttpServer;
import dev.lakestream.common.app.Health;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a Micrometer registry in Prometheus text format at {@code /metrics}, and {@code /health}:
 * the app's {@link Health} as JSON, with status 200 while it is {@code UP} or {@code DEGRADED} and
 * 503 when {@code DOWN} (for container health checks). Port 0 picks a free port; a negative port
 * serves nothing (the registry still counts). It listens on the given address ({@code
 * lakestream.metrics.bind.address}; {@code 0.0.0.0}, every interface, by default, for a
 * container's scraper; {@code 127.0.0.1} keeps it on the machine).
 */
public final class MetricsEndpoint implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(MetricsEndpoint.class);

  private final PrometheusMeterRegistry registry;
  private final HttpServer server;
  private volatile Health health = new Health();

  public MetricsEndpoint(int port) throws IOException {
    this("0.0.0.0", port);
  }

  public MetricsEndpoint(String bindAddress, int port) throws IOException {
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // Meters registered globally (Iceberg's commit reports) show here too.
    Metrics.addRegistry(registry);
    if (port < 0) {
      this.server = null;
      return;
    }
    try {
      this.server = HttpServer.create(new InetSocketAddress(bindAddress, port), 0);
    } catch (BindException e) {
      registry.close();
      throw new IllegalStateException(
          "metrics port " + port + " of " + bindAddress
              + " is in use; set lakestream.metrics.port to a free port, 0 for"
              + " any, or -1 for none",
          e);
    }
    server.createContext("/metrics", exchange -> {
      byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.createContext("/health", exchange -> {
      long now = System.currentTimeMillis();
      Health current = health;
      boolean down = current.status(now) == Health.Status.DOWN;
      byte[] body = (current.describe(now) + "\n").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(down ? 503 : 200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    LOG.info("Metrics at http://{}:{}/metrics", bindAddress, port());
  }

  /** What {@code /health} reports. */
  public void health(Health health) {
    this.health = health;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public int port() {
    return server == null ? -1 : server.getAddress().getPort();
  }

  /** The address it listens on ({@code 0.0.0.0}: every interface), or null when it serves nothing. */
  public String boundAddress() {
    return server == null ? null : server.getAddress().getAddress().getHostAddress();
  }

  @Override
  public void close() {
    if (server != null) {
      server.stop(0);
    }
    Metrics.removeRegistry(registry);
    registry.close();
  }
}
