package dev.lakestream.benchmarks;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SnapshotRows;
import dev.lakestream.common.metrics.Hops;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.launcher.LocalStack;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Benchmark 7, one large source transaction: the embedded full stack (PostgreSQL, Kafka, Connect
 * with Debezium and the shipped connector settings, ingest and sync, as the demo runs them) takes
 * one transaction of N inserts, then one of N updates. For each: the time from its commit until
 * all its changes are in Kafka (Debezium's part), until they are all committed on {@code realtime},
 * and until they are all on {@code main}, by the source offsets the branches record. With {@code
 * -Dbench.rounds=N} the pair runs N times on the same stack, each round on new keys: the first
 * round meets a JVM that has just started (its code not yet compiled), the later ones one that has
 * run a round, as a pipeline that has been running for a while is.
 */
public final class BigTransactionBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx8g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.BigTransactionBenchmark"
      + " [-Dbench.rounds=N] [-Dexec.args=ROWS]";

  private static final String TOPIC = "dbserver1.inventory.customers";
  private static final TableIdentifier TABLE = TableIdentifier.of("inventory", "customers");
  private static final long GIVE_UP_MS = 20 * 60_000;

  private BigTransactionBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
    Report report = new Report(
        "7. One large source transaction through the full stack",
        COMMAND,
        "transaction",
        "changes",
        "all in Kafka (s)",
        "all on realtime (s)",
        "all on main (s)",
        "main / Kafka",
        "JIT compilers' CPU (s)",
        "rows PostgreSQL / main");
    Path warehouse = Files.createTempDirectory("big-transaction-");
    try (LocalStack stack = LocalStack.prepare("postgresql", warehouse, Map.of())) {
      stack.capture();
      run(
          stack,
          "warm-up",
          1,
          "INSERT INTO inventory.customers VALUES (0, 'warm-up', 0, true, now())");
      int rounds = Integer.getInteger("bench.rounds", 1);
      for (int round = 1; round <= rounds; round++) {
        long first = (long) (round - 1) * rows + 1;
        long last = (long) round * rows;
        String label = rounds > 1 ? ", round " + round : "";
        String[][] transactions = {
          {
            "insert " + rows + " rows" + label,
            "INSERT INTO inventory.customers SELECT g, 'customer ' || g, g % 10000, g % 2 = 0, now()"
                + " FROM generate_series(" + first + ", " + last + ") g"
          },
          {
            "update " + rows + " rows" + label,
            "UPDATE inventory.customers SET balance = balance + 1, updated_at = now()"
                + " WHERE id BETWEEN " + first + " AND " + last
          }
        };
        for (String[] t : transactions) {
          long[] ms = run(stack, t[0], rows, t[1]);
          report.row(
              t[0],
              String.format("%,d", rows),
              String.format("%.1f", ms[0] / 1000.0),
              String.format("%.1f", ms[1] / 1000.0),
              String.format("%.1f", ms[2] / 1000.0),
              String.format("%.2f", (double) ms[2] / Math.max(1, ms[0])),
              ms[3] < 0 ? "-" : String.format("%.1f", ms[3] / 1000.0),
              String.format("%,d / %,d", sourceRows(stack), mainRows(stack)));
        }
      }
      StringBuilder hops = new StringBuilder(
          "Hops over all the transactions (lakestream.hop.latency, p50 / p95 / p99 ms):");
      for (Map.Entry<Hop, double[]> e :
          Hops.percentilesMs(stack.ingest().meters(), stack.sync().meters()).entrySet()) {
        double[] v = e.getValue();
        hops.append(
            String.format(" %s %,.0f / %,.0f / %,.0f;", e.getKey().tag(), v[0], v[1], v[2]));
      }
      report.note("Times run from PostgreSQL's commit timestamp of the transaction to the moment"
          + " (polled every 100 ms) the topic's end offsets hold all its changes, the realtime branch's"
          + " recorded source offsets reach them, and main's mirrored realtime snapshot does. Broker,"
          + " Connect, both apps and PostgreSQL share the machine; the demo's settings (ingest flushes every"
          + " 500 ms, 2 stream threads per app, 3 topic partitions).");
      report.note("Each round runs the pair on new keys, on the same stack: round 1 right after it"
          + " started (one row through it first), later rounds after it has run the rounds before."
          + " The JIT compilers' CPU is that of HotSpot's compiler threads (from /proc), from the"
          + " transaction's start until it is on main; a compiler thread that ended meanwhile is"
          + " left out, so it is a lower bound.");
      report.note(hops.toString());
    }
    report.publish();
    System.exit(0);
  }

  /**
   * Runs one transaction; returns ms from its commit until all in Kafka, on realtime, on main, and
   * the CPU the JIT compilers used from just before it until it is on main (-1 where unknown).
   */
  private static long[] run(LocalStack stack, String name, int changes, String sql)
      throws Exception {
    EmbeddedKafka kafka = stack.kafka();
    Map<Integer, Long> before = EndOffsets.of(kafka, TOPIC);
    long beforeTotal = before.values().stream().mapToLong(Long::longValue).sum();
    CompilerCpu compilingBefore = CompilerCpu.now();
    long txid;
    try (Connection c = stack.connectToSource()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute(sql);
      }
      txid = stack.commit(c);
    }
    long committedAt = stack.commitTimesMs(List.of(txid)).get(0);
    System.out.printf("%s: committed; waiting for its %,d changes%n", name, changes);
    long inKafka = 0;
    long onRealtime = 0;
    long onMain = 0;
    Map<Integer, Long> ends = null;
    long lastLog = System.currentTimeMillis();
    while (onMain == 0) {
      if (System.currentTimeMillis() - committedAt > GIVE_UP_MS) {
        throw new IllegalStateException(name + ": not on main after " + GIVE_UP_MS + " ms");
      }
      Thread.sleep(100);
      long now = System.currentTimeMillis();
      if (ends == null) {
        Map<Integer, Long> current = EndOffsets.of(kafka, TOPIC);
        if (current.values().stream().mapToLong(Long::longValue).sum() >= beforeTotal + changes) {
          ends = current;
          inKafka = now;
        }
        continue;
      }
      if (!stack.catalog().tableExists(TABLE)) {
        continue;
      }
      Table table = stack.catalog().loadTable(TABLE);
      if (onRealtime == 0 && covers(SourceOffsets.of(table, Branches.REALTIME), ends)) {
        onRealtime = now;
      }
      Optional<Long> watermark = BranchFiles.watermark(table);
      if (watermark.isPresent()
          && covers(SourceOffsets.at(table, table.snapshot(watermark.get())), ends)) {
        onMain = now;
      }
      if (now - lastLog > 5_000) {
        lastLog = now;
        System.out.printf(
            "%s: %.0f s, in Kafka %s, on realtime %s%n",
            name,
            (now - committedAt) / 1000.0,
            inKafka > 0 ? "yes" : "no",
            onRealtime > 0 ? "yes" : "no");
      }
    }
    if (onRealtime == 0) {
      onRealtime = onMain;
    }
    long[] ms = {
      inKafka - committedAt,
      onRealtime - committedAt,
      onMain - committedAt,
      CompilerCpu.now().millisSince(compilingBefore)
    };
    System.out.printf(
        "%s: %,d changes in Kafka after %.1f s, on realtime after %.1f s, on main after %.1f s%n",
        name, changes, ms[0] / 1000.0, ms[1] / 1000.0, ms[2] / 1000.0);
    return ms;
  }

  /** Whether the offsets reach the last record below each partition's end offset. */
  private static boolean covers(SourceOffsets offsets, Map<Integer, Long> ends) {
    for (Map.Entry<Integer, Long> e : ends.entrySet()) {
      if (offsets.last(TOPIC, e.getKey()) < e.getValue() - 1) {
        return false;
      }
    }
    return true;
  }

  private static long sourceRows(LocalStack stack) throws Exception {
    try (Connection c = stack.connectToSource();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM inventory.customers")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long mainRows(LocalStack stack) {
    Table table = stack.catalog().loadTable(TABLE);
    long[] n = {0};
    SnapshotRows.forEach(table, table.snapshot(Branches.MAIN).snapshotId(), row -> n[0]++);
    return n[0];
  }
}
