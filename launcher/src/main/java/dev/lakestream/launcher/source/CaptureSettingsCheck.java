package dev.lakestream.launcher.source;

import dev.lakestream.launcher.source.Finding.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Connector settings that keep changes from reaching Kafka, or reach it in a shape ingest cannot
 * read, without anything failing: Debezium's defaults and options that skip operations (its default
 * {@code skipped.operations=t} drops every {@code TRUNCATE}), skip events it fails on, snapshot no
 * rows, drop the slot (and the changes until the next start) when the task stops; Kafka Connect's {@code errors.tolerance=all}, which drops
 * a record its converter or transforms fail on; transforms that flatten or filter the change events;
 * converters other than Connect's JSON; a MySQL connector that sends a value it cannot convert as
 * null; no heartbeat, so a connector whose tables are quiet keeps
 * the source's log from being freed. Each comes with the setting that keeps the changes (the
 * shipped connectors' own).
 */
final class CaptureSettingsCheck {

  static final String SKIPPED = "skipped.operations";
  static final String ON_FAILURE = "event.processing.failure.handling.mode";
  static final String ON_CONVERSION_FAILURE = "event.converting.failure.handling.mode";
  static final String TOLERANCE = "errors.tolerance";
  static final String SNAPSHOT = "snapshot.mode";
  static final String DROP_SLOT = "slot.drop.on.stop";
  static final String HEARTBEAT = "heartbeat.interval.ms";
  static final String HEARTBEAT_QUERY = "heartbeat.action.query";
  static final String JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter";

  /** From this version on, pgoutput sends nothing of a transaction that changes no published table. */
  static final int POSTGRES_SKIPS_EMPTY_TRANSACTIONS = 150000;

  private CaptureSettingsCheck() {}

  /**
   * Adds what a PostgreSQL connector's settings call for to {@code out} (nothing without a
   * connector); {@code version}: the server's {@code server_version_num}.
   */
  static void checkPostgres(Map<String, String> connector, List<Finding> out, int version) {
    check(connector, out, version);
  }

  /** Adds what a MySQL or MariaDB connector's settings call for to {@code out}. */
  static void checkMySql(Map<String, String> connector, List<Finding> out) {
    check(connector, out, 0);
  }

