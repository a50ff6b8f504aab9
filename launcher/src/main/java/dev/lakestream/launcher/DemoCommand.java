package dev.lakestream.launcher;

import dev.lakestream.common.app.StopSignals;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SnapshotRows;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.common.iceberg.BranchFiles;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.InputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.StreamsConfig;

/**
 * {@code demo [--duration SECONDS] [--rate CHANGES_PER_SECOND] [--warehouse DIR] [--export-source FILE]}: the whole
 * pipeline in one process on a machine with nothing but Java: PostgreSQL (the machine's, or the
 * binaries shipped in a jar), a Kafka broker, Kafka Connect with the Debezium Postgres connector
 * (registered with {@code connectors/postgres-inventory.json}), ingest and sync. It creates {@code
 * inventory.customers}, changes it at a steady rate with a progress line, and on Ctrl-C or after
 * the duration prints how main compares with the source. {@code --export-source} also writes the
 * source table's final rows as JSON lines, so another engine's read of the warehouse can be checked
 * against the source itself (the engine check does that with Spark).
 */
final class DemoCommand {

  private static final TableIdentifier TABLE = TableIdentifier.of("inventory", "customers");

  private final PrintStream out;
  private final Random random = new Random();
  private final List<Long> ids = new ArrayList<>();
  private final List<Long> txids = Collections.synchronizedList(new ArrayList<>());
  private final AtomicBoolean stop = new AtomicBoolean();
  private volatile long lastCommitMs;
  private volatile long changes;
  private long nextId = 1;

  private final Path exportSource;

  private DemoCommand(PrintStream out, Path exportSource) {
    this.out = out;
    this.exportSource = exportSource;
  }

