package dev.lakestream.launcher;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.app.StopSignals;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SnapshotRows;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.common.metrics.Hops;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.launcher.Freshness.Window;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.BufferedWriter;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code demo [--duration SECONDS] [--rate CHANGES_PER_SECOND] [--warehouse DIR] [--export-source FILE]
 * [--source postgresql|mariadb] [--set KEY=VALUE]...}: the whole
 * pipeline in one process on a machine with nothing but Java: PostgreSQL (the machine's, or the
 * binaries shipped in a jar), a Kafka broker, Kafka Connect with the Debezium Postgres connector
 * (registered with {@code connectors/postgres-inventory.json}), ingest and sync; with {@code
 * --source mariadb}, the machine's MariaDB server and Debezium's MySQL connector ({@code
 * connectors/mariadb-inventory.json}) instead (see {@link DemoSource}). It creates {@code
 * inventory.customers}, changes it at a steady rate with a progress line, and on Ctrl-C or after
 * the duration prints how main compares with the source. {@code --export-source} also writes the
 * source table's final rows as JSON lines, so another engine's read of the warehouse can be checked
 * against the source itself (the engine check does that with Spark). {@code --set} passes a setting
 * to both apps, as their config file would ({@code --set sync.resolver=index}).
 */
public final class DemoCommand {

  private static final TableIdentifier TABLE = TableIdentifier.of("inventory", "customers");

  private final PrintStream out;
  private final AtomicBoolean stop = new AtomicBoolean();
  private volatile Result result;
  private long warmUpMs;

  /**
   * What a run measured: changes made and their rate, rows on both sides, and freshness per source
   * change to visible on {@code realtime} and on {@code main} (milliseconds, sorted), the same on
   * main of the changes after the warm-up, main's freshness over the run in windows, and the p50,
   * p95 and p99 of each hop on the way (milliseconds, from the apps' own meters).
   */
  public record Result(
      long changes,
      double changesPerSecond,
      long sourceRows,
      long mainRows,
      List<Long> kafkaFreshnessMs,
      List<Long> realtimeFreshnessMs,
      List<Long> mainFreshnessMs,
      List<Long> kafkaAfterWarmUpMs,
      List<Long> mainAfterWarmUpMs,
      List<Window> mainOverTime,
      Map<Hop, double[]> hopsMs) {}

  private final Path exportSource;
  private final Map<String, String> settings;

  private final String sourceName;

  private DemoCommand(
      PrintStream out, Path exportSource, Map<String, String> settings, String sourceName) {
    this.out = out;
    this.exportSource = exportSource;
    this.settings = settings;
    this.sourceName = sourceName;
  }

  /** {@code demo}'s options; the demo itself runs in {@link DemoCommand}. */
  @Command(
      name = "demo",
      mixinStandardHelpOptions = true,
      description =
          "Everything in one process: PostgreSQL (or MariaDB), Kafka, Kafka Connect with Debezium, ingest, sync; a"
              + " workload, and what reached main how fast.")
  static final class Cli implements Callable<Integer> {
    private final PrintStream out;

    @Option(
        names = "--duration",
        paramLabel = "SECONDS",
        defaultValue = "0",
        description = "how long the workload runs (0: until Ctrl-C); a trailing s is allowed")
    String duration;

    @Option(
        names = "--rate",
        paramLabel = "CHANGES_PER_SECOND",
        defaultValue = "200",
        description = "the workload's rate")
    int rate;

    @Option(
        names = "--warehouse",
        paramLabel = "DIR",
        defaultValue = "warehouse",
        description = "where the tables go")
    Path warehouse;

    @Option(
        names = "--export-source",
        paramLabel = "FILE",
        description = "also write the source table's rows here")
    Path exportSource;

    @Option(
        names = "--source",
        paramLabel = "DATABASE",
        defaultValue = "postgresql",
        description = "postgresql (default) or mariadb (needs the machine's mariadb-server)")
    String source;

    @Option(
        names = "--set",
        paramLabel = "KEY=VALUE",
        description = "a setting of both apps (repeatable)")
    Map<String, String> settings = new LinkedHashMap<>();

    @Spec
    CommandSpec spec;

    Cli(PrintStream out) {
      this.out = out;
    }

    @Override
    public Integer call() throws Exception {
      long durationS;
      try {
        durationS = Long.parseLong(duration.trim().replaceAll("s$", ""));
      } catch (NumberFormatException e) {
        throw new ParameterException(
            spec.commandLine(), "--duration wants seconds, not " + duration);
      }
      if (durationS < 0 || rate <= 0) {
        throw new ParameterException(
            spec.commandLine(), "--duration must not be negative and --rate must be positive");
      }
      if (!List.of("postgresql", "postgres", "mariadb").contains(source.toLowerCase(Locale.ROOT))) {
        throw new ParameterException(
            spec.commandLine(), "--source wants postgresql or mariadb, not " + source);
      }
      return new DemoCommand(out, exportSource, settings, source)
          .run(durationS, rate, warehouse.toAbsolutePath());
    }
  }

