package dev.lakestream.common.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.metrics.MetricsEndpoint;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class HealthTest {

  @Test
  void upDegradedWhileATableHasAProblemDownWhenThreadsKeepDyingOrTheClientStops() {
    Health health = new Health();
    AtomicBoolean running = new AtomicBoolean(true);
    health.running(running::get);
    long now = 1_000_000;
    assertThat(health.status(now)).isEqualTo(Health.Status.UP);

    health.problem("sync table db.t", "parked after 2 failure(s)");
    assertThat(health.status(now)).isEqualTo(Health.Status.DEGRADED);
    assertThat(health.describe(now))
        .contains("\"status\":\"DEGRADED\"", "sync table db.t", "parked after 2");
    health.clear("sync table db.t");
    assertThat(health.status(now)).isEqualTo(Health.Status.UP);

    health.threadFailed(now);
    health.threadFailed(now + 1_000);
    assertThat(health.status(now + 2_000))
        .as("two replaced threads: not yet a pattern")
        .isEqualTo(Health.Status.UP);
    health.threadFailed(now + 2_000);
    assertThat(health.status(now + 3_000))
        .as("a thread dies again and again")
        .isEqualTo(Health.Status.DOWN);
    assertThat(health.status(now + 2_000 + Health.FAILURE_WINDOW.toMillis() + 1))
        .as("failures older than the window are forgotten")
        .isEqualTo(Health.Status.UP);

    running.set(false);
    assertThat(health.status(now)).isEqualTo(Health.Status.DOWN);
  }

  @Test
  void theEndpointServesHealthAsJsonWith503OnlyWhenDownAndBindsWhereItIsTold() throws Exception {
    Health health = new Health();
    try (MetricsEndpoint endpoint = new MetricsEndpoint("127.0.0.1", 0)) {
      endpoint.health(health);
      HttpClient http = HttpClient.newHttpClient();
      URI uri = URI.create("http://127.0.0.1:" + endpoint.port() + "/health");
      HttpResponse<String> up =
          http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(up.statusCode()).isEqualTo(200);
      assertThat(up.body()).contains("\"status\":\"UP\"");

      health.problem("sync table db.t", "stalled");
      HttpResponse<String> degraded =
          http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(degraded.statusCode()).isEqualTo(200);
      assertThat(degraded.body()).contains("DEGRADED", "stalled");

      health.running(() -> false);
      HttpResponse<String> down =
          http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(down.statusCode()).isEqualTo(503);
      assertThat(endpoint.boundAddress()).isEqualTo("127.0.0.1");
    }
  }
}
