package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.sync.verify.Verifier;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code verify [--config FILE] [--table NAMESPACE.TABLE]...}: checks the invariants of the named
 * tables, or of every table of the catalog that has a realtime branch, prints what it checked, and
 * exits 0 only when every invariant holds.
 */
@Command(
    name = "verify",
    mixinStandardHelpOptions = true,
    description = "Check the invariants of pipeline tables; exit 0 when all hold, 1 otherwise.")
final class VerifyCommand implements Callable<Integer> {

  private final PrintStream out;
  private final Map<String, String> env;

  @Mixin
  Lakestream.ConfigOption config;

  @Option(
      names = "--table",
      paramLabel = "NAMESPACE.TABLE",
      description = "a table to check (repeatable); every table with a realtime branch when none")
  List<String> names = new ArrayList<>();

  VerifyCommand(PrintStream out, Map<String, String> env) {
    this.out = out;
    this.env = env;
  }

  @Override
  public Integer call() throws Exception {
    PipelineConfig settings = config.load(env);
    Catalog catalog =
        CatalogLoader.loadExisting(settings.catalogName(), settings.catalogProperties());
    try {
      List<TableIdentifier> ids = new ArrayList<>();
      names.forEach(n -> ids.add(TableIdentifier.parse(n)));
      if (ids.isEmpty()) {
        ids.addAll(pipelineTables(catalog));
      }
      if (ids.isEmpty()) {
        out.println("no pipeline tables (tables with a realtime branch) in catalog "
            + settings.catalogName());
        return 1;
      }
      boolean allHold = true;
      for (TableIdentifier id : ids) {
        if (!catalog.tableExists(id)) {
          out.println(id + ": no such table in catalog " + settings.catalogName());
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
