package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.sync.verify.Verifier;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * {@code verify [--config FILE] [--table NAMESPACE.TABLE]...}: checks the invariants of the named
 * tables, or of every table of the catalog that has a realtime branch, prints what it checked, and
 * exits 0 only when every invariant holds.
 */
final class VerifyCommand {

  private VerifyCommand() {}

  static int run(String[] args, PrintStream out) throws Exception {
    Path file = null;
    List<String> names = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if ("--config".equals(args[i]) && i + 1 < args.length) {
        file = Path.of(args[++i]);
      } else if ("--table".equals(args[i]) && i + 1 < args.length) {
        names.add(args[++i]);
      } else {
        out.println("usage: verify [--config FILE] [--table NAMESPACE.TABLE]...");
        return 2;
      }
    }
    PipelineConfig config = PipelineConfig.load(file, System.getenv());
    Catalog catalog = CatalogLoader.load(config.catalogName(), config.catalogProperties());
    try {
      List<TableIdentifier> ids = new ArrayList<>();
      names.forEach(n -> ids.add(TableIdentifier.parse(n)));
      if (ids.isEmpty()) {
        ids.addAll(pipelineTables(catalog));
      }
      if (ids.isEmpty()) {
        out.println("no pipeline tables (tables with a realtime branch) in catalog " + config.catalogName());
        return 1;
      }
      boolean allHold = true;
      for (TableIdentifier id : ids) {
        if (!catalog.tableExists(id)) {
          out.println(id + ": no such table in catalog " + config.catalogName());
          allHold = false;
          continue;
        }
        Verifier.Report report = Verifier.verify(catalog.loadTable(id), id.toString());
        out.println(report);
        allHold &= report.passed();
      }
      return allHold ? 0 : 1;
    } finally {
      if (catalog instanceof AutoCloseable closeable) {
        closeable.close();
      }
    }
  }

  private static List<TableIdentifier> pipelineTables(Catalog catalog) {
    List<TableIdentifier> out = new ArrayList<>();
    if (catalog instanceof SupportsNamespaces namespaces) {
      for (Namespace ns : namespaces.listNamespaces()) {
        for (TableIdentifier id : catalog.listTables(ns)) {
          Table table = catalog.loadTable(id);
          if (table.refs().containsKey(Branches.REALTIME)) {
            out.add(id);
          }
        }
      }
    }
    return out;
  }
}