  /** {@code postgresVersion}: the PostgreSQL server's version number, 0 for MySQL and MariaDB. */
  private static void check(Map<String, String> connector, List<Finding> out, int postgresVersion) {
    if (connector.isEmpty()) {
      return;
    }
    skippedOperations(connector, out);
    heartbeat(connector, out, postgresVersion);
    String onFailure = value(connector, ON_FAILURE, "fail");
    if (!onFailure.equals("fail")) {
      out.add(new Finding(
          Level.WARNING,
          ON_FAILURE,
          onFailure + ": a change event Debezium fails to make is skipped (at most a log line),"
              + " and that change never reaches main. Keep fail (Debezium's default):"
              + " ingest dead-letters what it cannot apply, with its reason"));
    }
    String onConversionFailure = value(connector, ON_CONVERSION_FAILURE, "warn");
    if (postgresVersion == 0 && !onConversionFailure.equals("fail")) {
      out.add(new Finding(
          Level.WARNING,
          ON_CONVERSION_FAILURE,
          onConversionFailure
              + (connector.containsKey(ON_CONVERSION_FAILURE) ? "" : " (Debezium's default)")
              + ": a value Debezium cannot convert to the type its schema gives the column is sent"
              + " as null in a nullable column (at most a log line): seen for a TIMESTAMP column"
              + " created under sql_mode=MAXDB, whose values reached main as null. Set fail (the"
              + " shipped connectors' setting): the connector stops and names the column, and a"
              + " snapshot.mode=recovery brings it back with the values (README)"));
    }
    if (value(connector, TOLERANCE, "none").equals("all")) {
      out.add(new Finding(
          Level.WARNING,
          TOLERANCE,
          "all: Kafka Connect drops a record its converter or transforms fail on, or its"
              + " producer cannot send (a record above max.request.size, a topic it may not write),"
              + " commits its offset, and goes on: that change never reaches main. Keep none"
              + " (Connect's default), so the task stops and says why"));
    }
    String snapshot = value(connector, SNAPSHOT, "initial");
    if (snapshot.equals("no_data")) {
      out.add(new Finding(
          Level.WARNING,
          SNAPSHOT,
          snapshot + ": the rows a table holds when the connector starts are never read, so main"
              + " holds only what changes after. Use initial (the shipped connectors' setting), or"
              + " ask for an incremental snapshot of the tables later (README, \"When main differs"
              + " from the source\")"));
    } else if (snapshot.equals("initial_only")) {
      out.add(new Finding(
          Level.WARNING,
          SNAPSHOT,
          "initial_only: the connector stops after its snapshot, so no change after it reaches"
              + " main. Use initial to go on streaming"));
    }
    if (value(connector, DROP_SLOT, "false").equals("true")) {
      out.add(new Finding(
          Level.BLOCKER,
          DROP_SLOT,
          "true: the replication slot is dropped whenever the connector's task stops (a restart,"
              + " a rebalance of Connect's workers), with the changes made until it starts again;"
              + " the task then fails (Debezium 3.6.1: the position \"is no longer available on the"
              + " server\") until recovered as from a lost slot (README, \"A lost replication"
              + " slot\"). Keep false (Debezium's default)"));
    }
    transforms(connector, out);
    for (String side : List.of("key", "value")) {
      String name = side + ".converter";
      String converter = connector.get(name);
      if (converter != null && !converter.trim().equals(JSON_CONVERTER)) {
        out.add(new Finding(
            Level.BLOCKER,
            name,
            converter.trim() + ": ingest reads the records Connect's JSON converter writes, and"
                + " dead-letters others. Set \"" + name + "\": \"" + JSON_CONVERTER + "\""));
      } else if (converter == null) {
        out.add(new Finding(
            Level.INFO,
            name,
            "not set: the worker's own applies; ingest reads the records Connect's JSON converter"
                + " writes (" + JSON_CONVERTER + ", which the shipped connectors set)"));
      }
    }
  }

  /**
   * Debezium stores a position only with a record it writes, so while the captured tables do not
   * change, its stored position stays where their last change was however much the source writes
   * to other tables (seen on PostgreSQL 15 and MariaDB 10.11 with Debezium 3.6.1). A heartbeat
   * record carries the position on; on PostgreSQL it needs an event to carry (pgoutput sends
   * nothing of other tables' transactions), which the heartbeat's query makes.
   */
  private static void heartbeat(
      Map<String, String> connector, List<Finding> out, int postgresVersion) {
    boolean postgres = postgresVersion > 0;
    String interval = value(connector, HEARTBEAT, "0");
    boolean beats = !interval.isEmpty() && !interval.equals("0");
    String query = value(connector, HEARTBEAT_QUERY, "");
    // Before PostgreSQL 15 other tables' transactions reach the connector empty, and a heartbeat
    // alone carries the position on.
    boolean needsQuery = postgresVersion >= POSTGRES_SKIPS_EMPTY_TRANSACTIONS;
    if (postgres && (!beats || (needsQuery && query.isEmpty()))) {
      out.add(new Finding(
          Level.WARNING,
          beats ? HEARTBEAT_QUERY : HEARTBEAT,
          (beats || connector.get(HEARTBEAT) == null ? "not set" : interval)
              + ": while the captured tables do not change, the replication slot keeps every"
              + " byte of WAL the server writes for other tables (the connector confirms a"
              + " position only with an event it reads; from PostgreSQL 15 on, pgoutput sends"
              + " none for other tables' transactions), until the server's disk fills. Set"
              + " \"" + HEARTBEAT + "\": \"10000\" and \"" + HEARTBEAT_QUERY + "\": \"SELECT"
              + " pg_logical_emit_message(false, 'lakestream_heartbeat', now()::varchar)\" (with"
              + " \"message.prefix.exclude.list\": \"lakestream_heartbeat\"), as the shipped"
              + " connector does"));
    } else if (!postgres && !beats) {
      out.add(new Finding(
          Level.WARNING,
          HEARTBEAT,
          (connector.get(HEARTBEAT) == null ? "not set" : interval)
              + ": while the captured tables do not change, the connector's stored binary-log"
              + " position stays at their last change however much the server writes, so a"
              + " restart reads all of that again, and fails once the server has purged it. Set"
              + " \"" + HEARTBEAT + "\": \"10000\", as the shipped connectors do"));
    }
  }

