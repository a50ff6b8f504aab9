package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.maintenance.OrphanFiles;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.sync.maintenance.SnapshotExpiry;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Optional;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The maintenance the sync app runs on its policies, run once by hand on one table, with the same
 * settings ({@code sync.maintenance.*}); ingest and sync may keep running:
 *
 * <ul>
 *   <li>{@code compact --table T [--all]}: compacts realtime by the compaction policy, or every
 *       data file with {@code --all}; sync mirrors the result on main;
 *   <li>{@code expire-snapshots --table T}: expires snapshots of both branches by their retention;
 *   <li>{@code remove-orphan-files --table T [--older-than-ms MS]}: removes unreferenced files
 *       older than the safety age ({@code sync.maintenance.orphans.min-age-ms} unless given).
 * </ul>
 */
final class MaintenanceCommand {

  private MaintenanceCommand() {}

  static int run(String command, String[] args, PrintStream out) throws Exception {
    Path file = null;
    String table = null;
    boolean all = false;
    Long olderThanMs = null;
    boolean usage = false;
    for (int i = 0; i < args.length && !usage; i++) {
      if ("--config".equals(args[i]) && i + 1 < args.length) {
        file = Path.of(args[++i]);
      } else if ("--table".equals(args[i]) && i + 1 < args.length) {
        table = args[++i];
      } else if ("--all".equals(args[i]) && "compact".equals(command)) {
        all = true;
      } else if ("--older-than-ms".equals(args[i]) && i + 1 < args.length && "remove-orphan-files".equals(command)) {
        olderThanMs = Long.parseLong(args[++i]);
      } else {
        usage = true;
      }
    }
    if (table == null || usage) {
      out.println(switch (command) {
        case "compact" -> "usage: compact [--config FILE] --table NAMESPACE.TABLE [--all]";
        case "remove-orphan-files" -> "usage: remove-orphan-files [--config FILE] --table NAMESPACE.TABLE [--older-than-ms MS]";
        default -> "usage: " + command + " [--config FILE] --table NAMESPACE.TABLE";
      });
      return 2;
    }
    PipelineConfig config = PipelineConfig.load(file, System.getenv());
    MaintenanceConfig maintenance = MaintenanceConfig.from(config);
    Catalog catalog = CatalogLoader.load(config.catalogName(), config.catalogProperties());
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
              ? Optional.of(RealtimeCompaction.prepareAll(t, maintenance.compaction().targetFileBytes()))
              : RealtimeCompaction.prepare(t, maintenance.compaction(), now);
          if (prepared.isEmpty() || prepared.get().dataFilesIn() < (all ? 2 : 1)) {
            prepared.ifPresent(RealtimeCompaction::abort);
            out.println(id + ": nothing to compact on realtime (the policy selects no files; --all compacts every file)");
            return 0;
          }
          RealtimeCompaction.Result r = prepared.get().commit();
          out.printf("%s: compacted realtime (%s): %d data files (%d bytes) into %d (%d bytes, %d rows), "
                  + "dropped %d equality-delete files, snapshot %d, %d ms%n",
              id, r.reason(), r.dataFilesIn(), r.bytesIn(), r.dataFilesOut(), r.bytesOut(), r.rows(),
              r.equalityDeletesDropped(), r.snapshotId(), r.durationMs());
        }
        case "expire-snapshots" -> {
          SnapshotExpiry.Result r = SnapshotExpiry.run(t, maintenance.realtimeRetention(), maintenance.mainRetention(), now);
          out.printf("%s: expired %d snapshots (%d realtime, %d main, %d unreferenced), %d ms%n",
              id, r.total(), r.realtimeExpired(), r.mainExpired(), r.otherExpired(), r.durationMs());
        }
        case "remove-orphan-files" -> {
          long olderThan = now - (olderThanMs != null ? olderThanMs : maintenance.orphanMinAgeMs());
          OrphanFiles.Result r = OrphanFiles.remove(t, olderThan);
          r.removedFiles().forEach(f -> out.println("removed " + f));
          out.printf("%s: %d files listed, %d referenced, %d orphans removed (%d bytes), %d ms%n",
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
