package dev.lakestream.launcher;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The command line, {@code lakestream <command> [options]}, with picocli: each command is one app
 * or tool, with {@code --help}; a missing or malformed option is a usage error (exit 2) that says
 * which; an error while running prints its message (exit 1), never a stack trace.
 */
@Command(
    name = "lakestream",
    mixinStandardHelpOptions = true,
    versionProvider = Lakestream.Version.class,
    description =
        "Mirror Debezium change topics into Apache Iceberg tables: `realtime` with equality deletes,"
            + " `main` with deletion vectors only.",
    footer = {
      "",
      "Settings come from the properties file (--config) and from LAKESTREAM_* environment variables"
          + " (LAKESTREAM_BOOTSTRAP_SERVERS sets bootstrap.servers); see README.md."
    })
public final class Lakestream implements Runnable {

  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(), "which command? (lakestream --help lists them)");
  }

  /** Commands whose standard output is their result, which a program reads: no log line in it. */
  private static final Set<String> WRITE_RESULTS =
      Set.of("version", "schema", "snapshot", "changes");

  public static void main(String[] args) {
    PrintStream out = System.out;
    if (args.length > 0 && WRITE_RESULTS.contains(args[0])) {
      // The log's console appender follows System.out (log4j2.xml): its lines go to stderr.
      System.setOut(System.err);
    }
    System.exit(execute(out, System.err, System.getenv(), args));
  }

  /** Runs {@code args} as the command line does, printing to {@code out} and {@code err}; the exit code. */
  static int execute(PrintStream out, PrintStream err, Map<String, String> env, String... args) {
    CommandLine cli = new CommandLine(new Lakestream())
        .addSubcommand(
            "ingest",
            app(
                "ingest",
                env,
                "Debezium change topics -> the realtime branch of each table (Kafka Streams app), until stopped."))
        .addSubcommand(
            "sync",
            app(
                "sync",
                env,
                "realtime's equality deletes -> deletion vectors on main, one snapshot per cycle (Kafka Streams app),"
                    + " until stopped."))
        .addSubcommand("verify", new VerifyCommand(out, env))
        .addSubcommand("check-source", new CheckSourceCommand(out, env))
        .addSubcommand("compact", new MaintenanceCommand.Compact(out, env))
        .addSubcommand("expire-snapshots", new MaintenanceCommand.ExpireSnapshots(out, env))
        .addSubcommand("remove-orphan-files", new MaintenanceCommand.RemoveOrphanFiles(out, env))
        .addSubcommand("version", new VersionsCommand.VersionCommand(out, err, env))
        .addSubcommand("schema", new VersionsCommand.SchemaCommand(out, err, env))
        .addSubcommand("snapshot", new VersionsCommand.SnapshotCommand(out, err, env))
        .addSubcommand("changes", new VersionsCommand.ChangesCommand(out, err, env))
        .addSubcommand("demo", new DemoCommand.Cli(out));
    cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
    cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
    cli.setExecutionExceptionHandler((e, command, parsed) -> {
      command.getErr().println(command.getCommandName() + ": " + message(e));
      return 1;
    });
    return cli.execute(args);
  }

  private static CommandLine app(String name, Map<String, String> env, String description) {
    CommandLine app = new CommandLine(new AppCommand(name, env));
    app.getCommandSpec().usageMessage().description(description);
    return app;
  }

  /** Runs {@code command} with {@code args} as the command line does (for tests and tools). */
  static int run(
      PrintStream out, PrintStream err, Map<String, String> env, String command, String... args) {
    String[] all = new String[args.length + 1];
    all[0] = command;
    System.arraycopy(args, 0, all, 1, args.length);
    return execute(out, err, env, all);
  }

  /** The exception's message, with its causes' where they add to it. */
  static String message(Throwable e) {
    List<String> parts = new ArrayList<>();
    for (Throwable t = e;
        t != null && parts.size() < 4;
        t = t.getCause() == t ? null : t.getCause()) {
      String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
      if (parts.stream().noneMatch(p -> p.contains(m))) {
        parts.add(m);
      }
    }
    return String.join(": ", parts);
  }

  /** {@code --config FILE}, and the settings it and the environment give. */
  static final class ConfigOption {
    @Option(
        names = "--config",
        paramLabel = "FILE",
        description = "the properties file (settings may also come from LAKESTREAM_* variables)")
    Path file;

    PipelineConfig load(Map<String, String> env) throws Exception {
      return PipelineConfig.load(file, env);
    }
  }

  /** {@code --table NAMESPACE.TABLE}, required. */
  static final class TableOption {
    @Option(
        names = "--table",
        required = true,
        paramLabel = "NAMESPACE.TABLE",
        description = "the table")
    String table;
  }

  /** {@code ingest} and {@code sync}: a Kafka Streams app, run until stopped. */
  @Command(
      mixinStandardHelpOptions = true,
      description = "Run a Kafka Streams app until SIGTERM or Ctrl-C.")
  static final class AppCommand implements Callable<Integer> {
    private final String name;
    private final Map<String, String> env;

    @Mixin
    ConfigOption config;

    AppCommand(String name, Map<String, String> env) {
      this.name = name;
      this.env = env;
    }

    @Override
    public Integer call() throws Exception {
      PipelineConfig settings = config.load(env);
      return "ingest".equals(name) ? IngestApp.run(settings) : SyncApp.run(settings);
    }
  }

  /** The jar's version, from its manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Lakestream.class.getPackage().getImplementationVersion();
      return new String[] {"lakestream " + (v == null ? "(development build)" : v)};
    }
  }

  /** {@code KEY=VALUE} options into a map, in order. */
  static Map<String, String> ordered(Map<String, String> settings) {
    return settings == null ? Map.of() : new LinkedHashMap<>(settings);
  }
}
