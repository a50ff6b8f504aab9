package dev.lakestream.common.metrics;

import io.micrometer.core.instrument.Metrics;
import org.apache.iceberg.metrics.CommitReport;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;

/**
 * Counts Iceberg's commits and their attempts (an attempt beyond the first is a retry after a
 * concurrent commit, for example ingest's and sync's on one table) into Micrometer's global
 * registry, which every app's metrics endpoint includes. Installed as the catalog's {@code
 * metrics-reporter-impl} unless the user sets another.
 */
public final class CommitMetricsReporter implements MetricsReporter {

  @Override
  public void report(MetricsReport report) {
    if (report instanceof CommitReport commit) {
      Metrics.counter("lakestream.iceberg.commits", "operation", commit.operation())
          .increment();
      CounterResult attempts = commit.commitMetrics().attempts();
      if (attempts != null && attempts.value() > 1) {
        Metrics.counter("lakestream.iceberg.commit.retries", "operation", commit.operation())
            .increment(attempts.value() - 1);
      }
    }
  }
}
