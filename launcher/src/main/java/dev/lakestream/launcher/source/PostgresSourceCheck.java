package dev.lakestream.launcher.source;

import dev.lakestream.launcher.source.Finding.Level;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Checks a PostgreSQL database before the pipeline captures it, as the shipped Debezium connector
 * would: logical decoding, the replication privilege and slots, publications (what they publish
 * beyond the capture, tables created later, partitions, inheritance), and every table the
 * connector captures ({@link PostgresTableCheck}). Reads the catalog only.
 */
public final class PostgresSourceCheck {

  private final Connection connection;
  private final Map<String, String> connector;
  private final PostgresServer server;
  private final CapturedTables captured;

  /** {@code connector}: the connector's configuration (its {@code config} object), or empty. */
  public PostgresSourceCheck(Connection connection, Map<String, String> connector) {
    this.connection = connection;
    this.connector = connector;
    this.server = new PostgresServer(connection, connector);
    this.captured = new CapturedTables(connector);
  }

  public List<Finding> run() throws SQLException {
    List<Finding> out = new ArrayList<>();
    ConverterCheck.check(connector, out);
    CaptureSettingsCheck.checkPostgres(connector, out, server.version());
    logicalDecoding(out);
    privilege(out);
    slots(out);
    Boolean allTables = publications(out);
    tablesCreatedLater(out, allTables);
    publishedBeyondCapture(out, allTables);
    partitioned(out);
    inherited(out);
    int tables = new PostgresTableCheck(connection, connector, server).run(out);
    if (tables == 0) {
      out.add(new Finding(
          Level.WARNING,
          "tables",
          "the connector would capture no table of this database"
              + " (check schema.include.list and table.include.list)"));
    }
    return out;
  }

  private void logicalDecoding(List<Finding> out) throws SQLException {
    String walLevel = server.setting("wal_level");
    out.add(
        "logical".equals(walLevel)
            ? new Finding(Level.OK, "wal_level", "logical")
            : new Finding(
                Level.BLOCKER,
                "wal_level",
                walLevel + ": Debezium needs logical decoding; set wal_level = logical"
                    + " in postgresql.conf and restart the server"));
    int slots = Integer.parseInt(server.setting("max_replication_slots"));
    int senders = Integer.parseInt(server.setting("max_wal_senders"));
    if (slots < 1 || senders < 1) {
      out.add(new Finding(
          Level.BLOCKER,
          "replication",
          "max_replication_slots = " + slots + ", max_wal_senders = " + senders
              + ": the connector needs one of each"));
    }
  }