  /**
   * Runs the demo at {@code rate} changes/s for {@code warmUpS} and then {@code durationS} more, with
   * {@code settings} for both apps (as {@code --set}), and returns what it measured; {@link
   * Result#mainAfterWarmUpMs} holds the changes after the warm-up.
   */
  public static Result measure(
      long warmUpS,
      long durationS,
      int rate,
      Map<String, String> settings,
      Path warehouse,
      PrintStream out)
      throws Exception {
    DemoCommand demo = new DemoCommand(out, null, settings, "postgresql");
    demo.warmUpMs = warmUpS * 1000;
    demo.demo(warmUpS + durationS, rate, warehouse.toAbsolutePath());
    return demo.result;
  }

  private int run(long durationS, int rate, Path warehouse) throws Exception {
    CountDownLatch signal = StopSignals.install();
    Thread watcher = new Thread(
        () -> {
          try {
            signal.await();
            say("stopping (Ctrl-C)");
            stop.set(true);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        },
        "demo-stop");
    watcher.setDaemon(true);
    watcher.start();
    return demo(durationS, rate, warehouse);
  }

  private int demo(long durationS, int rate, Path warehouse) throws Exception {
    say("starting " + sourceName
        + ", a Kafka broker, Kafka Connect with Debezium, ingest and sync; warehouse " + warehouse);
    try (LocalStack stack = LocalStack.prepare(sourceName, warehouse, settings)) {
      DemoSource source = stack.source();
      DemoWorkload workload = new DemoWorkload(source, out);
      workload.seed(1000);
      stack.capture();
      Catalog catalog = stack.catalog();
      say(source.name() + " :" + source.port() + ", Kafka " + stack.kafka().bootstrapServers()
          + ", Connect " + stack.connect().restUrl() + ", metrics :"
          + stack.ingest().metricsPort()
          + " (ingest) :" + stack.sync().metricsPort() + " (sync)");
      say("changing inventory.customers at " + rate + " changes/s"
          + (durationS > 0 ? " for " + durationS + " s" : "") + "; Ctrl-C stops");
      long started = System.currentTimeMillis();
      workload.start(rate);
      long end = durationS > 0 ? System.currentTimeMillis() + durationS * 1000 : Long.MAX_VALUE;
      long lastChanges = 0;
      long lastAt = System.currentTimeMillis();
      while (!stop.get() && System.currentTimeMillis() < end) {
        Thread.sleep(2_000);
        long now = System.currentTimeMillis();
        long c = workload.changes();
        progress(catalog, workload, (c - lastChanges) * 1000.0 / Math.max(1, now - lastAt));
        lastChanges = c;
        lastAt = now;
      }
      stop.set(true);
      workload.stop();
      double changesPerSecond =
          workload.changes() * 1000.0 / Math.max(1, System.currentTimeMillis() - started);
      say(String.format(
          "stopped the workload after %d changes (%.0f changes/s); waiting for main to catch up",
          workload.changes(), changesPerSecond));
      long deadline = System.currentTimeMillis() + CATCH_UP_MS;
      while (System.currentTimeMillis() < deadline && !mainEqualsSource(catalog, source)) {
        Thread.sleep(1_000);
      }
      Map<Hop, double[]> hops =
          Hops.percentilesMs(stack.ingest().meters(), stack.sync().meters());
      summary(
          source,
          workload,
          stack.kafka(),
          catalog,
          warehouse,
          changesPerSecond,
          hops,
          stack.sync().meters());
      if (exportSource != null) {
        say("source rows (" + source.name() + "'s SELECT *) written to " + exportSource + ": "
            + exportSource(source, exportSource));
      }
    }
    say("stopped cleanly");
    return 0;
  }

  private void progress(Catalog catalog, DemoWorkload workload, double changesPerSecond) {
    if (!catalog.tableExists(TABLE)) {
      say(String.format(
          "%6.0f changes/s | waiting for the first change to reach the table", changesPerSecond));
      return;
    }
    Table table = catalog.loadTable(TABLE);
    Snapshot realtime = table.snapshot(Branches.REALTIME);
    Snapshot main = table.snapshot(Branches.MAIN);
    long pendingDeletes = 0;
    long watermark = BranchFiles.watermark(table).orElse(-1L);
    if (realtime != null) {
      for (Snapshot s : SnapshotUtil.ancestorsOf(realtime.snapshotId(), table::snapshot)) {
        if (s.snapshotId() == watermark) {
          break;
        }
        pendingDeletes +=
            Long.parseLong(s.summary().getOrDefault("added-equality-delete-files", "0"));
      }
    }
    say(String.format(
        "%6.0f changes/s | realtime lag %s | main lag %s | equality-delete files pending on main %d",
        changesPerSecond,
        lag(table, realtime, workload),
        lag(table, main, workload),
        pendingDeletes));
  }

  private static String lag(Table table, Snapshot snapshot, DemoWorkload workload) {
    long sourceTsMs = newestSourceTsMs(table, snapshot);
    if (sourceTsMs <= 0) {
      return "  -  ";
    }
    return String.format("%5.1f s", Math.max(0, workload.lastCommitMs() - sourceTsMs) / 1000.0);
  }

  /**
   * The newest source commit time a branch holds: that of its newest snapshot that records one. A
   * compaction, its mirror on main and a cycle of snapshot reads only record none (or -1, or 0);
   * -1 when the last few snapshots record none.
   */
  private static long newestSourceTsMs(Table table, Snapshot head) {
    if (head == null) {
      return -1;
    }
    int looked = 0;
    for (Snapshot s : SnapshotUtil.ancestorsOf(head.snapshotId(), table::snapshot)) {
      String text = s.summary().get(SummaryKeys.MAX_SOURCE_TS_MS);
      long ts = text == null ? -1 : Long.parseLong(text);
      if (ts > 0) {
        return ts;
      }
      if (++looked == 20) {
        break;
      }
    }
    return -1;
  }

  /**
   * Whether main holds the source's rows: the same keys, each once, with the same balance. Every
   * change of the workload inserts, deletes or sets a new random balance, so this tells a main that
   * caught up from one passing through a count the source had (a transaction's changes of keys in
   * different partitions reach main in different cycles).
   */
  private static boolean mainEqualsSource(Catalog catalog, DemoSource source) throws Exception {
    if (!catalog.tableExists(TABLE)) {
      return false;
    }
    Table table = catalog.loadTable(TABLE);
    Snapshot main = table.snapshot(Branches.MAIN);
    if (main == null) {
      return false;
    }
    Map<Long, String> onMain = new HashMap<>();
    boolean[] twice = {false};
    SnapshotRows.forEach(
        table,
        main.snapshotId(),
        row -> twice[0] |=
            onMain.put(((Number) row.getField("id")).longValue(), balance(row.getField("balance")))
                != null);
    if (twice[0]) {
      return false;
    }
    Map<Long, String> inSource = new HashMap<>();
    try (Connection c = source.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, balance FROM inventory.customers")) {
      while (rs.next()) {
        inSource.put(rs.getLong(1), balance(rs.getBigDecimal(2)));
      }
    }
    return onMain.equals(inSource);
  }

  /** A balance as text, whatever its scale ({@code 1.50} and {@code 1.5} alike); null as null. */
  private static String balance(Object value) {
    return value instanceof BigDecimal d ? d.stripTrailingZeros().toPlainString() : null;
  }

  private static long count(DemoSource source) throws Exception {
    try (Connection c = source.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM inventory.customers")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The sum of the counters named {@code name} (0 when there is none). */
  private static double total(MeterRegistry meters, String name) {
    return meters.find(name).counters().stream().mapToDouble(c -> c.count()).sum()
        + meters.find(name).functionCounters().stream()
            .mapToDouble(c -> c.count())
            .sum();
  }

  /** How long the demo waits, after its workload stops, for main to hold the source's rows. */
  private static final long CATCH_UP_MS = 60_000;

  private void summary(
      DemoSource source,
      DemoWorkload workload,
      EmbeddedKafka kafka,
      Catalog catalog,
      Path warehouse,
      double changesPerSecond,
      Map<Hop, double[]> hops,
      MeterRegistry syncMeters)
      throws Exception {
    Table table = catalog.loadTable(TABLE);
    long equalityDeletes = 0;
    for (DeleteFile f : BranchFiles.liveDeleteFiles(table, table.snapshot(Branches.REALTIME))) {
      if (f.content() == FileContent.EQUALITY_DELETES) {
        equalityDeletes++;
      }
    }
    int dvs = BranchFiles.deletionVectors(table, table.snapshot(Branches.MAIN)).size();
    long[] mainRows = {0};
    SnapshotRows.forEach(table, table.snapshot(Branches.MAIN).snapshotId(), row -> mainRows[0]++);
    ChangeFreshness.Measured measured = freshness(source, kafka, table);
    List<List<Long>> freshness = List.of(measured.kafka(), measured.realtime(), measured.main());
    long sourceRows = count(source);
    boolean caughtUp = mainEqualsSource(catalog, source);
    say("rows in " + source.name() + ": " + sourceRows + " | rows in main: " + mainRows[0]
        + (caughtUp
            ? " (the same keys and balances)"
            : " (main was still catching up " + CATCH_UP_MS / 1000
                + " s after the workload stopped: see its lag above; it goes on until the apps"
                + " stop, and `verify` reads the table as they left it)"));
    say("equality-delete files on realtime: " + equalityDeletes + " | deletion vectors on main: "
        + dvs + " (and no equality delete)");
    String[] where = {"in Kafka (the source connector's part)", "on realtime", "on main"};
    for (int b = 0; b < where.length; b++) {
      List<Long> f = freshness.get(b);
      if (!f.isEmpty()) {
        say(String.format(
            "freshness, source commit -> %s (%d changes): p50 %.1f s, p95 %.1f s, p99 %.1f s",
            where[b],
            f.size(),
            Freshness.percentile(f, 50) / 1000.0,
            Freshness.percentile(f, 95) / 1000.0,
            Freshness.percentile(f, 99) / 1000.0));
      }
    }
    if (!measured.mainOverTime().isEmpty()) {
      say(String.format(
          "freshness on main over the run, by source commit time (windows of %d s): from  changes"
              + "  p50 / p99 / max s",
          ChangeFreshness.WINDOW_MS / 1000));
      for (Window w : measured.mainOverTime()) {
        say(String.format(
            "  %4d s  %,7d  %5.1f / %5.1f / %5.1f",
            w.fromMs() / 1000,
            w.changes(),
            w.p50Ms() / 1000.0,
            w.p99Ms() / 1000.0,
            w.maxMs() / 1000.0));
      }
    }
    say(String.format(
        "conversion: %,.0f data files read for their keys; current deletion vectors %,.0f merged"
            + " from memory, %,.0f read",
        total(syncMeters, "lakestream.sync.convert.files.scanned"),
        total(syncMeters, "lakestream.sync.convert.vectors.reused"),
        total(syncMeters, "lakestream.sync.convert.vectors.read")));
    say("where the time goes, hop by hop (p50 / p95 / p99, the apps' meters " + Hops.METER + "):");
    hops.forEach((hop, ms) -> say(String.format(
        "  %-20s %7.0f / %7.0f / %7.0f ms  %s",
        hop.tag(), ms[0], ms[1], ms[2], hop.description())));
    result = new Result(
        workload.changes(),
        changesPerSecond,
        sourceRows,
        mainRows[0],
        freshness.get(0),
        freshness.get(1),
        freshness.get(2),
        measured.kafkaAfterWarmUp(),
        measured.mainAfterWarmUp(),
        measured.mainOverTime(),
        hops);
    say("warehouse: " + warehouse + " (JDBC catalog on SQLite: " + warehouse.resolve("catalog.db")
        + ")");
    say("check it:  java -jar launcher/target/lakestream.jar verify --table inventory.customers"
        + "  (with LAKESTREAM_ICEBERG_CATALOG_WAREHOUSE=" + warehouse + ")");
    say(
        "query it with Spark:  spark-sql --packages org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"
            + " --conf spark.sql.catalog.lakestream=org.apache.iceberg.spark.SparkCatalog"
            + " --conf spark.sql.catalog.lakestream.catalog-impl=org.apache.iceberg.jdbc.JdbcCatalog"
            + " --conf spark.sql.catalog.lakestream.uri=jdbc:sqlite:"
            + warehouse.resolve("catalog.db")
            + " --conf spark.sql.catalog.lakestream.warehouse=" + warehouse
            + " --conf spark.sql.catalog.lakestream.jdbc.schema-version=V1"
            + " -e \"SELECT active, count(*), sum(balance) FROM lakestream.inventory.customers GROUP BY active\"");
  }

  /**
   * The source table's final rows as JSON lines, to compare any engine's read of the warehouse with
   * the source itself: {@code balance} as its exact decimal text, {@code updated_at} as microseconds
   * since the epoch.
   */
  private static long exportSource(DemoSource source, Path file) throws Exception {
    ObjectMapper json = new ObjectMapper();
    long rows = 0;
    try (Connection c = source.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(source.exportQuery());
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

  /**
   * Freshness per change to visible on realtime and on main: each change in the source topic to the
   * first snapshot of the branch that holds its offset ({@link ChangeFreshness}).
   */
  private ChangeFreshness.Measured freshness(DemoSource source, EmbeddedKafka kafka, Table table)
      throws Exception {
    String topic;
    try (Admin admin = kafka.admin()) {
      topic = admin.listTopics().names().get().stream()
          .filter(t -> t.matches("[^.]+\\.inventory\\.customers"))
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no topic of inventory.customers"));
    }
    if (source.freshnessNote() != null) {
      say(source.freshnessNote());
    }
    return ChangeFreshness.measure(kafka.bootstrapServers(), topic, table, warmUpMs);
  }

  private void say(String line) {
    out.println("demo | " + line);
  }
}
