package dev.lakestream.launcher;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The whole pipeline on real parts for one end-to-end test: a Kafka broker, a PostgreSQL server
 * prepared with the test's statements (and Debezium's signal table), a warehouse, a Kafka Connect
 * worker, ingest and sync running; the shipped connector registered with the signal table named.
 * Closed in reverse order.
 */
final class PostgresPipeline implements AutoCloseable {

  /** Debezium's signal table, which the README's incremental snapshot writes to. */
  static final String SIGNAL_TABLE = "inventory.debezium_signal";

  final EmbeddedKafka kafka;
  final EmbeddedPostgres postgres;
  final TemporaryWarehouse warehouse;
  final EmbeddedConnect connect;
  final StreamsApp ingest;
  final StreamsApp sync;
  final Catalog reader;

  private PostgresPipeline(
      EmbeddedKafka kafka,
      EmbeddedPostgres postgres,
      TemporaryWarehouse warehouse,
      EmbeddedConnect connect,
      StreamsApp ingest,
      StreamsApp sync) {
    this.kafka = kafka;
    this.postgres = postgres;
    this.warehouse = warehouse;
    this.connect = connect;
    this.ingest = ingest;
    this.sync = sync;
    this.reader = warehouse.catalog();
  }

  /**
   * Starts it all: the schema {@code inventory} and the signal table are created, then {@code
   * statements} run, then the apps start and the connector is registered with {@code settings}.
   */
  static PostgresPipeline start(Map<String, String> settings, String... statements)
      throws Exception {
    return start(settings, Map.of(), statements);
  }

  /** As {@link #start(Map, String...)}, with {@code apps} added to both apps' settings. */
  static PostgresPipeline start(
      Map<String, String> settings, Map<String, String> apps, String... statements)
      throws Exception {
    List<AutoCloseable> started = new ArrayList<>();
    try {
      EmbeddedKafka kafka = keep(started, EmbeddedKafka.start());
      EmbeddedPostgres postgres = keep(started, EmbeddedPostgres.start());
      postgres.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE " + SIGNAL_TABLE
              + " (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))");
      postgres.execute(statements);
      TemporaryWarehouse warehouse = keep(started, new TemporaryWarehouse());
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse);
      for (Map.Entry<String, String> setting : apps.entrySet()) {
        shared = shared.with(setting.getKey(), setting.getValue());
      }
      EmbeddedConnect connect = keep(started, EmbeddedConnect.start(kafka.bootstrapServers()));
      StreamsApp ingest =
          keep(started, IngestApp.create(PostgresEndToEndTest.app(shared, "ingest")));
      StreamsApp sync = keep(started, SyncApp.create(PostgresEndToEndTest.app(shared, "sync")));
      PostgresPipeline pipeline =
          new PostgresPipeline(kafka, postgres, warehouse, connect, ingest, sync);
      ingest.start();
      sync.start();
      Map<String, String> connector = new HashMap<>(settings);
      connector.put("signal.data.collection", SIGNAL_TABLE);
      PostgresEndToEndTest.registerConnector(connect, postgres, connector);
      return pipeline;
    } catch (Exception | Error e) {
      closeAll(started, e);
      throw e;
    }
  }

  /** Asks Debezium for an incremental snapshot of {@code table} ({@code schema.table}). */
  void incrementalSnapshot(String table) throws Exception {
    incrementalSnapshot(table, null);
  }

  /**
   * Asks Debezium for an incremental snapshot of {@code table} ({@code schema.table}) of the rows
   * {@code filter} (an SQL condition, in Debezium's {@code additional-conditions}) selects, or of
   * all when null.
   */
  void incrementalSnapshot(String table, String filter) throws Exception {
    String conditions = filter == null
        ? ""
        : ", \"additional-conditions\": [{\"data-collection\": \"" + table + "\", \"filter\": \""
            + filter.replace("'", "''") + "\"}]";
    postgres.execute("INSERT INTO " + SIGNAL_TABLE + " (id, type, data) VALUES"
        + " ('snapshot-" + System.nanoTime() + "', 'execute-snapshot',"
        + " '{\"data-collections\": [\"" + table + "\"], \"type\": \"incremental\""
        + conditions + "}')");
  }

  /** Null when realtime and main of {@code id} equal the rows of {@code query}; else what differs. */
  String differs(String query, TableIdentifier id, List<String> key) throws Exception {
    return SourceTableComparison.differs(reader, postgres::connect, query, id, key);
  }

  @Override
  public void close() throws Exception {
    closeAll(List.of(kafka, postgres, warehouse, connect, ingest, sync), null);
  }

  private static <T extends AutoCloseable> T keep(List<AutoCloseable> started, T part) {
    started.add(part);
    return part;
  }

  /** Closes {@code parts} last first; the first failure is thrown, the others added to it. */
  private static void closeAll(List<AutoCloseable> parts, Throwable failed) throws Exception {
    Exception first = null;
    for (int i = parts.size() - 1; i >= 0; i--) {
      try {
        parts.get(i).close();
      } catch (Exception e) {
        if (failed != null) {
          failed.addSuppressed(e);
        } else if (first == null) {
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
