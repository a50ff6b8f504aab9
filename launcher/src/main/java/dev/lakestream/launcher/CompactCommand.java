package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import java.io.PrintStream;
import java.nio.file.Path;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * {@code compact [--config FILE] --table NAMESPACE.TABLE}: compacts the table's realtime branch
 * into one data file (see {@link RealtimeCompaction}); ingest may keep running, and sync mirrors the
 * result on main.
 */
final class CompactCommand {

  private CompactCommand() {}

  static int run(String[] args, PrintStream out) throws Exception {
    Path file = null;
    String table = null;
    for (int i = 0; i < args.length; i++) {
      if ("--config".equals(args[i]) && i + 1 < args.length) {
        file = Path.of(args[++i]);
      } else if ("--table".equals(args[i]) && i + 1 < args.length) {
        table = args[++i];
      } else {
        table = null;
        break;
      }
    }
    if (table == null) {
      out.println("usage: compact [--config FILE] --table NAMESPACE.TABLE");
      return 2;
    }
    PipelineConfig config = PipelineConfig.load(file, System.getenv());
    Catalog catalog = CatalogLoader.load(config.catalogName(), config.catalogProperties());
    try {
      TableIdentifier id = TableIdentifier.parse(table);
      if (!catalog.tableExists(id)) {
        out.println(id + ": no such table in catalog " + config.catalogName());
        return 1;
      }
      long started = System.currentTimeMillis();
      RealtimeCompaction compaction = RealtimeCompaction.prepare(catalog.loadTable(id));
      if (compaction.dataFilesIn() < 2) {
        out.println(id + ": realtime has " + compaction.dataFilesIn() + " data file(s); nothing to compact");
        return 0;
      }
      Snapshot committed = compaction.commit();
      out.printf("%s: compacted %d data files into 1 (%d rows), dropped %d equality-delete files, snapshot %d on realtime, %d ms%n",
          id, compaction.dataFilesIn(), compaction.rows(), compaction.equalityDeletesDropped(), committed.snapshotId(),
          System.currentTimeMillis() - started);
      return 0;
    } finally {
      if (catalog instanceof AutoCloseable closeable) {
        closeable.close();
      }
    }
  }
}