  static int run(String[] args, PrintStream out) throws Exception {
    long durationS = 0;
    int rate = 200;
    Path warehouse = Path.of("warehouse");
    Path exportSource = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--duration" -> durationS = Long.parseLong(args[++i].replaceAll("s$", ""));
        case "--rate" -> rate = Integer.parseInt(args[++i]);
        case "--warehouse" -> warehouse = Path.of(args[++i]);
        case "--export-source" -> exportSource = Path.of(args[++i]);
        default -> {
          out.println("usage: demo [--duration SECONDS] [--rate CHANGES_PER_SECOND] [--warehouse DIR]"
              + " [--export-source FILE]");
          return 2;
        }
      }
    }
    return new DemoCommand(out, exportSource).run(durationS, rate, warehouse.toAbsolutePath());
  }

  private int run(long durationS, int rate, Path warehouse) throws Exception {
    CountDownLatch signal = StopSignals.install();
    Thread watcher = new Thread(() -> {
      try {
        signal.await();
        say("stopping (Ctrl-C)");
        stop.set(true);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "demo-stop");
    watcher.setDaemon(true);
    watcher.start();
    return demo(durationS, rate, warehouse);
  }

  private int demo(long durationS, int rate, Path warehouse) throws Exception {
    say("starting PostgreSQL, a Kafka broker, Kafka Connect with Debezium, ingest and sync; warehouse " + warehouse);
    try (EmbeddedPostgres postgres = EmbeddedPostgres.start();
        EmbeddedKafka kafka = EmbeddedKafka.start()) {
      createTable(postgres, 1000);
      PipelineConfig shared = LocalPipeline.settings(kafka.bootstrapServers(), Map.of("warehouse", warehouse.toString()));
      Catalog catalog = CatalogLoader.load(shared.catalogName(), shared.catalogProperties());
      try (EmbeddedConnect connect = EmbeddedConnect.start(kafka.bootstrapServers());
          StreamsApp ingest = IngestApp.create(app(shared, "demo-ingest"));
          StreamsApp sync = SyncApp.create(app(shared, "demo-sync"))) {
        ingest.start();
        sync.start();
        connect.createConnector(connectorJson(), Map.of(
            "database.hostname", "127.0.0.1", "database.port", Integer.toString(postgres.port()), "database.password", ""));
        say("PostgreSQL :" + postgres.port() + ", Kafka " + kafka.bootstrapServers() + ", Connect " + connect.restUrl()
            + ", metrics :" + ingest.metricsPort() + " (ingest) :" + sync.metricsPort() + " (sync)");
        say("changing inventory.customers at " + rate + " changes/s"
            + (durationS > 0 ? " for " + durationS + " s" : "") + "; Ctrl-C stops");
        Thread workload = new Thread(() -> workload(postgres, rate), "demo-workload");
        workload.start();
        long end = durationS > 0 ? System.currentTimeMillis() + durationS * 1000 : Long.MAX_VALUE;
        long lastChanges = 0;
        long lastAt = System.currentTimeMillis();
        while (!stop.get() && System.currentTimeMillis() < end) {
          Thread.sleep(2_000);
          long now = System.currentTimeMillis();
          long c = changes;
          progress(catalog, (c - lastChanges) * 1000.0 / Math.max(1, now - lastAt));
          lastChanges = c;
          lastAt = now;
        }
        stop.set(true);
        workload.join(10_000);
        say("stopped the workload after " + changes + " changes; waiting for main to catch up");
        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline && mainRows(catalog) != count(postgres)) {
          Thread.sleep(1_000);
        }
        summary(postgres, kafka, catalog, shared, warehouse);
        if (exportSource != null) {
          say("source rows (PostgreSQL's SELECT *) written to " + exportSource + ": " + exportSource(postgres, exportSource));
        }
      } finally {
        if (catalog instanceof AutoCloseable closeable) {
          closeable.close();
        }
      }
    }
    say("stopped cleanly");
    return 0;
  }

  private static PipelineConfig app(PipelineConfig shared, String id) throws Exception {
    return shared.with(StreamsConfig.APPLICATION_ID_CONFIG, id)
        .with(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory(id + "-").toString());
  }

  private static String connectorJson() throws Exception {
    try (InputStream in = DemoCommand.class.getResourceAsStream("/connectors/postgres-inventory.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private void createTable(EmbeddedPostgres postgres, int rows) throws Exception {
    postgres.execute(
        "CREATE SCHEMA inventory",
        "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, name text, balance numeric(12,2), active boolean,"
            + " updated_at timestamptz)");
    try (Connection c = postgres.connect()) {
      c.setAutoCommit(false);
      for (int i = 0; i < rows; i++) {
        insert(c);
      }
      c.commit();
    }
  }

  /** Transactions of one to three changes (50% updates, 30% inserts, 20% deletes) at the rate. */
  private void workload(EmbeddedPostgres postgres, int rate) {
    try (Connection c = postgres.connect()) {
      c.setAutoCommit(false);
      long started = System.nanoTime();
      long done = 0;
      while (!stop.get()) {
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
          int pick = random.nextInt(10);
          if (pick < 3 || ids.isEmpty()) {
            insert(c);
          } else if (pick < 8) {
            update(c, "UPDATE inventory.customers SET balance = ?, active = ?, updated_at = now() WHERE id = ?",
                BigDecimal.valueOf(random.nextInt(10_000_000), 2), random.nextBoolean(), ids.get(random.nextInt(ids.size())));
          } else {
            update(c, "DELETE FROM inventory.customers WHERE id = ?", ids.remove(random.nextInt(ids.size())));
          }
        }
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_current_xact_id()::text::bigint")) {
          rs.next();
          txids.add(rs.getLong(1));
        }
        c.commit();
        lastCommitMs = System.currentTimeMillis();
        done += n;
        changes = done;
        long due = started + done * 1_000_000_000L / rate;
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
      }
    } catch (Exception e) {
      say("workload stopped: " + e.getMessage());
    }
  }

  private void insert(Connection c) throws Exception {
    long id = nextId++;
    ids.add(id);
    update(c, "INSERT INTO inventory.customers VALUES (?, ?, ?, ?, ?)", id, "customer " + id,
        BigDecimal.valueOf(random.nextInt(10_000_000), 2), random.nextBoolean(), OffsetDateTime.now());
  }

  private static void update(Connection c, String sql, Object... args) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      ps.executeUpdate();
    }
  }

  private void progress(Catalog catalog, double changesPerSecond) {
    if (!catalog.tableExists(TABLE)) {
      say(String.format("%6.0f changes/s | waiting for the first change to reach the table", changesPerSecond));
      return;
    }
    Table table = catalog.loadTable(TABLE);
    Snapshot realtime = table.snapshot(Branches.REALTIME);
    Snapshot main = table.snapshot(Branches.MAIN);
    long pendingDeletes = 0;
    long watermark = BranchFiles.watermark(table).orElse(-1L);
    for (Snapshot s = realtime; s != null && s.snapshotId() != watermark; s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      pendingDeletes += Long.parseLong(s.summary().getOrDefault("added-equality-delete-files", "0"));
    }
    say(String.format("%6.0f changes/s | realtime lag %s | main lag %s | equality-delete files pending on main %d",
        changesPerSecond, lag(realtime), lag(main), pendingDeletes));
  }

  private String lag(Snapshot snapshot) {
    String ts = snapshot == null ? null : snapshot.summary().get(SummaryKeys.MAX_SOURCE_TS_MS);
    if (ts == null) {
      return "  -  ";
    }
    return String.format("%5.1f s", Math.max(0, lastCommitMs - Long.parseLong(ts)) / 1000.0);
  }

  private static long mainRows(Catalog catalog) {
    if (!catalog.tableExists(TABLE)) {
      return -1;
    }
    Table table = catalog.loadTable(TABLE);
    return Long.parseLong(table.snapshot(Branches.MAIN).summary().getOrDefault("total-records", "0"))
        - Long.parseLong(table.snapshot(Branches.MAIN).summary().getOrDefault("total-position-deletes", "0"));
  }

  private static long count(EmbeddedPostgres postgres) throws Exception {
    try (Connection c = postgres.connect(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM inventory.customers")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void summary(EmbeddedPostgres postgres, EmbeddedKafka kafka, Catalog catalog, PipelineConfig shared, Path warehouse)
      throws Exception {
    Table table = catalog.loadTable(TABLE);
    long equalityDeletes = 0;
    for (DeleteFile f : BranchFiles.liveDeleteFiles(table, table.snapshot(Branches.REALTIME)).values()) {
      if (f.content() == FileContent.EQUALITY_DELETES) {
        equalityDeletes++;
      }
    }
    int dvs = BranchFiles.deletionVectors(table, table.snapshot(Branches.MAIN)).size();
    long[] mainRows = {0};
    SnapshotRows.forEach(table, table.snapshot(Branches.MAIN).snapshotId(), row -> mainRows[0]++);
    List<Long> freshness = freshness(postgres, kafka, shared.topicPrefix() + ".main-commits");
    Collections.sort(freshness);
    say("rows in PostgreSQL: " + count(postgres) + " | rows in main: " + mainRows[0]);
    say("equality-delete files on realtime: " + equalityDeletes + " | deletion vectors on main: " + dvs
        + " (and no equality delete)");
    if (!freshness.isEmpty()) {
      say(String.format("freshness, source commit -> on main (%d transactions): p50 %.1f s, p99 %.1f s",
          freshness.size(), freshness.get(freshness.size() / 2) / 1000.0,
          freshness.get(Math.min(freshness.size() - 1, (int) (freshness.size() * 0.99))) / 1000.0));
    }
    say("warehouse: " + warehouse + " (JDBC catalog on SQLite: " + warehouse.resolve("catalog.db") + ")");
    say("check it:  java -jar launcher/target/lakestream.jar verify --table inventory.customers"
        + "  (with LAKESTREAM_ICEBERG_CATALOG_WAREHOUSE=" + warehouse + ")");
    say("query it with Spark:  spark-sql --packages org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"
        + " --conf spark.sql.catalog.lakestream=org.apache.iceberg.spark.SparkCatalog"
        + " --conf spark.sql.catalog.lakestream.catalog-impl=org.apache.iceberg.jdbc.JdbcCatalog"
        + " --conf spark.sql.catalog.lakestream.uri=jdbc:sqlite:" + warehouse.resolve("catalog.db")
        + " --conf spark.sql.catalog.lakestream.warehouse=" + warehouse
        + " --conf spark.sql.catalog.lakestream.jdbc.schema-version=V1"
        + " -e \"SELECT active, count(*), sum(balance) FROM lakestream.inventory.customers GROUP BY active\"");
  }

  /**
   * The source table's final rows as JSON lines, to compare any engine's read of the warehouse with
   * the source itself: {@code balance} as its exact decimal text, {@code updated_at} as microseconds
   * since the epoch.
   */
  private static long exportSource(EmbeddedPostgres postgres, Path file) throws Exception {
    ObjectMapper json = new ObjectMapper();
    long rows = 0;
    try (Connection c = postgres.connect(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, name, balance::text, active,"
            + " (extract(epoch FROM updated_at) * 1000000)::bigint FROM inventory.customers");
        BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      while (rs.next()) {
        ObjectNode row = json.createObjectNode();
        row.put("id", rs.getLong(1));
        row.put("name", rs.getString(2));
        row.put("balance", rs.getString(3));
        row.put("active", rs.getObject(4) == null ? null : rs.getBoolean(4));
        row.put("updated_at_micros", rs.getObject(5) == null ? null : rs.getLong(5));
        w.write(json.writeValueAsString(row));
        w.newLine();
        rows++;
      }
    }
    return rows;
  }

  /** Freshness per transaction, from the main commits announced on {@code topic}. */
  private List<Long> freshness(EmbeddedPostgres postgres, EmbeddedKafka kafka, String topic) throws Exception {
    List<MainCommitted> commits = new ArrayList<>();
    Map<String, Object> props = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
        ConsumerConfig.GROUP_ID_CONFIG, "demo-" + UUID.randomUUID(),
        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.currentTimeMillis() + 5_000;
      while (System.currentTimeMillis() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(r -> commits.add(MainCommitted.fromJson(r.value())));
      }
    }
    try (Connection c = postgres.connect()) {
      return Freshness.perTransaction(c, new ArrayList<>(txids), commits);
    }
  }

  private void say(String line) {
    out.println("demo | " + line);
  }
}
