package dev.lakestream.launcher;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.reader.DeltaStats;
import dev.lakestream.reader.MainVersions;
import dev.lakestream.reader.RowOutput;
import dev.lakestream.reader.Version;
import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Versioned reads of a table's main branch (see {@link MainVersions}):
 *
 * <ul>
 *   <li>{@code version --table T}: the current version as JSON;
 *   <li>{@code schema --table T [--version V]}: the schema at a version, Iceberg's JSON;
 *   <li>{@code snapshot --table T [--version V] [--output PATH] [--format json|parquet]}: the rows;
 *   <li>{@code changes --table T --from V1 [--to V2] [--output PATH] [--format json|parquet]}: the
 *       delta, each row with {@code __weight} +1 or -1.
 * </ul>
 *
 * Rows go to standard output as JSON lines unless {@code --output} names a file; Parquet needs
 * {@code --output}. A summary line goes to standard error.
 */
final class VersionsCommand {

  private VersionsCommand() {}

  static int run(String command, String[] args, PrintStream out, PrintStream err) throws Exception {
    Path file = null;
    String table = null;
    Long version = null;
    Long from = null;
    Path output = null;
    String format = "json";
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      boolean hasValue = i + 1 < args.length;
      if ("--config".equals(arg) && hasValue) {
        file = Path.of(args[++i]);
      } else if ("--table".equals(arg) && hasValue) {
        table = args[++i];
      } else if (("--version".equals(arg) || "--to".equals(arg)) && hasValue) {
        version = Long.parseLong(args[++i]);
      } else if ("--from".equals(arg) && hasValue && "changes".equals(command)) {
        from = Long.parseLong(args[++i]);
      } else if ("--output".equals(arg) && hasValue) {
        output = Path.of(args[++i]);
      } else if ("--format".equals(arg) && hasValue) {
        format = args[++i];
      } else {
        return usage(command, err);
      }
    }
    if (table == null || ("changes".equals(command) && from == null)
        || !("json".equals(format) || "parquet".equals(format)) || ("parquet".equals(format) && output == null)) {
      return usage(command, err);
    }
    PipelineConfig config = PipelineConfig.load(file, System.getenv());
    Catalog catalog = CatalogLoader.load(config.catalogName(), config.catalogProperties());
    try {
      TableIdentifier id = TableIdentifier.parse(table);
      if (!catalog.tableExists(id)) {
        err.println(id + ": no such table in catalog " + config.catalogName());
        return 1;
      }
      MainVersions versions = MainVersions.of(catalog.loadTable(id));
      long v = version != null ? version : versions.version().snapshotId();
      switch (command) {
        case "version" -> {
          Version current = version != null ? versions.version(version) : versions.version();
          ObjectNode json = new ObjectMapper().valueToTree(current);
          json.put("table", id.toString());
          out.println(json);
        }
        case "schema" -> out.println(SchemaParser.toJson(versions.schema(v), true));
        case "snapshot" -> {
          Schema schema = versions.schema(v);
          try (Target target = new Target(output, out);
              RowOutput rows = rowOutput(format, schema, target, false)) {
            long count = versions.snapshot(v, rows);
            err.printf("%s: version %d, %d rows%n", id, v, count);
          }
        }
        case "changes" -> {
          Schema schema = versions.schema(v);
          try (Target target = new Target(output, out);
              RowOutput rows = rowOutput(format, schema, target, true)) {
            DeltaStats stats = versions.delta(from, v, rows);
            err.printf("%s: changes %d..%d over %d snapshots: +%d -%d rows (%d cancelled), %s, %d files read, %d ms%n",
                id, from, v, stats.snapshots(), stats.rowsAdded(), stats.rowsRemoved(), stats.rowsCancelled(),
                stats.appendOnly() ? "append-only" : "consolidated in " + stats.passes() + " pass(es)", stats.filesRead(),
                stats.durationMs());
          }
        }
        default -> throw new IllegalArgumentException("not a versioned-read command: " + command);
      }
      return 0;
    } catch (IllegalArgumentException e) {
      err.println(e.getMessage());
      return 1;
    } finally {
      if (catalog instanceof AutoCloseable closeable) {
        closeable.close();
      }
    }
  }

  private static RowOutput rowOutput(String format, Schema schema, Target target, boolean weighted) {
    return "parquet".equals(format)
        ? RowOutput.parquet(schema, target.path, weighted)
        : RowOutput.jsonLines(schema, target.stream);
  }

  /** Standard output, or a file; closing flushes standard output and closes the file. */
  private static final class Target implements AutoCloseable {
    final Path path;
    final OutputStream stream;
    private final boolean owned;

    Target(Path path, PrintStream stdout) throws Exception {
      this.path = path;
      this.owned = path != null;
      this.stream = path != null ? new BufferedOutputStream(Files.newOutputStream(path)) : new BufferedOutputStream(stdout);
    }

    @Override
    public void close() throws Exception {
      stream.flush();
      if (owned) {
        stream.close();
      }
    }
  }

  private static int usage(String command, PrintStream err) {
    err.println(switch (command) {
      case "version" -> "usage: version [--config FILE] --table NAMESPACE.TABLE";
      case "schema" -> "usage: schema [--config FILE] --table NAMESPACE.TABLE [--version V]";
      case "snapshot" -> "usage: snapshot [--config FILE] --table NAMESPACE.TABLE [--version V] [--output PATH] [--format json|parquet]";
      default -> "usage: changes [--config FILE] --table NAMESPACE.TABLE --from V1 [--to V2] [--output PATH] [--format json|parquet]";
    });
    return 2;
  }
}
