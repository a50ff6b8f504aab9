package dev.lakestream.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.launcher.source.Finding;
import dev.lakestream.launcher.source.MySqlSourceCheck;
import dev.lakestream.launcher.source.PostgresSourceCheck;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code check-source --jdbc URL [--user USER] [--password PASSWORD] [--connector FILE]}: checks a
 * PostgreSQL database before the pipeline captures it, for the tables the connector (its Kafka
 * Connect JSON) would capture, and prints each finding. Exit 0 when nothing blocks, 1 when
 * something does, 2 when the check could not run. The user and password come from the options,
 * else from the connector's {@code database.user} and {@code database.password}, else from
 * {@code PGUSER} and {@code PGPASSWORD}. A {@code jdbc:mariadb:} or {@code jdbc:mysql:} URL checks a
 * MySQL or MariaDB server ({@link MySqlSourceCheck}).
 */
@Command(
    name = "check-source",
    mixinStandardHelpOptions = true,
    description = {
      "Check a source before capturing it: a PostgreSQL database (keys, replica identity, types,"
          + " TOAST, wal_level, slots, publications) or a MySQL/MariaDB server (binary log format and"
          + " row image, keys, TIME columns).",
      "Exit 0 when nothing blocks, 1 when something does, 2 when the check could not run."
    })
final class CheckSourceCommand implements Callable<Integer> {

  private final PrintStream out;
  private final Map<String, String> env;

  @Option(
      names = "--jdbc",
      required = true,
      paramLabel = "URL",
      description =
          "jdbc:postgresql://HOST:PORT/DB, jdbc:mariadb://HOST:PORT/ or jdbc:mysql://HOST:PORT/")
  String url;

  @Option(
      names = "--user",
      paramLabel = "USER",
      description = "default: the connector's database.user, else PGUSER")
  String user;

  @Option(
      names = "--password",
      paramLabel = "PASSWORD",
      description = "default: the connector's database.password, else PGPASSWORD")
  String password;

  @Option(
      names = "--connector",
      paramLabel = "FILE",
      description = "the connector's Kafka Connect JSON")
  Path connectorFile;

  @Spec
  CommandSpec spec;

  CheckSourceCommand(PrintStream out, Map<String, String> env) {
    this.out = out;
    this.env = env;
  }

  /** {@code check-source} with {@code args}, as the command line runs it. */
  static int run(String[] args, PrintStream out, Map<String, String> env) {
    return Lakestream.run(out, out, env, "check-source", args);
  }

  @Override
  public Integer call() throws Exception {
    boolean binlog = MySqlSourceCheck.handles(url);
    if (!url.startsWith("jdbc:postgresql:") && !binlog) {
      throw new ParameterException(
          spec.commandLine(),
          "--jdbc wants a jdbc:postgresql:, jdbc:mariadb: or jdbc:mysql: URL, not " + url);
    }
    Map<String, String> connector =
        connectorFile == null ? Map.of() : connectorConfig(connectorFile);
    Properties props = new Properties();
    String u = first(user, connector.get("database.user"), env.get("PGUSER"));
    String p = first(password, connector.get("database.password"), env.get("PGPASSWORD"));
    if (u != null) {
      props.put("user", u);
    }
    if (p != null) {
      props.put("password", p);
    }
    List<Finding> findings;
    try (Connection c = DriverManager.getConnection(url, props)) {
      findings = binlog
          ? new MySqlSourceCheck(c, connector).run()
          : new PostgresSourceCheck(c, connector).run();
    } catch (SQLException e) {
      out.println("cannot check " + url + ": " + e.getMessage());
      return 2;
    }
    findings.forEach(out::println);
    long blockers =
        findings.stream().filter(f -> f.level() == Finding.Level.BLOCKER).count();
    long warnings =
        findings.stream().filter(f -> f.level() == Finding.Level.WARNING).count();
    out.printf("%d blocker(s), %d warning(s)%n", blockers, warnings);
    return blockers > 0 ? 1 : 0;
  }

  /** The {@code config} object of a Kafka Connect connector JSON (or the object itself). */
  static Map<String, String> connectorConfig(Path file) throws Exception {
    JsonNode root = new ObjectMapper().readTree(Files.readString(file));
    JsonNode config = root.has("config") ? root.get("config") : root;
    Map<String, String> out = new LinkedHashMap<>();
    config.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  private static String first(String... values) {
    for (String v : values) {
      if (v != null && !v.isEmpty() && !v.startsWith("${")) {
        return v;
      }
    }
    return null;
  }
}