  private void privilege(List<Finding> out) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT current_user, rolsuper, rolreplication FROM pg_roles WHERE rolname = current_user")) {
      if (rs.next()) {
        String user = rs.getString(1);
        if (rs.getBoolean(2) || rs.getBoolean(3)) {
          out.add(new Finding(
              Level.OK, "user " + user, rs.getBoolean(2) ? "superuser" : "has REPLICATION"));
        } else {
          out.add(new Finding(
              Level.BLOCKER,
              "user " + user,
              "lacks the REPLICATION attribute the connector needs:" + " ALTER ROLE " + user
                  + " REPLICATION"));
        }
      }
    }
  }

  private void slots(List<Finding> out) throws SQLException {
    String slotName = connector.getOrDefault("slot.name", "debezium");
    String plugin = connector.getOrDefault("plugin.name", "decoderbufs");
    boolean found = false;
    boolean walStatus = server.version() >= 130000;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT slot_name, plugin, slot_type, database, active,"
            + " pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), "
            + (walStatus ? "wal_status" : "NULL")
            + " FROM pg_replication_slots ORDER BY slot_name")) {
      while (rs.next()) {
        String name = rs.getString(1);
        String retained = rs.getObject(6) == null
            ? ""
            : ", holds " + (rs.getLong(6) / (1024 * 1024)) + " MiB of WAL";
        String what = rs.getString(3) + " slot of database " + rs.getString(4) + ", plugin "
            + rs.getString(2) + (rs.getBoolean(5) ? ", active" : ", inactive") + retained;
        if (name.equals(slotName)) {
          found = true;
          if (!plugin.equals(rs.getString(2))) {
            out.add(new Finding(
                Level.BLOCKER,
                "slot " + name,
                what + ": the connector's slot.name, but it decodes with " + rs.getString(2)
                    + " where the connector uses " + plugin
                    + "; drop it or choose another slot.name"));
            continue;
          }
          String status = rs.getString(7);
          if ("lost".equals(status)) {
            out.add(new Finding(
                Level.BLOCKER,
                "slot " + name,
                what + ": the connector's slot, invalidated (wal_status lost): the WAL it needed"
                    + " is gone, with the changes in it, and the connector cannot go on from it"
                    + " (Debezium 3.6.1 retries reading it, 900 times 2 s apart)."
                    + " Drop the slot and recover as the README says (\"A lost replication"
                    + " slot\")"));
            continue;
          }
          out.add(new Finding(
              "unreserved".equals(status) ? Level.WARNING : Level.OK,
              "slot " + name,
              what
                  + ("unreserved".equals(status)
                      ? ": the connector's slot, behind by more than max_slot_wal_keep_size: it"
                          + " is invalidated at the next checkpoint unless the connector catches"
                          + " up"
                      : " (the connector's: it resumes from it)")));
        } else {
          out.add(new Finding(
              rs.getBoolean(5) ? Level.INFO : Level.WARNING,
              "slot " + name,
              what
                  + (rs.getBoolean(5)
                      ? ""
                      : ": an inactive slot keeps WAL on disk until it is dropped")));
        }
      }
    }
    if (!found) {
      out.add(new Finding(
          Level.INFO, "slot " + slotName, "does not exist yet; the connector creates it"));
    }
    String keep = walStatus ? server.setting("max_slot_wal_keep_size") : "-1";
    if (!"-1".equals(keep)) {
      out.add(new Finding(
          Level.WARNING,
          "max_slot_wal_keep_size",
          keep + ": a slot that falls further behind (the connector"
              + " stopped or slow that long) is invalidated, and the changes it had not read are"
              + " lost to the pipeline; the connector cannot go on. Keep it -1, or large enough for"
              + " the longest stop you allow (README, \"A lost replication slot\")"));
    }
  }

  /**
   * The publications, with the connector's checked; whether the connector's publishes all tables,
   * or null when it does not exist yet.
   */
  private Boolean publications(List<Finding> out) throws SQLException {
    String wanted = server.publication();
    boolean found = false;
    boolean allTables = false;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery(
            "SELECT p.pubname, p.puballtables, p.pubupdate, p.pubdelete, p.pubtruncate,"
                + " (SELECT count(*) FROM pg_publication_tables t WHERE t.pubname = p.pubname) FROM pg_publication p")) {
      while (rs.next()) {
        String name = rs.getString(1);
        found |= name.equals(wanted);
        allTables |= name.equals(wanted) && rs.getBoolean(2);
        out.add(new Finding(
            Level.INFO,
            "publication " + name,
            (rs.getBoolean(2) ? "all tables" : rs.getLong(6) + " tables")
                + (rs.getBoolean(5) ? ", publishes truncates" : ", does not publish truncates")
                + (name.equals(wanted) ? " (the connector's)" : "")));
      }
    }
    // A publication of all tables has no row filters or column lists.
    if (found && !allTables && server.version() >= 150000) {
      publishedParts(out, wanted);
    }
    if (!found) {
      out.add(new Finding(
          Level.INFO,
          "publication " + wanted,
          "does not exist yet; with publication.autocreate.mode "
              + connector.getOrDefault("publication.autocreate.mode", "all_tables")
              + " the connector creates it"));
    }
    return found ? allTables : null;
  }

  /**
   * Tables the connector does not capture that its publication publishes (all tables, a schema, the
   * partitions of a published root) without a replica identity: PostgreSQL refuses every {@code
   * UPDATE} and {@code DELETE} of such a table once a publication of updates or deletes includes
   * it, so the connector's publication would break the applications that write them. The captured
   * tables are judged one by one below; this is about the others. {@code allTables}: whether the
   * connector's publication is of all tables, null when it does not exist yet (then the connector
   * makes it: of all tables in Debezium's default mode {@code all_tables}, of the captured tables,
   * and so of their partitions, with {@code filtered}).
   */
  private void publishedBeyondCapture(List<Finding> out, Boolean allTables) throws SQLException {
    String wanted = server.publication();
    String mode = connector.getOrDefault("publication.autocreate.mode", "all_tables");
    boolean filtered = "filtered".equalsIgnoreCase(mode);
    // Debezium makes a publication only for pgoutput (its default plugin is decoderbufs).
    boolean makesOne = allTables == null
        && "pgoutput".equalsIgnoreCase(connector.getOrDefault("plugin.name", "decoderbufs"));
    boolean willBeAll = makesOne && "all_tables".equalsIgnoreCase(mode);
    // A partitioned table can be published from PostgreSQL 13 on, its partitions with it.
    boolean willBeCaptured = makesOne && filtered && server.version() >= 130000;
    if (allTables == null && !willBeAll && !willBeCaptured) {
      return; // disabled needs it made beforehand (said above); no_tables publishes none
    }
    boolean partitions = server.version() >= 120000;
    // The table and, for a partition, its ancestors (a publication of a root publishes its leaves).
    String self = partitions
        ? "(SELECT c.oid AS relid UNION SELECT relid FROM pg_partition_ancestors(c.oid))"
        : "(SELECT c.oid AS relid)";
    String published = willBeAll
        ? "true"
        : willBeCaptured
            ? "c.relispartition"
            : "EXISTS (SELECT 1 FROM pg_publication p WHERE p.pubname = ? AND (p.pubupdate OR p.pubdelete)"
                + " AND (p.puballtables OR EXISTS (SELECT 1 FROM " + self + " a"
                + " JOIN pg_class ac ON ac.oid = a.relid JOIN pg_namespace an ON an.oid = ac.relnamespace"
                + " JOIN pg_publication_tables pt ON pt.pubname = p.pubname"
                + " AND pt.schemaname = an.nspname AND pt.tablename = ac.relname)))";
    // The schemas and names of a partition's ancestors, in two arrays of the same order.
    String ancestors = partitions
        ? "(SELECT array_agg(an.nspname ORDER BY a.relid) FROM pg_partition_ancestors(c.oid) a"
            + " JOIN pg_class ac ON ac.oid = a.relid JOIN pg_namespace an ON an.oid = ac.relnamespace"
            + " WHERE a.relid <> c.oid), (SELECT array_agg(ac.relname ORDER BY a.relid)"
            + " FROM pg_partition_ancestors(c.oid) a JOIN pg_class ac ON ac.oid = a.relid"
            + " WHERE a.relid <> c.oid)"
        : "NULL, NULL";
    List<String> refused = new ArrayList<>();
    try (PreparedStatement ps = connection.prepareStatement("SELECT n.nspname, c.relname, "
        + ancestors + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        + " WHERE c.relkind = 'r' AND c.relpersistence = 'p' AND n.nspname NOT LIKE 'pg\\_%'"
        + " AND n.nspname <> 'information_schema'"
        // No replica identity: NOTHING, DEFAULT without a primary key PostgreSQL takes as one, or
        // USING INDEX of an index since dropped (PostgreSQL then acts as for NOTHING).
        + " AND (c.relreplident = 'n' OR (c.relreplident = 'd' AND NOT EXISTS (SELECT 1"
        + " FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary AND i.indimmediate))"
        + " OR (c.relreplident = 'i' AND NOT EXISTS (SELECT 1 FROM pg_index i"
        + " WHERE i.indrelid = c.oid AND i.indisreplident)))"
        + " AND " + published + " ORDER BY 1, 2")) {
      if (!willBeAll && !willBeCaptured) {
        ps.setString(1, wanted);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String schema = rs.getString(1);
          String name = rs.getString(2);
          // A captured table is judged with the captured tables; under filtered, a partition is
          // published when a table above it is captured.
          if (!captured.captures(schema, name)
              && (!willBeCaptured || capturesAny(names(rs, 3), names(rs, 4)))) {
            refused.add(schema + "." + name);
          }
        }
      }
    }
    if (refused.isEmpty()) {
      return;
    }
    int shown = Math.min(refused.size(), 20);
    out.add(new Finding(
        Level.BLOCKER,
        "publication " + wanted,
        (willBeAll
                ? "will be of all tables (publication.autocreate.mode=all_tables makes it so when"
                    + " the connector starts), " + refused.size()
                    + " table(s) the connector does not capture among them"
                : willBeCaptured
                    ? "will publish the captured tables with their partitions"
                        + " (publication.autocreate.mode=filtered), " + refused.size()
                        + " partition(s) the connector does not capture among them"
                    : "publishes " + refused.size() + " table(s) the connector does not capture")
            + " without a replica identity: " + String.join(", ", refused.subList(0, shown))
            + (shown < refused.size() ? ", ... (" + (refused.size() - shown) + " more)" : "")
            + ". " + (allTables == null ? "Once the publication includes them" : "While it does")
            + ", PostgreSQL refuses their UPDATEs and DELETEs"
            + " (\"cannot update table because it does not have a replica identity and publishes"
            + " updates\"), which breaks the applications that write them. "
            + (filtered
                ? "Give each a primary key or REPLICA IDENTITY FULL (a partitioned table's"
                    + " REPLICA IDENTITY does not reach its partitions; with"
                    + " publication.autocreate.mode=filtered the connector sets the publication to"
                    + " the captured tables, and so their partitions, when it starts)"
                : "Publish only the captured tables (\"publication.autocreate.mode\":"
                    + " \"filtered\", as shipped; a publication made beforehand: ALTER PUBLICATION "
                    + wanted + " SET TABLE ...), or give those tables a primary key or REPLICA"
                    + " IDENTITY FULL")));
  }

  /** Whether the connector captures one of the tables {@code schemas[i].names[i]}. */
  private boolean capturesAny(String[] schemas, String[] names) {
    for (int i = 0; i < schemas.length; i++) {
      if (captured.captures(schemas[i], names[i])) {
        return true;
      }
    }
    return false;
  }

  /** The text array in {@code column}, empty when it is null. */
  private static String[] names(ResultSet rs, int column) throws SQLException {
    Array array = rs.getArray(column);
    return array == null ? new String[0] : (String[]) array.getArray();
  }

  /** The function of the shipped event trigger ({@code connectors/postgres-publish-new-tables.sql}). */
  static final String NEW_TABLES_FUNCTION = "lakestream_publish_new_tables";

  private static final Pattern TRIGGER_SETTING =
      Pattern.compile("(publication_name|schema_patterns|table_patterns) text := (NULL|'([^']*)')");

  /**
   * Whether a table created while the connector runs is published. A publication of all tables
   * publishes it, and (PostgreSQL 15+) one of the captured schemas that the connector leaves as it
   * is (with {@code filtered}, Debezium's restart sets the publication to a list of tables, schemas
   * dropped); a publication of listed tables, as {@code publication.autocreate.mode=filtered} makes
   * when the connector starts, publishes it only after the connector restarts, and what is written
   * to it until then never reaches Kafka, unless the shipped event trigger adds it as it is
   * created. The trigger's settings are compared with the connector's. {@code allTables}: whether
   * the connector's publication is of all tables, null when it does not exist yet.
   */
  private void tablesCreatedLater(List<Finding> out, Boolean allTables) throws SQLException {
    String wanted = server.publication();
    String subject = "tables created later";
    String mode = connector.getOrDefault("publication.autocreate.mode", "all_tables");
    boolean filtered = "filtered".equalsIgnoreCase(mode);
    if (Boolean.TRUE.equals(allTables)
        || (allTables == null && "all_tables".equalsIgnoreCase(mode))) {
      out.add(new Finding(
          Level.OK,
          subject,
          "publication " + wanted + " is (or will be made) of all tables: tables created while the"
              + " connector runs are published"));
      return;
    }
    if (allTables == null && !filtered) {
      return; // The connector needs the publication made beforehand: the finding above says so.
    }
    if (allTables != null && !filtered && server.version() >= 150000) {
      Set<String> schemas = new TreeSet<>();
      try (PreparedStatement ps = connection.prepareStatement("SELECT n.nspname FROM"
          + " pg_publication_namespace pn JOIN pg_publication p ON p.oid = pn.pnpubid"
          + " JOIN pg_namespace n ON n.oid = pn.pnnspid WHERE p.pubname = ?")) {
        ps.setString(1, wanted);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            schemas.add(rs.getString(1));
          }
        }
      }
      // The schemas a table created later would be captured in: those the schema lists take in
      // (with a table list, only those holding a captured table now).
      Set<String> uncovered = new TreeSet<>();
      if (connector.get("table.include.list") == null) {
        try (Statement s = connection.createStatement();
            ResultSet rs = s.executeQuery("SELECT nspname FROM pg_namespace"
                + " WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'")) {
          while (rs.next()) {
            if (captured.capturesSchema(rs.getString(1))) {
              uncovered.add(rs.getString(1));
            }
          }
        }
      } else {
        for (String table : capturedTables()) {
          int dot = table.indexOf('.');
          if (dot > 0) {
            uncovered.add(table.substring(0, dot));
          }
        }
      }
      uncovered.removeAll(schemas);
      if (!schemas.isEmpty()) {
        out.add(
            uncovered.isEmpty()
                ? new Finding(
                    Level.OK,
                    subject,
                    "publication " + wanted + " publishes the tables in schema(s) " + schemas
                        + ", tables created in them later included")
                : new Finding(
                    Level.WARNING,
                    subject,
                    "publication " + wanted + " publishes the tables in schema(s) " + schemas
                        + " but not in " + uncovered + ", where the connector captures tables: a"
                        + " table created there while it runs is not published. ALTER PUBLICATION "
                        + wanted + " ADD TABLES IN SCHEMA " + String.join(", ", uncovered)));
        return;
      }
    }
    String source = null;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT p.prosrc FROM pg_event_trigger e"
            + " JOIN pg_proc p ON p.oid = e.evtfoid WHERE e.evtevent = 'ddl_command_end'"
            + " AND e.evtenabled IN ('O', 'A') AND p.proname = '" + NEW_TABLES_FUNCTION + "'")) {
      if (rs.next()) {
        source = rs.getString(1);
      }
    }
    if (source == null) {
      out.add(new Finding(
          Level.WARNING,
          subject,
          "publication " + wanted
              + (allTables == null
                  ? " will list the captured tables (publication.autocreate.mode=filtered makes"
                      + " it so when the connector starts)"
                  : " lists its tables (publication.autocreate.mode=" + mode + ")")
              + ": a table created while the connector runs publishes nothing until the"
              + " connector restarts, and what is written to it until then never reaches main."
              + " Install (or enable) the event trigger of"
              + " connectors/postgres-publish-new-tables.sql, which adds such tables as they are"
              + " created (README, \"Tables created while the connector runs\")"));
      return;
    }
    Map<String, String> settings = new LinkedHashMap<>();
    var matcher = TRIGGER_SETTING.matcher(source);
    while (matcher.find()) {
      settings.put(matcher.group(1), matcher.group(3));
    }
    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("publication_name", wanted);
    expected.put("schema_patterns", connector.getOrDefault("schema.include.list", ".*"));
    expected.put("table_patterns", connector.get("table.include.list"));
    if (settings.equals(expected)) {
      out.add(new Finding(
          Level.OK,
          subject,
          "the event trigger of connectors/postgres-publish-new-tables.sql adds them to"
              + " publication " + wanted + " as they are created"));
    } else {
      out.add(new Finding(
          Level.WARNING,
          subject,
          "the event trigger of connectors/postgres-publish-new-tables.sql has " + settings
              + " where the connector has " + expected
              + ": edit the settings in the file and run it again"));
    }
  }

  /**
   * Partitioned tables the connector captures. PostgreSQL publishes the changes of a partitioned
   * table's rows as changes of its partitions unless the publication says {@code
   * publish_via_partition_root}, while the snapshot reads the partitioned table itself; and the
   * snapshot reads each captured partition into a topic of its own, which no change follows.
   */
  private void partitioned(List<Finding> out) throws SQLException {
    boolean viaRoot =
        Boolean.parseBoolean(connector.getOrDefault("publish.via.partition.root", "false"));
    boolean any = false;
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT n.nspname, c.relname,"
            + " (SELECT string_agg(ln.nspname || '.' || l.relname, ',' ORDER BY l.relname)"
            + " FROM pg_partition_tree(c.oid) t JOIN pg_class l ON l.oid = t.relid"
            + " JOIN pg_namespace ln ON ln.oid = l.relnamespace WHERE t.relid <> c.oid)"
            + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " WHERE c.relkind = 'p' AND NOT c.relispartition ORDER BY 1, 2")) {
      while (rs.next()) {
        String schema = rs.getString(1);
        String name = rs.getString(2);
        if (!captured.captures(schema, name)) {
          continue;
        }
        any = true;
        String table = schema + "." + name;
        if (!viaRoot) {
          out.add(new Finding(
              Level.BLOCKER,
              table,
              "a partitioned table, and the connector has publish.via.partition.root=false:"
                  + " PostgreSQL publishes its rows' changes as changes of its partitions, while the"
                  + " snapshot reads " + table + ", so its table would keep the snapshot's rows and"
                  + " never change. Set publish.via.partition.root=true (the shipped connector"
                  + " does)"));
          continue;
        }
        List<String> partitions = new ArrayList<>();
        if (rs.getString(3) != null) {
          for (String partition : rs.getString(3).split(",")) {
            int dot = partition.indexOf('.');
            if (captured.captures(partition.substring(0, dot), partition.substring(dot + 1))) {
              partitions.add(partition);
            }
          }
        }
        if (partitions.isEmpty()) {
          out.add(new Finding(
              Level.OK,
              table,
              "partitioned, published through it, its partitions left out; an ATTACH, DETACH,"
                  + " DROP or TRUNCATE of a partition publishes no change, so main lacks or keeps"
                  + " its rows (README, \"Partitioned tables\")"));
        } else {
          out.add(new Finding(
              Level.WARNING,
              table,
              "partitioned, and its partition(s) " + partitions + " are captured too: the"
                  + " snapshot reads each into a topic of its own, which no change follows, and"
                  + " ingest makes a table of each that keeps the snapshot's rows. Leave them out:"
                  + " \"table.exclude.list\": \"" + exclusion(partitions) + "\""));
        }
      }
    }
    if (any && viaRoot) {
      String publication = server.publication();
      try (PreparedStatement ps =
          connection.prepareStatement("SELECT pubviaroot FROM pg_publication WHERE pubname = ?")) {
        ps.setString(1, publication);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && !rs.getBoolean(1)) {
            out.add(new Finding(
                Level.WARNING,
                "publication " + publication,
                "was created without publish_via_partition_root (the connector sets it when it"
                    + " creates the publication): ALTER PUBLICATION " + publication
                    + " SET (publish_via_partition_root = true)"));
          }
        }
      }
    }
  }

  /**
   * Captured tables the connector's publication publishes in part (PostgreSQL 15+): a row filter,
   * where the snapshot reads every row but the changes of rows outside it never come, so its table
   * would keep those as the snapshot found them; a column list, where every change carries only
   * the listed columns, so the others would hold null in each row changed after the snapshot.
   */
  private void publishedParts(List<Finding> out, String publication) throws SQLException {
    if ("filtered".equalsIgnoreCase(connector.get("publication.autocreate.mode"))
        && !publishedTables(publication).equals(capturedTables())) {
      // Debezium sets the publication's tables to the captured ones when they differ: a plain
      // list, without row filters or column lists.
      out.add(new Finding(
          Level.INFO,
          "publication " + publication,
          "its tables differ from the captured ones, so the connector (publication.autocreate.mode"
              + "=filtered) sets them when it starts, without row filters or column lists"));
      return;
    }
    try (PreparedStatement ps = connection.prepareStatement("SELECT n.nspname, c.relname,"
        + " pg_get_expr(r.prqual, r.prrelid),"
        + " quote_ident(n.nspname) || '.' || quote_ident(c.relname),"
        + " (SELECT string_agg(a.attname, ', ' ORDER BY a.attnum) FROM pg_attribute a"
        + " WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped"
        + " AND NOT a.attnum = ANY(r.prattrs::int2[]))"
        + " FROM pg_publication p JOIN pg_publication_rel r ON r.prpubid = p.oid"
        + " JOIN pg_class c ON c.oid = r.prrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
        + " WHERE p.pubname = ? AND (r.prqual IS NOT NULL OR r.prattrs IS NOT NULL)"
        + " ORDER BY 1, 2")) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String schema = rs.getString(1);
          String name = rs.getString(2);
          if (!captured.captures(schema, name)) {
            continue;
          }
          String table = schema + "." + name;
          String filter = rs.getString(3);
          if (filter != null) {
            rowFilter(out, table, rs.getString(4), filter);
          }
          List<String> unpublished = new ArrayList<>();
          if (rs.getString(5) != null) {
            for (String column : rs.getString(5).split(", ")) {
              if (!captured.leavesOut(schema, name, column)) {
                unpublished.add(column);
              }
            }
          }
          if (!unpublished.isEmpty()) {
            out.add(new Finding(
                Level.BLOCKER,
                table,
                "publication " + publication + " publishes it with a column list that leaves out "
                    + unpublished + ": every change carries only the listed columns, so these"
                    + " would hold null in each row changed after the snapshot. Leave them out of"
                    + " the connector's events: \"column.exclude.list\": \""
                    + exclusion(unpublished.stream().map(c -> table + "." + c).toList()) + "\""));
          }
        }
      }
    }
  }

  /**
   * Whether the connector's snapshot reads {@code table} with a statement of its own ({@code
   * snapshot.select.statement.overrides}) that holds {@code word}.
   */
  private boolean snapshotSelectSays(String table, String word) {
    String select = connector.get("snapshot.select.statement.overrides." + table);
    return select != null
        && Arrays.stream(connector
                .getOrDefault("snapshot.select.statement.overrides", "")
                .split(","))
            .map(String::trim)
            .anyMatch(table::equals)
        && Pattern.compile("\\b" + word + "\\b", Pattern.CASE_INSENSITIVE)
            .matcher(select)
            .find();
  }

  /** The tables {@code publication} lists, as {@code schema.table}. */
  private Set<String> publishedTables(String publication) throws SQLException {
    Set<String> tables = new HashSet<>();
    // As Debezium reads it: schemas expanded, partitions as their root where the publication says.
    try (PreparedStatement ps = connection.prepareStatement(
        "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = ?")) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          tables.add(rs.getString(1) + "." + rs.getString(2));
        }
      }
    }
    return tables;
  }

  /** The tables (and partitioned tables) the connector captures, as {@code schema.table}. */
  private Set<String> capturedTables() throws SQLException {
    Set<String> tables = new HashSet<>();
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT n.nspname, c.relname FROM pg_class c"
            + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p')"
            + " AND c.relpersistence = 'p'")) {
      while (rs.next()) {
        if (captured.captures(rs.getString(1), rs.getString(2))) {
          tables.add(rs.getString(1) + "." + rs.getString(2));
        }
      }
    }
    // Debezium captures its signal table too.
    String signal = connector.get("signal.data.collection");
    if (signal != null && !signal.isBlank()) {
      tables.add(signal.trim());
    }
    return tables;
  }

  /**
   * A table published with a row filter is fine when the snapshot reads the same rows ({@code
   * snapshot.select.statement.overrides} with a WHERE); a change that moves a row out of the filter
   * is published as its delete.
   */
  private void rowFilter(List<Finding> out, String table, String sql, String filter) {
    boolean overridden = snapshotSelectSays(table, "WHERE");
    String incremental = "for an incremental snapshot of it, add to the signal's data"
        + " \"additional-conditions\": [{\"data-collection\": \"" + json(table)
        + "\", \"filter\": \"" + json(filter) + "\"}]";
    if (overridden) {
      out.add(new Finding(
          Level.INFO,
          table,
          "published with a row filter, " + filter + "; the snapshot reads with a WHERE of its"
              + " own (check that it is the same filter); " + incremental));
    } else {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "published with a row filter, " + filter + ": the snapshot reads every row, and the"
              + " changes of rows outside the filter never come, so its table would keep them as"
              + " the snapshot found them. Have the snapshot read the same rows:"
              + " \"snapshot.select.statement.overrides\": \"" + json(table) + "\","
              + " \"snapshot.select.statement.overrides." + json(table) + "\": \"SELECT * FROM "
              + json(sql) + " WHERE " + json(filter) + "\"; " + incremental));
    }
  }

  /**
   * Captured tables that other tables inherit from ({@code INHERITS}, not partitioning): a snapshot
   * ({@code SELECT * FROM parent}) reads the children's rows too, whose changes PostgreSQL publishes
   * as the children's, so the parent's table would keep them as they were. Fine when the snapshot
   * reads {@code ONLY} the parent ({@code snapshot.select.statement.overrides}).
   */
  private void inherited(List<Finding> out) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT n.nspname, c.relname,"
            + " string_agg(cn.nspname || '.' || ch.relname, ', ' ORDER BY cn.nspname, ch.relname),"
            + " quote_ident(n.nspname) || '.' || quote_ident(c.relname)"
            + " FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent"
            + " JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " JOIN pg_class ch ON ch.oid = i.inhrelid"
            + " JOIN pg_namespace cn ON cn.oid = ch.relnamespace"
            + " WHERE c.relkind = 'r' GROUP BY 1, 2 ORDER BY 1, 2")) {
      while (rs.next()) {
        String schema = rs.getString(1);
        String name = rs.getString(2);
        if (!captured.captures(schema, name)) {
          continue;
        }
        String table = schema + "." + name;
        String sql = rs.getString(4);
        String select = connector.get("snapshot.select.statement.overrides." + table);
        String incremental = "for an incremental snapshot of it, add to the signal's data"
            + " \"additional-conditions\": [{\"data-collection\": \"" + json(table)
            + "\", \"filter\": \"tableoid = '" + json(sql.replace("'", "''")) + "'::regclass\"}]";
        if (snapshotSelectSays(table, "ONLY")) {
          out.add(new Finding(
              Level.INFO,
              table,
              "inherited by " + rs.getString(3) + "; the snapshot reads only its own rows; "
                  + incremental));
        } else {
          out.add(new Finding(
              Level.BLOCKER,
              table,
              "inherited by " + rs.getString(3) + ": a snapshot of it (SELECT * FROM " + sql
                  + ") reads their rows too, while PostgreSQL publishes their changes as theirs,"
                  + " so its table would keep those rows as the snapshot found them. Have the"
                  + " snapshot read its own rows only: \"snapshot.select.statement.overrides\": \""
                  + json(table) + "\", \"snapshot.select.statement.overrides." + json(table)
                  + "\": \"SELECT * FROM ONLY " + json(sql) + "\"; " + incremental));
        }
      }
    }
  }

  /** {@code text} escaped for a JSON string. */
  private static String json(String text) {
    return text.replace("\\", "\\\\")
        .replace("\"", "\\\"")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t");
  }

  /**
   * A {@code table.exclude.list} pattern of exactly {@code tables} ({@code schema.table}), or a
   * {@code column.exclude.list} one of columns ({@code schema.table.column}), as JSON text.
   */
  static String exclusion(List<String> tables) {
    return String.join(",", tables.stream().map(PostgresSourceCheck::pattern).toList());
  }

  /**
   * A regular expression that matches exactly {@code name} (its dots, and any other character
   * special to a regular expression, escaped), as JSON string text.
   */
  static String pattern(String name) {
    StringBuilder regex = new StringBuilder();
    for (char c : name.toCharArray()) {
      if ("\\.[]{}()*+-?^$|,".indexOf(c) >= 0) {
        regex.append('\\');
      }
      regex.append(c);
    }
    return regex.toString().replace("\\", "\\\\").replace("\"", "\\\"");
  }
}
