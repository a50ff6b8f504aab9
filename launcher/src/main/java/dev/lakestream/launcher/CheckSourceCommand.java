package dev.lakestream.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.launcher.source.Finding;
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

/**
 * {@code check-source --jdbc URL [--user USER] [--password PASSWORD] [--connector FILE]}: checks a
 * PostgreSQL database before the pipeline captures it, for the tables the connector (its Kafka
 * Connect JSON) would capture, and prints each finding. Exit 0 when nothing blocks, 1 when
 * something does, 2 when the check could not run. The user and password come from the options,
 * else from the connector's {@code database.user} and {@code database.password}, else from
 * {@code PGUSER} and {@code PGPASSWORD}.
 */
final class CheckSourceCommand {

  private static final String USAGE = "usage: check-source --jdbc jdbc:postgresql://HOST:PORT/DB [--user USER]"
      + " [--password PASSWORD] [--connector CONNECTOR.json]";

  private CheckSourceCommand() {}

  static int run(String[] args, PrintStream out, Map<String, String> env) throws Exception {
    String url = null;
    String user = null;
    String password = null;
    Path connectorFile = null;
    for (int i = 0; i < args.length; i++) {
      boolean hasValue = i + 1 < args.length;
      switch (args[i]) {
        case "--jdbc" -> url = hasValue ? args[++i] : null;
        case "--user" -> user = hasValue ? args[++i] : null;
        case "--password" -> password = hasValue ? args[++i] : null;
        case "--connector" -> connectorFile = hasValue ? Path.of(args[++i]) : null;
        default -> {
          out.println("unknown option " + args[i] + "\n" + USAGE);
          return 2;
        }
      }
    }
    if (url == null || !url.startsWith("jdbc:postgresql:")) {
      out.println(USAGE);
      return 2;
    }
    Map<String, String> connector = connectorFile == null ? Map.of() : connectorConfig(connectorFile);
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
      findings = new PostgresSourceCheck(c, connector).run();
    } catch (SQLException e) {
      out.println("cannot check " + url + ": " + e.getMessage());
      return 2;
    }
    findings.forEach(out::println);
    long blockers = findings.stream().filter(f -> f.level() == Finding.Level.BLOCKER).count();
    long warnings = findings.stream().filter(f -> f.level() == Finding.Level.WARNING).count();
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
