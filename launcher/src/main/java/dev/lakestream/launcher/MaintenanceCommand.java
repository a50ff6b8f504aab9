package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.maintenance.OrphanFiles;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.sync.maintenance.SnapshotExpiry;
import java.io.PrintStream;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The maintenance the sync app runs on its policies, run once by hand on one table, with the same
 * settings ({@code sync.maintenance.*}); ingest and sync may keep running:
 *
 * <ul>
 *   <li>{@code compact --table T [--all]}: compacts realtime by the compaction policy, or every
 *       data file but one with {@code --all}; sync mirrors the result on main;
 *   <li>{@code expire-snapshots --table T}: expires snapshots of both branches by their retention;
 *   <li>{@code remove-orphan-files --table T [--older-than-ms MS]}: removes unreferenced files
 *       older than the safety age ({@code sync.maintenance.orphans.min-age-ms} unless given; a
 *       given age must be longer than {@code lakestream.max.stall.ms}, as the setting must).
 * </ul>
 */
final class MaintenanceCommand {

  private MaintenanceCommand() {}

  /** {@code command} with {@code args}, as the command line runs it (usage errors print to {@code out}). */
  static int run(String command, String[] args, PrintStream out) {
    return Lakestream.run(out, out, System.getenv(), command, args);
  }

  /** What the three commands share: where they print, the settings, the table. */
  private abstract static class OnTable implements Callable<Integer> {
    final PrintStream out;
    final Map<String, String> env;

    @Mixin
    Lakestream.ConfigOption config;

    @Mixin
    Lakestream.TableOption table;

    OnTable(PrintStream out, Map<String, String> env) {
      this.out = out;
      this.env = env;
    }
  }

  @Command(
      name = "compact",
      mixinStandardHelpOptions = true,
      description =
          "Compact a table's realtime branch by the compaction policy (sync mirrors it on main).")
  static final class Compact extends OnTable {
    @Option(
        names = "--all",
        description = "rewrite every data file but one, whatever the policy selects")
    boolean all;

    Compact(PrintStream out, Map<String, String> env) {
      super(out, env);
    }

    @Override
    public Integer call() throws Exception {
      return maintain("compact", config.load(env), table.table, all, null, out);
    }
  }

  @Command(
      name = "expire-snapshots",
      mixinStandardHelpOptions = true,
      description = "Expire both branches' snapshots by their retention.")
  static final class ExpireSnapshots extends OnTable {
    ExpireSnapshots(PrintStream out, Map<String, String> env) {
      super(out, env);
    }

    @Override
    public Integer call() throws Exception {
      return maintain("expire-snapshots", config.load(env), table.table, false, null, out);
    }
  }

  @Command(
      name = "remove-orphan-files",
      mixinStandardHelpOptions = true,
      description = "Remove the files under the table's location that no snapshot references.")
  static final class RemoveOrphanFiles extends OnTable {
    @Option(
        names = "--older-than-ms",
        paramLabel = "MS",
        description = "only files older than this, longer than lakestream.max.stall.ms"
            + " (default: sync.maintenance.orphans.min-age-ms)")
    Long olderThanMs;

    RemoveOrphanFiles(PrintStream out, Map<String, String> env) {
      super(out, env);
    }

    @Override
    public Integer call() throws Exception {
      return maintain(
          "remove-orphan-files", config.load(env), table.table, false, olderThanMs, out);
    }
  }

  static int maintain(
      String command,
      PipelineConfig config,
      String table,
      boolean all,
      Long olderThanMs,
      PrintStream out)
      throws Exception {
    MaintenanceConfig maintenance = MaintenanceConfig.from(config);
    Catalog catalog = CatalogLoader.loadExisting(config.catalogName(), config.catalogProperties());
    try {
      TableIdentifier id = TableIdentifier.parse(table);
      if (!catalog.tableExists(id)) {
        out.println(id + ": no such table in catalog " + config.catalogName());
        return 1;
      }
      Table t = catalog.loadTable(id);
      long now = System.currentTimeMillis();
      switch (command) {
        case "compact" -> {
          Optional<RealtimeCompaction> prepared = all
              ? Optional.of(
                  RealtimeCompaction.prepareAll(t, maintenance.compaction().targetFileBytes()))
              : RealtimeCompaction.prepare(t, maintenance.compaction(), now);
          if (prepared.isEmpty() || prepared.get().dataFilesIn() < 1) {
            prepared.ifPresent(RealtimeCompaction::abort);
            out.println(
                id
                    + ": nothing to compact on realtime (the policy selects no files; --all compacts every file but one)");
            return 0;
          }
          RealtimeCompaction.Result r = prepared.get().commit();
          out.printf(
              "%s: compacted realtime (%s): %d data files (%d bytes) into %d (%d bytes, %d rows), "
                  + "dropped %d equality-delete files, snapshot %d, %d ms%n",
              id,
              r.reason(),
              r.dataFilesIn(),
              r.bytesIn(),
              r.dataFilesOut(),
              r.bytesOut(),
              r.rows(),
              r.equalityDeletesDropped(),
              r.snapshotId(),
              r.durationMs());
        }
        case "expire-snapshots" -> {
          SnapshotExpiry.Result r = SnapshotExpiry.run(
              t, maintenance.realtimeRetention(), maintenance.mainRetention(), now);
          out.printf(
              "%s: expired %d snapshots (%d realtime, %d main, %d unreferenced), %d ms%n",
              id,
              r.total(),
              r.realtimeExpired(),
              r.mainExpired(),
              r.otherExpired(),
              r.durationMs());
        }
        case "remove-orphan-files" -> {
          if (olderThanMs != null && olderThanMs <= maintenance.maxStallMs()) {
            // A batch or a sync cycle may wait that long for its commit, its files referenced by
            // no snapshot until then: removing them would lose the batch or break main.
            out.println("--older-than-ms (" + olderThanMs + ") must be longer than "
                + PipelineConfig.MAX_STALL_MS + " (" + maintenance.maxStallMs() + "): files"
                + " written that recently may belong to a batch or a sync cycle that has not"
                + " committed yet");
            return 2;
          }
          long olderThan = now - (olderThanMs != null ? olderThanMs : maintenance.orphanMinAgeMs());
          OrphanFiles.Result r = OrphanFiles.remove(t, olderThan);
          r.removedFiles().forEach(f -> out.println("removed " + f));
          out.printf(
              "%s: %d files listed, %d referenced, %d orphans removed (%d bytes), %d ms%n",
              id, r.listed(), r.referenced(), r.removed(), r.bytesRemoved(), r.durationMs());
        }
        default -> throw new IllegalArgumentException("not a maintenance command: " + command);
      }
      return 0;
    } finally {
      if (catalog instanceof AutoCloseable closeable) {
        closeable.close();
      }
    }
  }
}