  private static void skippedOperations(Map<String, String> connector, List<Finding> out) {
    String skipped = value(connector, SKIPPED, null);
    Set<String> operations = new TreeSet<>();
    if (skipped == null) {
      operations.add("t"); // Debezium's default
    } else if (!skipped.equals("none")) {
      Arrays.stream(skipped.split(","))
          .map(String::trim)
          .filter(o -> !o.isEmpty())
          .forEach(operations::add);
    }
    List<String> rows = new ArrayList<>();
    for (String op : operations) {
      switch (op) {
        case "c" -> rows.add("inserts");
        case "u" -> rows.add("updates");
        case "d" -> rows.add("deletes");
        default -> {
          // "t" and anything else Debezium may add
        }
      }
    }
    String fix = " Set \"" + SKIPPED + "\": \"none\" (the shipped connectors do)";
    if (!rows.isEmpty()) {
      out.add(new Finding(
          Level.BLOCKER,
          SKIPPED,
          (skipped == null ? "t" : skipped) + ": Debezium publishes no " + String.join(", ", rows)
              + ", so main never equals the source." + fix));
    } else if (operations.contains("t")) {
      out.add(new Finding(
          Level.WARNING,
          SKIPPED,
          (skipped == null ? "not set, so Debezium's default t" : skipped) + ": Debezium"
              + " publishes no TRUNCATE, and main keeps every row a TRUNCATE removes." + fix));
    }
  }

  /**
   * Transforms run on each record before it reaches Kafka: one that flattens the change event
   * leaves ingest nothing to apply, one that filters drops changes.
   */
  private static void transforms(Map<String, String> connector, List<Finding> out) {
    String list = connector.get("transforms");
    if (list == null || list.isBlank()) {
      return;
    }
    for (String alias : list.split(",")) {
      alias = alias.trim();
      if (alias.isEmpty()) {
        continue;
      }
      String type = connector.getOrDefault("transforms." + alias + ".type", "").trim();
      String subject = "transforms." + alias;
      String simpleName = type.substring(type.lastIndexOf('.') + 1).split("\\$")[0];
      if (ENVELOPE_CHANGERS.contains(simpleName)) {
        out.add(new Finding(
            Level.BLOCKER,
            subject,
            type + " reshapes each change event: without Debezium's envelope (op, before, after,"
                + " source) ingest cannot tell a delete, a key's move or a change's position, and"
                + " dead-letters the records. Leave it out of this connector"));
      } else if (simpleName.equals("Filter")) {
        out.add(new Finding(
            Level.WARNING,
            subject,
            type + " drops the records its condition selects: the changes in them never reach"
                + " main, which then differs from the source"));
      } else {
        out.add(new Finding(
            Level.INFO,
            subject,
            type + " changes each record before it reaches Kafka: ingest reads what it leaves"));
      }
    }
  }

  /** Transforms (by class name) that flatten or take apart Debezium's change event envelope. */
  private static final Set<String> ENVELOPE_CHANGERS =
      Set.of("ExtractNewRecordState", "ExtractNewDocumentState", "Flatten", "ExtractField");

  private static String value(Map<String, String> connector, String name, String otherwise) {
    String v = connector.get(name);
    return v == null ? otherwise : v.trim().toLowerCase(Locale.ROOT);
  }
}
