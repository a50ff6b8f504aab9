package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SnapshotRows;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * The Kafka Connect worker running Debezium, in a process of its own, killed (SIGKILL) mid-workload
 * and restarted from offsets it flushed seconds earlier: it publishes again what it published since. Ingest fences
 * those replays by source position, so no row on main ever moves backwards and no deleted row comes
 * back: every main snapshot is checked against the rows before it. Each write of the source sets a
 * {@code version} that grows across the whole workload, so a row that goes back to an older version,
 * or a deleted key that comes back with a version it had before, is a regression. At the last kill
 * ingest stops too and another instance takes over, knowing of the changes applied before only
 * what its state stores restore.
 */
class ConnectRestartTest {

  private static final int KILLS = 2;

  @Test
  void replaysAfterConnectRestartsNeverMoveARowBackwards() throws Exception {
    Random random = new Random(8);
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      AtomicLong version = new AtomicLong();
      List<Long> live = new ArrayList<>();
      try (Connection c = postgres.connect();
          Statement s = c.createStatement()) {
        s.execute("CREATE SCHEMA IF NOT EXISTS inventory");
        s.execute(
            "CREATE TABLE inventory.counters (id bigint PRIMARY KEY, version bigint NOT NULL, note text)");
        for (long id = 1; id <= 200; id++) {
          s.execute("INSERT INTO inventory.counters VALUES (" + id + ", "
              + version.incrementAndGet() + ", 'n')");
          live.add(id);
        }
      }
      Path dir = Files.createTempDirectory("connect-restart-");
      Path connectorJson = dir.resolve("connector.json");
      Files.writeString(connectorJson, connector(postgres));
      PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse)
          .with("sync.maintenance.enabled", "false")
          .with("ingest.changelog.tables", "inventory.counters");
      ChildApp connect = new ChildApp(
          List.of(
              EmbeddedConnect.class.getName(),
              kafka.bootstrapServers(),
              dir.resolve("connect.offsets").toString(),
              "2000",
              connectorJson.toString()),
          new PipelineConfig(Map.of()),
          dir.resolve("connect.log"));
      TableIdentifier id = TableIdentifier.of("inventory", "counters");
      List<StreamsApp> ingests = new ArrayList<>();
      ingests.add(IngestApp.create(PostgresEndToEndTest.app(shared, "ingest")));
      try (connect;
          AutoCloseable lastIngest = () -> ingests.get(ingests.size() - 1).close();
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        ingests.get(0).start();
        sync.start();
        startConnect(connect, dir.resolve("connect.log"), 1);
        Catalog reader = warehouse.catalog();
        MainWatcher watcher = new MainWatcher(reader, id);

        AtomicBoolean stop = new AtomicBoolean();
        CompletableFuture<Integer> workload = CompletableFuture.supplyAsync(() -> {
          try {
            return workload(postgres, live, version, new Random(9), stop);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
        Path offsets = dir.resolve("connect.offsets");
        // The first kill comes after the snapshot is published: a worker killed during it takes
        // it again, which this test is not about.
        Eventually.until(
            Duration.ofSeconds(90),
            "the connector's snapshot of 200 rows in Kafka",
            () -> recordsIn(kafka.bootstrapServers(), "dbserver1.inventory.counters") >= 200);
        for (int kill = 1; kill <= KILLS; kill++) {
          watchFor(watcher, 3_000);
          // The worker dies with offsets it flushed a while ago: it publishes again all it
          // published since (as a worker with a long offset.flush.interval.ms does).
          Path flushedEarlier = EmbeddedConnect.copyOffsets(
              offsets, dir.resolve("connect.offsets." + kill), Duration.ofSeconds(30));
          watchFor(watcher, 3_000 + random.nextInt(4_000));
          connect.kill();
          if (kill == KILLS) {
            // Ingest goes down with it (a machine lost, a deployment restarted): its successor, on
            // a state directory of its own as after a move, knows of what was applied only what
            // its stores restore, and the replay's first transaction carries no commit LSN.
            ingests.get(ingests.size() - 1).close();
            ingests.add(IngestApp.create(PostgresEndToEndTest.app(shared, "ingest")));
            ingests.get(ingests.size() - 1).start();
          }
          Files.copy(flushedEarlier, offsets, StandardCopyOption.REPLACE_EXISTING);
          startConnect(connect, dir.resolve("connect.log"), kill + 1);
        }
        StreamsApp ingest = ingests.get(ingests.size() - 1);
        watchFor(watcher, 4_000);
        stop.set(true);
        int changes = workload.get(60, TimeUnit.SECONDS);

        Eventually.noDifference(Duration.ofSeconds(180), () -> {
          watcher.check();
          return differs(postgres, reader, id);
        });
        watcher.check();
        double fenced = ingest.meters().find("lakestream.ingest.fenced").counters().stream()
            .mapToDouble(c -> c.count())
            .sum();
        System.out.printf(
            "Connect restart test: %d changes, Connect started %d times, %d main snapshots checked, "
                + "%.0f replayed changes fenced after the last restart; logs in %s%n",
            changes, connect.starts(), watcher.checked, fenced, dir);
        assertThat(watcher.regressions).as("rows that moved backwards on main").isEmpty();
        assertThat(watcher.checked).isGreaterThan(10);
        assertThat(fenced)
            .as("replayed changes dropped by their source position")
            .isGreaterThan(0);
        PostgresEndToEndTest.assertInvariants(reader, List.of("counters"));

        // The change log holds every change event the connector published exactly once (however
        // often it published it), and per key in source order: versions only grow.
        List<org.apache.iceberg.data.Record> log = new ArrayList<>(); // name clash
        try (var rows = IcebergGenerics.read(
                reader.loadTable(TableIdentifier.of("inventory", "counters_changelog")))
            .build()) {
          rows.forEach(r -> log.add(r.copy()));
        }
        Set<Long> publishedVersions = new HashSet<>();
        Map<String, Integer> published = publishedEvents(
            kafka.bootstrapServers(), "dbserver1.inventory.counters", publishedVersions);
        long neverPublished = version.get() - publishedVersions.size();
        Map<String, Integer> logged = new HashMap<>();
        for (org.apache.iceberg.data.Record r : log) { // name clash
          logged.merge(
              r.getField("op") + " " + r.getField("key") + " "
                  + changeLsn((String) r.getField("source_position")),
              1,
              Integer::sum);
        }
        assertThat(logged.values()).as("each change-log row once").allMatch(n -> n == 1);
        assertThat(log.stream().filter(r -> "r".equals(r.getField("op"))).count())
            .as("snapshot reads: the 200 rows once (every restart resumed from offsets)")
            .isEqualTo(200);
        Set<String> missing = new TreeSet<>(published.keySet());
        missing.removeAll(logged.keySet());
        Set<String> extra = new TreeSet<>(logged.keySet());
        extra.removeAll(published.keySet());
        assertThat(missing).as("published events missing from the change log").isEmpty();
        assertThat(extra).as("change-log rows of no published event").isEmpty();
        long replays = published.values().stream().mapToLong(n -> n - 1).sum();
        System.out.printf(
            "Change log: %d rows; the topic holds %d distinct change events (%d published more than once); "
                + "the workload made %d changes after the 200-row snapshot; %d of the %d row versions written never reached "
                + "the topic (lost by the connector across its kills)%n",
            log.size(), published.size(), replays, changes, neverPublished, version.get());
        Map<String, Long> lastVersion = new HashMap<>();
        Map<String, String> lastRow = new HashMap<>();
        ObjectMapper json = new ObjectMapper();
        log.sort(Comparator.comparing(
                (org.apache.iceberg.data.Record r) -> // name clash
                (Integer) r.getField("kafka_partition")) // name clash
            .thenComparing(r -> (Long) r.getField("kafka_offset")));
        for (org.apache.iceberg.data.Record r : log) { // name clash
          String after = (String) r.getField("after");
          if (after != null) {
            long v = json.readTree(after).get("version").asLong();
            String row = describe(r);
            Long before = lastVersion.put((String) r.getField("key"), v);
            String earlier = lastRow.put((String) r.getField("key"), row);
            assertThat(before == null || before < v)
                .as(
                    "key %s: version %d after %d (%s after %s)",
                    r.getField("key"), v, before, row, earlier)
                .isTrue();
          }
        }
      }
    }
  }

  /**
   * A COPY of 100,000 rows (one transaction; PostgreSQL logs a heap page of rows per WAL record, so
   * rows share source positions), the Connect worker killed while it publishes it and restarted from
   * offsets stored before it: the rows it publishes again are fenced, none is lost, none doubled.
   */
  @Test
  void aCopyInterruptedByAConnectRestartArrivesWholeAndOnce() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      postgres.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.counters (id bigint PRIMARY KEY, version bigint, note text)",
          "INSERT INTO inventory.counters VALUES (0, 0, 'first')");
      Path dir = Files.createTempDirectory("connect-copy-");
      Path connectorJson = dir.resolve("connector.json");
      Files.writeString(connectorJson, connector(postgres));
      PipelineConfig shared =
          PostgresEndToEndTest.shared(kafka, warehouse).with("sync.maintenance.enabled", "false");
      ChildApp connect = new ChildApp(
          List.of(
              EmbeddedConnect.class.getName(),
              kafka.bootstrapServers(),
              dir.resolve("connect.offsets").toString(),
              "1000",
              connectorJson.toString()),
          new PipelineConfig(Map.of()),
          dir.resolve("connect.log"));
      TableIdentifier id = TableIdentifier.of("inventory", "counters");
      try (connect;
          StreamsApp ingest = IngestApp.create(PostgresEndToEndTest.app(shared, "ingest"));
          StreamsApp sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"))) {
        ingest.start();
        sync.start();
        startConnect(connect, dir.resolve("connect.log"), 1);
        Catalog reader = warehouse.catalog();
        Eventually.noDifference(Duration.ofSeconds(120), () -> differs(postgres, reader, id));
        Path offsets = dir.resolve("connect.offsets");
        Thread.sleep(2_000);
        Path beforeCopy = EmbeddedConnect.copyOffsets(
            offsets, dir.resolve("connect.offsets.before-copy"), Duration.ofSeconds(30));
        postgres.execute(
            "COPY inventory.counters (id, version) FROM PROGRAM 'seq 1 100000 | sed \"s/.*/&,&/\"' WITH (FORMAT csv)");
        Eventually.until(
            Duration.ofSeconds(120),
            "the COPY partly published",
            () -> recordsIn(kafka.bootstrapServers(), "dbserver1.inventory.counters") > 20_000);
        connect.kill();
        Files.copy(beforeCopy, offsets, StandardCopyOption.REPLACE_EXISTING);
        startConnect(connect, dir.resolve("connect.log"), 2);
        Eventually.noDifference(Duration.ofSeconds(300), () -> differs(postgres, reader, id));
        double fenced = ingest.meters().find("lakestream.ingest.fenced").counters().stream()
            .mapToDouble(c -> c.count())
            .sum();
        long published = recordsIn(kafka.bootstrapServers(), "dbserver1.inventory.counters");
        Table table = reader.loadTable(id);
        long[] onMain = {0};
        SnapshotRows.forEach(table, table.snapshot(Branches.MAIN).snapshotId(), row -> onMain[0]++);
        System.out.printf(
            "COPY across a Connect restart: 100000 rows copied after 1, %d on main; %d records on the"
                + " topic, %.0f replayed changes fenced%n",
            onMain[0], published, fenced);
        assertThat(fenced).as("rows published again and dropped").isPositive();
        PostgresEndToEndTest.assertInvariants(reader, List.of("counters"));
      }
    }
  }

  /** A change-log row as the failure message shows it: op, source position and Kafka place. */
  private static String describe(org.apache.iceberg.data.Record r) { // name clash
    return "op " + r.getField("op") + " at " + r.getField("source_position") + ", offset "
        + r.getField("kafka_partition") + "/" + r.getField("kafka_offset");
  }

  /** The records {@code topic} holds: the sum of its partitions' end offsets. */
  static long recordsIn(String bootstrap, String topic) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (var consumer = new KafkaConsumer<byte[], byte[]>(
        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      var partitions = consumer.partitionsFor(topic).stream()
          .map(p -> new TopicPartition(topic, p.partition()))
          .toList();
      return consumer.endOffsets(partitions).values().stream()
          .mapToLong(Long::longValue)
          .sum();
    }
  }

  /** The change's own LSN: the event's identity with its key and op (a replay may differ in its commit LSN). */
  private static String changeLsn(String position) {
    int paren = position.indexOf(" (");
    return paren < 0 ? position : position.substring(0, paren);
  }

  /** Every change event on {@code topic} (tombstones left out) by identity (op, key, source position), with how often it is there. */
  private static Map<String, Integer> publishedEvents(
      String bootstrap, String topic, Set<Long> versions) {
    Map<String, Object> props = new HashMap<>();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    Map<String, Integer> events = new HashMap<>();
    DebeziumDecoder decoder = new DebeziumDecoder();
    try (var consumer = new KafkaConsumer<byte[], byte[]>(
        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
          .map(p -> new TopicPartition(topic, p.partition()))
          .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      long deadline = System.currentTimeMillis() + 60_000;
      while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))
          && System.currentTimeMillis() < deadline) {
        for (var record : consumer.poll(Duration.ofMillis(200))) {
          decoder.decode(record.key(), record.value()).ifPresent(e -> {
            events.merge(
                e.op().code() + " " + e.key() + " " + changeLsn(e.source().describe()),
                1,
                Integer::sum);
            if (e.after() != null) {
              versions.add(e.after().get("version").asLong());
            }
          });
        }
      }
    }
    return events;
  }

  private static String connector(EmbeddedPostgres postgres) throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode connector = (ObjectNode) json.readTree(
        Files.readString(PostgresEndToEndTest.connectorsDir().resolve("postgres-inventory.json")));
    ObjectNode config = (ObjectNode) connector.get("config");
    config.put("database.hostname", "127.0.0.1");
    config.put("database.port", Integer.toString(postgres.port()));
    config.put("database.password", "");
    config.put("table.include.list", "inventory.counters");
    // The slot keeps everything Connect has not stored an offset for, so a killed worker publishes
    // again what it published since its last offset flush (see the README on lsn.flush.mode).
    config.put("lsn.flush.mode", "manual");
    return json.writeValueAsString(connector);
  }

  private static void startConnect(ChildApp connect, Path log, int starts) throws Exception {
    connect.start();
    Eventually.until(
        Duration.ofSeconds(90),
        "Kafka Connect running its connector (start " + starts + ")",
        () -> {
          if (!Files.exists(log)) {
            return false;
          }
          return Files.readString(log).split(EmbeddedConnect.READY, -1).length - 1 >= starts;
        });
  }

  private static void watchFor(MainWatcher watcher, long ms) throws Exception {
    long until = System.currentTimeMillis() + ms;
    while (System.currentTimeMillis() < until) {
      watcher.check();
      Thread.sleep(200);
    }
  }

  /** Updates, deletes and re-inserts; every write sets a version higher than any before it. */
  private static int workload(
      EmbeddedPostgres postgres,
      List<Long> live,
      AtomicLong version,
      Random random,
      AtomicBoolean stop)
      throws Exception {
    List<Long> deleted = new ArrayList<>();
    int changes = 0;
    try (Connection c = postgres.connect()) {
      c.setAutoCommit(false);
      while (!stop.get()) {
        int n = 1 + random.nextInt(4);
        for (int i = 0; i < n; i++) {
          int pick = random.nextInt(10);
          if (pick < 6 && !live.isEmpty()) {
            long key = live.get(random.nextInt(live.size()));
            execute(
                c,
                "UPDATE inventory.counters SET version = ?, note = ? WHERE id = ?",
                version.incrementAndGet(),
                "u" + random.nextInt(1000),
                key);
          } else if (pick < 8 && live.size() > 20) {
            long key = live.remove(random.nextInt(live.size()));
            deleted.add(key);
            execute(c, "DELETE FROM inventory.counters WHERE id = ?", key);
          } else if (!deleted.isEmpty()) {
            long key = deleted.remove(random.nextInt(deleted.size()));
            live.add(key);
            execute(
                c,
                "INSERT INTO inventory.counters VALUES (?, ?, ?)",
                key,
                version.incrementAndGet(),
                "again");
          } else {
            continue;
          }
          changes++;
        }
        c.commit();
        Thread.sleep(5);
      }
    }
    return changes;
  }

  private static void execute(Connection c, String sql, Object... args) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      int rows = ps.executeUpdate();
      if (rows != 1) {
        throw new IllegalStateException(sql + " changed " + rows + " rows");
      }
    }
  }

  private static String differs(EmbeddedPostgres postgres, Catalog reader, TableIdentifier id)
      throws Exception {
    if (!reader.tableExists(id)) {
      return "no table yet";
    }
    Map<Long, Long> source = new HashMap<>();
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, version FROM inventory.counters")) {
      while (rs.next()) {
        source.put(rs.getLong(1), rs.getLong(2));
      }
    }
    Table t = reader.loadTable(id);
    Map<Long, Long> main = versions(t, t.snapshot(Branches.MAIN).snapshotId());
    return source.equals(main)
        ? null
        : "main has " + main.size() + " rows, the source " + source.size()
            + "; first difference at key " + firstDifference(source, main);
  }

  private static Long firstDifference(Map<Long, Long> a, Map<Long, Long> b) {
    Set<Long> keys = new HashSet<>(a.keySet());
    keys.addAll(b.keySet());
    return keys.stream()
        .filter(k -> !Objects.equals(a.get(k), b.get(k)))
        .min(Long::compare)
        .orElse(null);
  }

  /** id -> version of every row of {@code table} at {@code snapshotId}. */
  private static Map<Long, Long> versions(Table table, long snapshotId) {
    Map<Long, Long> rows = new HashMap<>();
    SnapshotRows.forEach(table, snapshotId, r -> {
      Long previous = rows.put((Long) r.getField("id"), (Long) r.getField("version"));
      if (previous != null) {
        throw new IllegalStateException(
            "key " + r.getField("id") + " twice in main snapshot " + snapshotId);
      }
    });
    return rows;
  }

  /**
   * Reads every main snapshot in order and checks that no row went back: a present key's version
   * never decreases, and a key that comes back after a delete has a version above any it had.
   */
  private static final class MainWatcher {
    final Catalog reader;
    final TableIdentifier id;
    final List<String> regressions = new CopyOnWriteArrayList<>();
    final Map<Long, Long> highest = new HashMap<>();
    Map<Long, Long> previous = Map.of();
    Long lastChecked;
    int checked;

    MainWatcher(Catalog reader, TableIdentifier id) {
      this.reader = reader;
      this.id = id;
    }

    void check() {
      if (!reader.tableExists(id)) {
        return;
      }
      Table t = reader.loadTable(id);
      List<Snapshot> fresh = new ArrayList<>();
      for (Snapshot s = t.snapshot(Branches.MAIN);
          s != null;
          s = s.parentId() == null ? null : t.snapshot(s.parentId())) {
        if (lastChecked != null && s.snapshotId() == lastChecked) {
          break;
        }
        fresh.add(0, s);
      }
      for (Snapshot s : fresh) {
        Map<Long, Long> rows = versions(t, s.snapshotId());
        for (Map.Entry<Long, Long> row : rows.entrySet()) {
          Long before = previous.get(row.getKey());
          Long max = highest.get(row.getKey());
          if (before != null && row.getValue() < before) {
            regressions.add("snapshot " + s.snapshotId() + ": key " + row.getKey()
                + " went from version " + before + " to " + row.getValue());
          } else if (before == null && max != null && row.getValue() <= max) {
            regressions.add("snapshot " + s.snapshotId() + ": deleted key " + row.getKey()
                + " came back with old version " + row.getValue());
          }
          highest.merge(row.getKey(), row.getValue(), Math::max);
        }
        previous = rows;
        lastChecked = s.snapshotId();
        checked++;
      }
    }
  }
}
