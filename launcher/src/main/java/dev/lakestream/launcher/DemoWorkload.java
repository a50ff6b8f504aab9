package dev.lakestream.launcher;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo's changes to {@code inventory.customers}: transactions of one to three changes (50%
 * updates, 30% inserts, 20% deletes) at a steady rate, over as many connections as the rate needs.
 * It keeps what the demo reports: changes made, the time of the last commit, and what the source
 * returned for each commit (to find its commit time later). With several writers two transactions
 * may deadlock; the database aborts one, which is rolled back and not counted (the source stays
 * the truth the pipeline is compared with).
 */
final class DemoWorkload {

  /** One connection keeps up with about 1,500 changes/s here; more take more connections. */
  private static final int CHANGES_PER_CONNECTION = 1_500;

  private final DemoSource source;
  private final PrintStream out;
  private final List<Long> ids = Collections.synchronizedList(new ArrayList<>());
  private final List<Long> commits = Collections.synchronizedList(new ArrayList<>());
  private final AtomicLong changes = new AtomicLong();
  private final AtomicLong nextId = new AtomicLong(1);
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> writers = new ArrayList<>();
  private volatile long lastCommitMs;

  DemoWorkload(DemoSource source, PrintStream out) {
    this.source = source;
    this.out = out;
  }

  /** Inserts {@code rows} rows in one transaction, before the pipeline starts. */
  void seed(int rows) throws SQLException {
    Random random = new Random();
    try (Connection c = source.connect()) {
      c.setAutoCommit(false);
      for (int i = 0; i < rows; i++) {
        insert(c, random);
      }
      c.commit();
    }
  }

  /** Starts the writers, {@code rate} changes/s in all. */
  void start(int rate) {
    int n = Math.max(1, (rate + CHANGES_PER_CONNECTION - 1) / CHANGES_PER_CONNECTION);
    for (int w = 0; w < n; w++) {
      int share = rate / n + (w < rate % n ? 1 : 0);
      long seed = w;
      Thread t = new Thread(() -> write(share, new Random(seed)), "demo-workload-" + w);
      t.start();
      writers.add(t);
    }
  }

  /** Stops the writers and waits for them. */
  void stop() throws InterruptedException {
    stop.set(true);
    for (Thread t : writers) {
      t.join(10_000);
    }
  }

  long changes() {
    return changes.get();
  }

  long lastCommitMs() {
    return lastCommitMs;
  }

  /** What {@link DemoSource#commit} returned for each transaction, in commit order per writer. */
  List<Long> commits() {
    synchronized (commits) {
      return new ArrayList<>(commits);
    }
  }

  private void write(int rate, Random random) {
    try (Connection c = source.connect()) {
      c.setAutoCommit(false);
      long started = System.nanoTime();
      long done = 0;
      while (!stop.get()) {
        int n = 1 + random.nextInt(3);
        try {
          for (int i = 0; i < n; i++) {
            change(c, random);
          }
          commits.add(source.commit(c));
        } catch (SQLException e) {
          c.rollback();
          continue;
        }
        lastCommitMs = System.currentTimeMillis();
        done += n;
        changes.addAndGet(n);
        long due = started + done * 1_000_000_000L / rate;
        long wait = due - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
      }
    } catch (Exception e) {
      out.println("demo | workload stopped: " + e.getMessage());
    }
  }

  private void change(Connection c, Random random) throws SQLException {
    int pick = random.nextInt(10);
    Long id = pick < 3 ? null : pickId(random, pick >= 8);
    if (id == null) {
      insert(c, random);
    } else if (pick < 8) {
      execute(
          c,
          "UPDATE inventory.customers SET balance = ?, active = ?, updated_at = " + source.now()
              + " WHERE id = ?",
          BigDecimal.valueOf(random.nextInt(10_000_000), 2),
          random.nextBoolean(),
          id);
    } else {
      execute(c, "DELETE FROM inventory.customers WHERE id = ?", id);
    }
  }

  /** A live id (removed from the list for a delete), or null when there is none. */
  private Long pickId(Random random, boolean remove) {
    synchronized (ids) {
      if (ids.isEmpty()) {
        return null;
      }
      int i = random.nextInt(ids.size());
      return remove ? ids.remove(i) : ids.get(i);
    }
  }

  private void insert(Connection c, Random random) throws SQLException {
    long id = nextId.getAndIncrement();
    ids.add(id);
    execute(
        c,
        "INSERT INTO inventory.customers VALUES (?, ?, ?, ?, " + source.now() + ")",
        id,
        "customer " + id,
        BigDecimal.valueOf(random.nextInt(10_000_000), 2),
        random.nextBoolean());
  }

  private static void execute(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      ps.executeUpdate();
    }
  }
}
