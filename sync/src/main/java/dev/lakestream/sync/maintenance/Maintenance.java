package dev.lakestream.sync.maintenance;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.ChangeLogTables;
import dev.lakestream.common.iceberg.TableManager;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the maintenance of the tables a sync instance coordinates: realtime compaction by its
 * policy, snapshot expiry on both branches, and (less often) orphan-file removal. The cycle
 * coordinator asks for a check of each of its tables on its timer; the work runs on this object's
 * own threads ({@link MaintenanceConfig#threads()}), never on a stream thread, so sync cycles and
 * ingest go on while it runs. Each table has at most one run in flight; runs of different tables
 * wait for a free thread, and the time they wait is measured ({@code lakestream.maintenance.wait}),
 * so that a long compaction of one table holding up the others shows. Another instance taking the
 * table over after a rebalance may overlap a run still going here: Iceberg's commit validation lets
 * only one compaction of the same files commit, and the other's files are deleted.
 */
public final class Maintenance implements AutoCloseable {

  /** Runs of a table that fail in a row before it is reported on {@code /health}. */
  static final int FAILED_RUNS_REPORTED = 3;

  private static final Logger LOG = LoggerFactory.getLogger(Maintenance.class);

  /** What a run did; a part that did not run is empty. */
  public record Report(
      String table,
      Optional<RealtimeCompaction.Result> compaction,
      Optional<SnapshotExpiry.Result> expiry,
      Optional<OrphanFiles.Result> orphans) {}

  private final MaintenanceConfig config;
  private final Catalog catalog;
  private final Executor executor;
  private final ExecutorService ownThread;
  private final Set<String> running = ConcurrentHashMap.newKeySet();
  private final Map<String, Long> lastCheck = new ConcurrentHashMap<>();
  private final Map<String, Long> lastOrphans = new ConcurrentHashMap<>();
  private final Counter compactions;
  private final Counter compactionFailures;
  private final Counter filesIn;
  private final Counter filesOut;
  private final Counter bytesIn;
  private final Counter bytesOut;
  private final Counter deletesDropped;
  private final Counter snapshotsExpired;
  private final Counter orphansRemoved;
  private final Counter orphanBytesRemoved;
  private final Counter failures;
  private final Health health;
  /** Per table, the runs that failed since its last run that did not. */
  private final Map<String, Integer> failedRuns = new ConcurrentHashMap<>();

  private final Counter runs;
  private final Timer compactionTime;
  private final Timer expiryTime;
  private final Timer orphanTime;
  private final Timer waitTime;

  /**
   * @param executor runs the checks; {@code null} for {@link MaintenanceConfig#threads()}
   *     background threads of this object's own (tests pass {@code Runnable::run} to run them on
   *     the caller's thread)
   */
  public Maintenance(
      MaintenanceConfig config, Catalog catalog, MeterRegistry meters, Executor executor) {
    this(config, catalog, meters, executor, new Health());
  }

  /**
   * As {@link #Maintenance(MaintenanceConfig, Catalog, MeterRegistry, Executor)}; a table whose runs
   * fail {@value #FAILED_RUNS_REPORTED} times in a row is reported on {@code health} until one
   * succeeds.
   */
  public Maintenance(
      MaintenanceConfig config,
      Catalog catalog,
      MeterRegistry meters,
      Executor executor,
      Health health) {
    this.config = config;
    this.health = health;
    this.catalog = catalog;
    AtomicInteger threadNumber = new AtomicInteger();
    this.ownThread = executor != null
        ? null
        : Executors.newFixedThreadPool(config.threads(), r -> {
          int n = threadNumber.getAndIncrement();
          Thread t =
              new Thread(r, n == 0 ? "lakestream-maintenance" : "lakestream-maintenance-" + n);
          t.setDaemon(true);
          return t;
        });
    this.executor = executor != null ? executor : ownThread;
    this.compactions = meters.counter("lakestream.maintenance.compactions");
    this.compactionFailures = meters.counter("lakestream.maintenance.compaction.conflicts");
    this.filesIn = meters.counter("lakestream.maintenance.compaction.files.in");
    this.filesOut = meters.counter("lakestream.maintenance.compaction.files.out");
    this.bytesIn = meters.counter("lakestream.maintenance.compaction.bytes.in");
    this.bytesOut = meters.counter("lakestream.maintenance.compaction.bytes.out");
    this.deletesDropped = meters.counter("lakestream.maintenance.compaction.deletes.dropped");
    this.snapshotsExpired = meters.counter("lakestream.maintenance.snapshots.expired");
    this.orphansRemoved = meters.counter("lakestream.maintenance.orphans.removed");
    this.orphanBytesRemoved = meters.counter("lakestream.maintenance.orphans.bytes.removed");
    this.failures = meters.counter("lakestream.maintenance.failures");
    this.runs = meters.counter("lakestream.maintenance.runs");
    this.compactionTime =
        meters.timer("lakestream.maintenance.duration", "operation", "compaction");
    this.expiryTime = meters.timer("lakestream.maintenance.duration", "operation", "expiry");
    this.orphanTime = meters.timer("lakestream.maintenance.duration", "operation", "orphans");
    this.waitTime = meters.timer("lakestream.maintenance.wait");
  }

  public MaintenanceConfig config() {
    return config;
  }

  /** Schedules a run for {@code table} when maintenance is on, the check interval has passed and none is running. */
  public void check(String table, long nowMs) {
    if (!config.enabled()) {
      return;
    }
    Long last = lastCheck.get(table);
    if (last != null && nowMs - last < config.checkIntervalMs()) {
      return;
    }
    if (!running.add(table)) {
      return;
    }
    lastCheck.put(table, nowMs);
    long scheduled = System.nanoTime();
    try {
      executor.execute(() -> {
        try {
          long waitedMs = (System.nanoTime() - scheduled) / 1_000_000;
          waitTime.record(Duration.ofMillis(waitedMs));
          if (waitedMs > config.checkIntervalMs()) {
            LOG.info(
                "Maintenance of {} waited {} ms for one of its {} threads ({}): other tables' runs"
                    + " held them longer than the check interval",
                table,
                waitedMs,
                config.threads(),
                MaintenanceConfig.THREADS);
          }
          run(TableIdentifier.parse(table), nowMs + waitedMs);
          if (failedRuns.remove(table) != null) {
            health.clear(healthSubject(table));
          }
        } catch (RuntimeException e) {
          failures.increment();
          LOG.warn("Maintenance of {} failed; it is tried again at the next check", table, e);
          // A table dropped meanwhile is no trouble of maintenance's: sync forgets it.
          int failed = e instanceof NoSuchTableException && !exists(table)
              ? 0
              : failedRuns.merge(table, 1, Integer::sum);
          if (failed == 0 && failedRuns.remove(table) != null) {
            health.clear(healthSubject(table));
          }
          if (failed >= FAILED_RUNS_REPORTED) {
            health.problem(
                healthSubject(table),
                "its last " + failed + " maintenance runs failed, the last with " + e
                    + " (lakestream_maintenance_failures_total; the log has each): while"
                    + " compaction fails realtime's small files pile up, and while expiry does its"
                    + " snapshots and metadata grow");
          }
        } finally {
          running.remove(table);
          runs.increment(); // after: a run counted is one whose table may run again
        }
      });
    } catch (RuntimeException e) {
      running.remove(table);
      throw e;
    }
  }

  /**
   * One run, on the calling thread: compaction if the policy selects files, expiry, orphans when
   * due. A table lakestream does not manage (one made under the name of a table sync knew, while
   * its cycle was in flight) is left alone: its history and files are not the pipeline's to expire
   * or remove.
   */
  public Report run(TableIdentifier id, long nowMs) {
    String name = id.toString();
    Table table = catalog.loadTable(id);
    if (!TableManager.isManaged(table)) {
      LOG.warn("Maintenance of {} skipped: the table is not managed by lakestream", name);
      return new Report(name, Optional.empty(), Optional.empty(), Optional.empty());
    }
    // Each step goes on when one before it fails, so a compaction that keeps failing (one that
    // loses every commit race, a file it cannot read) does not stop snapshots from expiring; the
    // run then fails with the first error, the later ones attached to it.
    Steps steps = new Steps(name);
    Optional<RealtimeCompaction.Result> compacted =
        steps.run("compaction", () -> compact(table, nowMs)).flatMap(c -> c);
    Optional<SnapshotExpiry.Result> expired = steps.run("expiry", () -> expire(table, nowMs));
    Optional<OrphanFiles.Result> orphans = Optional.empty();
    Long last = lastOrphans.get(name);
    if (last == null || nowMs - last >= config.orphanIntervalMs()) {
      lastOrphans.put(name, nowMs);
      orphans = steps
          .run("orphan removal", () -> {
            SpillFiles.removeOlderThan(table, nowMs - config.maxStallMs());
            return config.orphansEnabled()
                ? Optional.of(removeOrphans(table, nowMs - config.orphanMinAgeMs()))
                : Optional.<OrphanFiles.Result>empty();
          })
          .flatMap(o -> o);
    }
    steps.run("change-log maintenance", () -> {
      maintainChangeLog(id, nowMs);
      return true;
    });
    steps.failIfAny();
    return new Report(name, compacted, expired, orphans);
  }

  /** The steps of one run: each runs whether one before it failed; the first error is kept. */
  private static final class Steps {
    private final String table;
    private RuntimeException failed;

    Steps(String table) {
      this.table = table;
    }

    <T> Optional<T> run(String step, Supplier<T> work) {
      try {
        return Optional.of(work.get());
      } catch (RuntimeException e) {
        LOG.warn("Maintenance of {}: its {} failed; the rest of the run goes on", table, step, e);
        if (failed == null) {
          failed = e;
        } else {
          failed.addSuppressed(e);
        }
        return Optional.empty();
      }
    }

    void failIfAny() {
      if (failed != null) {
        throw failed;
      }
    }
  }

  /**
   * Forgets what the maintenance of {@code table} knows of its failures, and its report on {@code
   * /health}: sync no longer coordinates the table here (dropped, refused, or its task moved to
   * another instance). A run of it still going reports nothing unless the table is checked again.
   */
  public void forget(String table) {
    failedRuns.remove(table);
    health.clear(healthSubject(table));
  }

  private boolean exists(String table) {
    try {
      return catalog.tableExists(TableIdentifier.parse(table));
    } catch (RuntimeException e) {
      return true; // not known to be gone
    }
  }

  private static String healthSubject(String table) {
    return "maintenance of " + table;
  }

  /**
   * The bronze change log of the table, when ingest keeps one: append-only on main, one snapshot
   * per ingest commit round. Its small files are compacted by the same policy, and its snapshots
   * expire by realtime's retention (the newest carrying ingest's offsets is always kept).
   */
  private void maintainChangeLog(TableIdentifier table, long nowMs) {
    TableIdentifier id = ChangeLogTables.of(table);
    if (!catalog.tableExists(id)) {
      return;
    }
    Table log = catalog.loadTable(id);
    if (!ChangeLogTables.isLogOf(log, table)) {
      // A table of its own with that name (a source table called so): maintained as itself.
      return;
    }
    RuntimeException failed = null;
    try {
      compact(log, SnapshotRef.MAIN_BRANCH, nowMs);
    } catch (RuntimeException e) {
      LOG.warn("Compaction of change log {} failed; its expiry goes on", id, e);
      failed = e;
    }
    expire(log, config.realtimeRetention(), config.realtimeRetention(), nowMs);
    if (failed != null) {
      throw failed;
    }
  }

  /** Compacts realtime by the policy, when it selects files. */
  public Optional<RealtimeCompaction.Result> compact(Table table, long nowMs) {
    return compact(table, Branches.REALTIME, nowMs);
  }

  private Optional<RealtimeCompaction.Result> compact(Table table, String branch, long nowMs) {
    Optional<RealtimeCompaction> prepared =
        RealtimeCompaction.prepare(table, branch, config.compaction(), nowMs);
    if (prepared.isEmpty()) {
      return Optional.empty();
    }
    RealtimeCompaction.Result result;
    try {
      result = prepared.get().commit();
    } catch (ValidationException e) {
      compactionFailures.increment();
      LOG.warn(
          "Compaction of {} {} did not commit (its files changed meanwhile): {}",
          table.name(),
          branch,
          e.getMessage());
      return Optional.empty();
    }
    compactions.increment();
    filesIn.increment(result.dataFilesIn());
    filesOut.increment(result.dataFilesOut());
    bytesIn.increment(result.bytesIn());
    bytesOut.increment(result.bytesOut());
    deletesDropped.increment(result.equalityDeletesDropped());
    compactionTime.record(Duration.ofMillis(result.durationMs()));
    LOG.info(
        "Compacted {} {} ({}): {} data files ({} bytes) into {} ({} bytes, {} rows), {} equality-delete files "
            + "dropped, snapshot {}, {} ms",
        table.name(),
        branch,
        result.reason(),
        result.dataFilesIn(),
        result.bytesIn(),
        result.dataFilesOut(),
        result.bytesOut(),
        result.rows(),
        result.equalityDeletesDropped(),
        result.snapshotId(),
        result.durationMs());
    return Optional.of(result);
  }

  public SnapshotExpiry.Result expire(Table table, long nowMs) {
    return expire(table, config.realtimeRetention(), config.mainRetention(), nowMs);
  }

  private SnapshotExpiry.Result expire(
      Table table, RetentionPolicy realtime, RetentionPolicy main, long nowMs) {
    SnapshotExpiry.Result result = SnapshotExpiry.run(table, realtime, main, nowMs);
    snapshotsExpired.increment(result.total());
    expiryTime.record(Duration.ofMillis(result.durationMs()));
    if (result.total() > 0) {
      LOG.info(
          "Expired {} snapshots of {} ({} realtime, {} main, {} unreferenced) in {} ms",
          result.total(),
          table.name(),
          result.realtimeExpired(),
          result.mainExpired(),
          result.otherExpired(),
          result.durationMs());
    }
    return result;
  }

  public OrphanFiles.Result removeOrphans(Table table, long olderThanMs) {
    OrphanFiles.Result result = OrphanFiles.remove(table, olderThanMs);
    orphansRemoved.increment(result.removed());
    orphanBytesRemoved.increment(result.bytesRemoved());
    orphanTime.record(Duration.ofMillis(result.durationMs()));
    LOG.info(
        "Orphan files of {}: {} listed, {} referenced, {} removed ({} bytes) in {} ms",
        table.name(),
        result.listed(),
        result.referenced(),
        result.removed(),
        result.bytesRemoved(),
        result.durationMs());
    return result;
  }

  @Override
  public void close() {
    if (ownThread == null) {
      return;
    }
    ownThread.shutdownNow();
    try {
      if (!ownThread.awaitTermination(30, TimeUnit.SECONDS)) {
        LOG.warn("Maintenance still running after 30 s; leaving it");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
