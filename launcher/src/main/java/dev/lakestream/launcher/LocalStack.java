package dev.lakestream.launcher;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The full stack in this JVM, as the demo and the benchmarks run it: a source database ({@code
 * postgresql} or {@code mariadb}, see {@link DemoSource}) with {@code inventory.customers}, a Kafka
 * broker, Kafka Connect with the Debezium connector, ingest and sync, over a local warehouse. Two
 * steps: {@link #prepare} starts the source and the broker and creates the empty table (rows added
 * then are in the connector's snapshot); {@link #capture} starts Connect, both apps and the
 * connector. Closing stops everything, in reverse.
 */
public final class LocalStack implements AutoCloseable {

  private final DemoSource source;
  private final EmbeddedKafka kafka;
  private final PipelineConfig shared;
  private final Catalog catalog;
  private final List<AutoCloseable> started = new ArrayList<>();
  private EmbeddedConnect connect;
  private StreamsApp ingest;
  private StreamsApp sync;

  private LocalStack(
      DemoSource source, EmbeddedKafka kafka, PipelineConfig shared, Catalog catalog) {
    this.source = source;
    this.kafka = kafka;
    this.shared = shared;
    this.catalog = catalog;
  }

  /** {@code settings}: more settings of both apps, over the local defaults. */
  public static LocalStack prepare(String sourceName, Path warehouse, Map<String, String> settings)
      throws Exception {
    DemoSource source = DemoSource.start(sourceName);
    EmbeddedKafka kafka = null;
    try {
      kafka = EmbeddedKafka.start();
      source.createTable();
      PipelineConfig shared = LocalPipeline.settings(
          kafka.bootstrapServers(), Map.of("warehouse", warehouse.toString()));
      for (Map.Entry<String, String> setting : source.pipelineSettings().entrySet()) {
        shared = shared.with(setting.getKey(), setting.getValue());
      }
      for (Map.Entry<String, String> setting : settings.entrySet()) {
        shared = shared.with(setting.getKey(), setting.getValue());
      }
      Catalog catalog = CatalogLoader.load(shared.catalogName(), shared.catalogProperties());
      return new LocalStack(source, kafka, shared, catalog);
    } catch (Exception | Error e) {
      for (AutoCloseable part : new AutoCloseable[] {kafka, source}) {
        try {
          if (part != null) {
            part.close();
          }
        } catch (Exception closing) {
          e.addSuppressed(closing);
        }
      }
      throw e;
    }
  }

  /** Starts Connect, ingest and sync, and registers the source's connector. */
  public void capture() throws Exception {
    connect = track(EmbeddedConnect.start(kafka.bootstrapServers()));
    ingest = track(IngestApp.create(app("demo-ingest")));
    sync = track(SyncApp.create(app("demo-sync")));
    ingest.start();
    sync.start();
    connect.createConnector(
        source.connectorJson(), source.connectorOverrides(kafka.bootstrapServers()));
  }

  private <T extends AutoCloseable> T track(T part) {
    started.add(part);
    return part;
  }

  private PipelineConfig app(String id) throws Exception {
    return shared
        .with(StreamsConfig.APPLICATION_ID_CONFIG, id)
        .with(
            StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory(id + "-").toString());
  }

  DemoSource source() {
    return source;
  }

  public EmbeddedKafka kafka() {
    return kafka;
  }

  public PipelineConfig shared() {
    return shared;
  }

  public Catalog catalog() {
    return catalog;
  }

  public EmbeddedConnect connect() {
    return connect;
  }

  public StreamsApp ingest() {
    return ingest;
  }

  public StreamsApp sync() {
    return sync;
  }

  /** A connection to the source database. */
  public Connection connectToSource() throws SQLException {
    return source.connect();
  }

  /** Commits {@code c}'s transaction; {@link #commitTimesMs} turns what it returns into its commit time. */
  public long commit(Connection c) throws SQLException {
    return source.commit(c);
  }

  /** The source's commit times (ms since the epoch) of transactions {@link #commit} returned. */
  public List<Long> commitTimesMs(List<Long> commits) throws SQLException {
    return source.commitTimesMs(commits);
  }

  @Override
  public void close() throws Exception {
    Exception first = null;
    List<AutoCloseable> parts = new ArrayList<>();
    for (int i = started.size() - 1; i >= 0; i--) {
      parts.add(started.get(i));
    }
    if (catalog instanceof AutoCloseable closeable) {
      parts.add(closeable);
    }
    parts.add(kafka);
    parts.add(source);
    for (AutoCloseable part : parts) {
      try {
        part.close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
