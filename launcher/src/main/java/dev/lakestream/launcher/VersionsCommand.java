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
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

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

  /** {@code command} with {@code args}, as the command line runs it. */
  static int run(String command, String[] args, PrintStream out, PrintStream err) {
    return Lakestream.run(out, err, System.getenv(), command, args);
  }

  /** The output formats of rows. */
  enum Format {
    json,
    parquet
  }

  /** What the four commands share. */
  private abstract static class Read implements Callable<Integer> {
    final PrintStream out;
    final PrintStream err;
    final Map<String, String> env;

    @Mixin
    Lakestream.ConfigOption config;

    @Mixin
    Lakestream.TableOption table;

    Read(PrintStream out, PrintStream err, Map<String, String> env) {
      this.out = out;
      this.err = err;
      this.env = env;
    }
  }

  /** {@code --output} and {@code --format}. */
  static final class RowsOptions {
    @Option(
        names = "--output",
        paramLabel = "PATH",
        description = "write the rows here (standard output when absent)")
    Path output;

    @Option(
        names = "--format",
        defaultValue = "json",
        description = "json (lines) or parquet (needs --output)")
    Format format;

    void check(picocli.CommandLine commandLine) {
      if (format == Format.parquet && output == null) {
        throw new ParameterException(commandLine, "--format parquet needs --output PATH");
      }
    }
  }

  @Command(
      name = "version",
      mixinStandardHelpOptions = true,
      description = "The current version of a table's main branch.")
  static final class VersionCommand extends Read {
    VersionCommand(PrintStream out, PrintStream err, Map<String, String> env) {
      super(out, err, env);
    }

    @Override
    public Integer call() throws Exception {
      return read(
          "version", config.load(env), table.table, null, null, null, Format.json, out, err);
    }
  }

  @Command(
      name = "schema",
      mixinStandardHelpOptions = true,
      description = "The schema of a table at a version.")
  static final class SchemaCommand extends Read {
    @Option(
        names = "--version",
        paramLabel = "V",
        description = "the version (default: the current one)")
    Long version;

    SchemaCommand(PrintStream out, PrintStream err, Map<String, String> env) {
      super(out, err, env);
    }

    @Override
    public Integer call() throws Exception {
      return read(
          "schema", config.load(env), table.table, version, null, null, Format.json, out, err);
    }
  }

  @Command(
      name = "snapshot",
      mixinStandardHelpOptions = true,
      description = "The rows of a table at a version.")
  static final class SnapshotCommand extends Read {
    @Option(
        names = "--version",
        paramLabel = "V",
        description = "the version (default: the current one)")
    Long version;

    @Mixin
    RowsOptions rows;

    @Spec
    CommandSpec spec;

    SnapshotCommand(PrintStream out, PrintStream err, Map<String, String> env) {
      super(out, err, env);
    }

    @Override
    public Integer call() throws Exception {
      rows.check(spec.commandLine());
      return read(
          "snapshot",
          config.load(env),
          table.table,
          version,
          null,
          rows.output,
          rows.format,
          out,
          err);
    }
  }

  @Command(
      name = "changes",
      mixinStandardHelpOptions = true,
      description = "The rows that changed between two versions, each with __weight +1 or -1.")
  static final class ChangesCommand extends Read {
    @Option(
        names = "--from",
        required = true,
        paramLabel = "V1",
        description = "the version to start after")
    Long from;

    @Option(
        names = "--to",
        paramLabel = "V2",
        description = "the version to end at (default: the current one)")
    Long to;

    @Mixin
    RowsOptions rows;

    @Spec
    CommandSpec spec;

    ChangesCommand(PrintStream out, PrintStream err, Map<String, String> env) {
      super(out, err, env);
    }

    @Override
    public Integer call() throws Exception {
      rows.check(spec.commandLine());
      return read(
          "changes", config.load(env), table.table, to, from, rows.output, rows.format, out, err);
    }
  }

  static int read(
      String command,
      PipelineConfig config,
      String table,
      Long version,
      Long from,
      Path output,
      Format format,
      PrintStream out,
      PrintStream err)
      throws Exception {
    config.check(); // a misspelled setting is warned of, as the apps do
    Catalog catalog = CatalogLoader.loadExisting(config.catalogName(), config.catalogProperties());
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
          try (Target target = new Target(output, out, format)) {
            long count;
            try (RowOutput rows = rowOutput(format, schema, target, false)) {
              count = versions.snapshot(v, rows);
            }
            target.complete();
            err.printf("%s: version %d, %d rows%n", id, v, count);
          }
        }
        case "changes" -> {
          Schema schema = versions.schema(v);
          try (Target target = new Target(output, out, format)) {
            DeltaStats stats;
            try (RowOutput rows = rowOutput(format, schema, target, true)) {
              stats = versions.delta(from, v, rows);
            }
            target.complete();
            err.printf(
                "%s: changes %d..%d over %d snapshots: +%d -%d rows (%d cancelled), %s, %d files read, %d ms%n",
                id,
                from,
                v,
                stats.snapshots(),
                stats.rowsAdded(),
                stats.rowsRemoved(),
                stats.rowsCancelled(),
                stats.appendOnly()
                    ? "append-only"
                    : "consolidated in " + stats.buckets() + " bucket(s)",
                stats.filesRead(),
                stats.durationMs());
          }
        }
        default -> throw new IllegalArgumentException("not a versioned-read command: " + command);
      }
      // A PrintStream keeps its write errors to itself: a full disk or a closed pipe would
      // otherwise end with status 0 and a consumer would take the output for whole.
      out.flush();
      if (out.checkError()) {
        err.println(id + ": writing to standard output failed (a full disk, a closed pipe): what"
            + " was written is not whole");
        return 1;
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

  private static RowOutput rowOutput(
      Format format, Schema schema, Target target, boolean weighted) {
    return format == Format.parquet
        ? RowOutput.parquet(schema, target.path, weighted)
        : RowOutput.jsonLines(schema, target.stream);
  }

  /**
   * Standard output, or a file. A file is written under a temporary name beside it and takes its
   * name only when the read completes ({@link #complete}): a read that fails midway (a data file it
   * cannot read, a delta whose snapshots expired meanwhile) leaves no file that looks whole.
   * Standard output cannot be taken back: a consumer discards what it read when the exit status is
   * not 0.
   */
  private static final class Target implements AutoCloseable {
    /**
     * Where the rows are written: the temporary file, the device or pipe named, or null for
     * standard output.
     */
    final Path path;

    final OutputStream stream;
    /** The file that takes the rows once complete; null when they are written in place. */
    private final Path output;

    private boolean completed;

    /** {@code named}: the file to write, or null for standard output; Parquet needs a file. */
    Target(Path named, PrintStream stdout, Format format) throws Exception {
      // A link to a file is followed: the file is replaced. A device or a pipe (/dev/null, a FIFO,
      // /dev/stdout) is written in place.
      Path file = named;
      if (named != null && Files.exists(named)) {
        try {
          file = named.toRealPath();
        } catch (IOException e) {
          file = named; // a link the system cannot resolve (/dev/stdout to a pipe)
        }
      }
      boolean special = file != null && Files.exists(file) && !Files.isRegularFile(file);
      if (special && format == Format.parquet) {
        // Iceberg's Parquet writer deletes what is there and creates a file in its place.
        throw new IllegalArgumentException(
            "--format parquet writes a file: " + named + " is not one (a device, a pipe or a"
                + " directory); give a file, or use --format json");
      }
      this.output = file != null && !special ? file : null;
      this.path = output == null
          ? file
          : file.resolveSibling("." + file.getFileName() + ".partial-"
              + UUID.randomUUID().toString().substring(0, 8));
      this.stream = path != null
          ? new BufferedOutputStream(Files.newOutputStream(path))
          : new BufferedOutputStream(stdout);
    }

    /** Every row was written: the file takes its name. */
    void complete() throws Exception {
      stream.flush();
      if (output != null) {
        stream.close();
        Files.move(
            path, output, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      }
      completed = true;
    }

    @Override
    public void close() throws Exception {
      if (output == null) {
        stream.flush();
        if (path != null) {
          stream.close();
        }
      } else if (!completed) {
        stream.close();
        Files.deleteIfExists(path);
      }
    }
  }
}
