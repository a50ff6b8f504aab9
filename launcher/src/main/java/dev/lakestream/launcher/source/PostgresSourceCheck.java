package dev.lakestream.launcher.source;

import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.launcher.source.Finding.Level;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Checks a PostgreSQL database before the pipeline captures it, as the shipped Debezium connector
 * would: logical decoding, the replication privilege and slots, publications, and for every table
 * the connector captures its key, its replica identity, column types the pipeline cannot map, and
 * columns whose values PostgreSQL may leave out of updates (TOAST). Reads the catalog only.
 */
public final class PostgresSourceCheck {

  /**
   * Base types whose columns Iceberg takes as no key (floating point; Debezium's struct types),
   * besides arrays and composite types ({@code hstore} is a JSON string with the default {@code
   * hstore.handling.mode}).
   */
  private static final Set<String> NO_KEY_TYPES =
      Set.of("float4", "float8", "point", "geometry", "geography");

  /** Base types Debezium sends as doubles with {@code decimal.handling.mode=double}. */
  private static final Set<String> DECIMAL_TYPES = Set.of("numeric", "money");

  /** The base types Debezium's Postgres connector maps to a Connect type (arrays of them too). */
  private static final Set<String> MAPPED = Set.of(
      "int2",
      "int4",
      "int8",
      "float4",
      "float8",
      "numeric",
      "money",
      "bpchar",
      "varchar",
      "text",
      "char",
      "name",
      "citext",
      "bytea",
      "bool",
      "date",
      "time",
      "timetz",
      "timestamp",
      "timestamptz",
      "interval",
      "uuid",
      "json",
      "jsonb",
      "xml",
      "inet",
      "cidr",
      "macaddr",
      "macaddr8",
      "bit",
      "varbit",
      "int4range",
      "int8range",
      "numrange",
      "tsrange",
      "tstzrange",
      "daterange",
      "point",
      "hstore",
      "tsvector",
      "ltree",
      "oid",
      "geometry",
      "geography",
      // pgvector's, as lists of doubles or floats and a struct (read from Debezium's converters;
      // not tested here: no pgvector on these machines).
      "vector",
      "halfvec",
      "sparsevec");
  /** Types Debezium's connector knows but leaves out of its events. */
  private static final Set<String> LEFT_OUT =
      Set.of("box", "circle", "line", "lseg", "path", "polygon");

  /**
   * Element types whose arrays Debezium's connector (3.6.1, pgoutput) leaves out of its events,
   * though it maps the type itself.
   */
  private static final Set<String> ARRAYS_LEFT_OUT =
      Set.of("name", "interval", "money", "xml", "varbit", "point");

  /** Types Debezium's connector (3.6.1, pgoutput) sends every value of as an empty list. */
  private static final Set<String> VECTORS_EMPTIED = Set.of("int2vector", "oidvector");

  /**
   * A column's type as the catalog declares it: {@code format} as PostgreSQL prints it, {@code base}
   * the element type of an array or the base type of a domain (else the type), {@code kind} its
   * {@code typtype}, {@code name} the column's own type's name, {@code dimensions} as declared
   * ({@code int[][]} has 2; PostgreSQL does not hold values to it), {@code notNull} whether the
   * column is NOT NULL (a null Debezium makes of a value then fails the connector's task).
   */
  private record Declared(
      String format,
      String base,
      char kind,
      int typmod,
      boolean array,
      String name,
      int dimensions,
      boolean notNull) {}

  private final Connection connection;
  private final Map<String, String> connector;
  private final CapturedTables captured;
  private final ReselectedColumns reselected;
  private final boolean decimalsAsDoubles;
  /** Whether the connector sends numerics as decimals, which hold no NaN (Debezium's default). */
  private final boolean decimalsPrecise;
  /** PostgreSQL's words a column name must be quoted as, read once. */
  private Set<String> reservedWords;

  private int version;

  /** {@code connector}: the connector's configuration (its {@code config} object), or empty. */
  public PostgresSourceCheck(Connection connection, Map<String, String> connector) {
    this.connection = connection;
    this.connector = connector;
    this.captured = new CapturedTables(connector);
    this.reselected = new ReselectedColumns(connector);
    this.decimalsAsDoubles = ConverterCheck.decimalsAsDoubles(connector);
    this.decimalsPrecise = ConverterCheck.decimalsPrecise(connector);
  }

  public List<Finding> run() throws SQLException {
    List<Finding> out = new ArrayList<>();
    ConverterCheck.check(connector, out);
    CaptureSettingsCheck.checkPostgres(connector, out, version());
    logicalDecoding(out);
    privilege(out);
    slots(out);
    Boolean allTables = publications(out);
    tablesCreatedLater(out, allTables);
    publishedBeyondCapture(out, allTables);
    partitioned(out);
    inherited(out);
    int tables = tables(out);
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
    String walLevel = setting("wal_level");
    out.add(
        "logical".equals(walLevel)
            ? new Finding(Level.OK, "wal_level", "logical")
            : new Finding(
                Level.BLOCKER,
                "wal_level",
                walLevel + ": Debezium needs logical decoding; set wal_level = logical"
                    + " in postgresql.conf and restart the server"));
    int slots = Integer.parseInt(setting("max_replication_slots"));
    int senders = Integer.parseInt(setting("max_wal_senders"));
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
    boolean walStatus = version() >= 130000;
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
    String keep = walStatus ? setting("max_slot_wal_keep_size") : "-1";
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
    String wanted = publication();
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
    if (found && !allTables && version() >= 150000) {
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
    String wanted = publication();
    String mode = connector.getOrDefault("publication.autocreate.mode", "all_tables");
    boolean filtered = "filtered".equalsIgnoreCase(mode);
    // Debezium makes a publication only for pgoutput (its default plugin is decoderbufs).
    boolean makesOne = allTables == null
        && "pgoutput".equalsIgnoreCase(connector.getOrDefault("plugin.name", "decoderbufs"));
    boolean willBeAll = makesOne && "all_tables".equalsIgnoreCase(mode);
    // A partitioned table can be published from PostgreSQL 13 on, its partitions with it.
    boolean willBeCaptured = makesOne && filtered && version() >= 130000;
    if (allTables == null && !willBeAll && !willBeCaptured) {
      return; // disabled needs it made beforehand (said above); no_tables publishes none
    }
    boolean partitions = version() >= 120000;
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
    String wanted = publication();
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
    if (allTables != null && !filtered && version() >= 150000) {
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
      String publication = publication();
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

  /**
   * The record key's columns must be in what PostgreSQL sends of a deleted or key-changed row (its
   * replica identity: the primary key, or the index of {@code USING INDEX}): Debezium fills the
   * others with zeros (seen with 3.6.1), so a DELETE would reach Kafka as the delete of another
   * key (0) and leave its row, and an UPDATE of the key would leave the old row.
   */
  private static void keyOutsideIdentity(
      List<Finding> out, String table, Relation relation, char kind, List<String> key) {
    List<String> identity = kind == 'd' ? relation.primaryKeyColumns() : relation.identityColumns();
    List<String> outside = key.stream().filter(c -> !identity.contains(c)).toList();
    if (outside.isEmpty()) {
      return;
    }
    String sent = kind == 'd'
        ? "REPLICA IDENTITY DEFAULT: of a deleted or key-changed row PostgreSQL sends its primary"
            + " key " + identity
        : "REPLICA IDENTITY USING INDEX " + relation.identityIndex() + ": of a deleted or"
            + " key-changed row PostgreSQL sends " + identity;
    out.add(new Finding(
        Level.BLOCKER,
        table,
        sent + ", not the record key's " + outside + ", which Debezium then fills with zeros: a"
            + " DELETE reaches Kafka as the delete of another key and its row stays, an UPDATE of"
            + " the key leaves the old row. "
            + (kind == 'i' && relation.primaryKey()
                ? "ALTER TABLE " + table + " REPLICA IDENTITY DEFAULT (its primary key), or"
                    + " make the index's columns the key: \"message.key.columns\": \""
                    + pattern(table) + ":" + String.join(",", identity) + "\""
                : "Make the key the replica identity's columns (\"message.key.columns\": \""
                    + pattern(table) + ":" + String.join(",", identity) + "\"), or ALTER TABLE "
                    + table + " REPLICA IDENTITY FULL")));
  }

  /** The {@code relreplident} code of a {@code replica.identity.autoset.values} identity. */
  private static char identityCode(String identity) {
    if (identity.startsWith("INDEX")) {
      return 'i';
    }
    return switch (identity) {
      case "FULL" -> 'f';
      case "NOTHING" -> 'n';
      default -> 'd';
    };
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
  private static String exclusion(List<String> tables) {
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

  /** A captured table as the catalog describes it. */
  private record Relation(
      long oid,
      String schema,
      String name,
      char identity,
      boolean primaryKey,
      boolean deferrableKey,
      boolean unlogged,
      List<String> primaryKeyColumns,
      String identityIndex,
      List<String> identityColumns,
      boolean connectorCanAlter) {}

  private static List<String> columns(String commaSeparated) {
    return commaSeparated == null ? List.of() : List.of(commaSeparated.split(","));
  }

  /** Checks every captured table; returns how many there are. */
  private int tables(List<Finding> out) throws SQLException {
    List<Relation> tables = new ArrayList<>();
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SELECT c.oid, n.nspname, c.relname, c.relreplident,"
            + " EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary),"
            + " EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary"
            + " AND NOT i.indimmediate), c.relpersistence = 'u',"
            // What replica.identity.autoset.values needs: the connector's user (the one this check
            // runs as) owns the table, and Debezium's unquoted ALTER TABLE names it.
            + " pg_has_role(c.relowner, 'USAGE') AND quote_ident(n.nspname) = n.nspname"
            + " AND quote_ident(c.relname) = c.relname,"
            + " (SELECT string_agg(a.attname, ',' ORDER BY array_position(i.indkey::int2[], a.attnum))"
            + " FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
            + " AND a.attnum = ANY((i.indkey::int2[])[0:i.indnkeyatts - 1])"
            + " WHERE i.indrelid = c.oid AND i.indisprimary),"
            + " (SELECT ic.relname FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid"
            + " WHERE i.indrelid = c.oid AND i.indisreplident),"
            + " (SELECT string_agg(a.attname, ',' ORDER BY array_position(i.indkey::int2[], a.attnum))"
            + " FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
            + " AND a.attnum = ANY((i.indkey::int2[])[0:i.indnkeyatts - 1])"
            + " WHERE i.indrelid = c.oid AND i.indisreplident)"
            + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " WHERE c.relkind IN ('r', 'p') AND n.nspname NOT LIKE 'pg\\_%'"
            + " AND n.nspname <> 'information_schema'"
            + " ORDER BY n.nspname, c.relname")) {
      while (rs.next()) {
        if (captured.captures(rs.getString(2), rs.getString(3))) {
          tables.add(new Relation(
              rs.getLong(1),
              rs.getString(2),
              rs.getString(3),
              rs.getString(4).charAt(0),
              rs.getBoolean(5),
              rs.getBoolean(6),
              rs.getBoolean(7),
              columns(rs.getString(9)),
              rs.getString(10),
              columns(rs.getString(11)),
              rs.getBoolean(8)));
        }
      }
    }
    TableNames.check(
        tables.stream().map(t -> new SourceTable(t.schema(), t.name())).toList(), out);
    Map<String, List<String>> formatted = new HashMap<>();
    for (Relation t : tables) {
      table(out, t, formatted);
    }
    SessionFormatCheck.check(connection, formatted, out);
    return tables.size();
  }

  /**
   * Checks one captured table; adds its captured columns whose text form depends on the session
   * ({@link SessionFormatCheck#TYPES}) to {@code formatted}, by type.
   */
  private void table(List<Finding> out, Relation relation, Map<String, List<String>> formatted)
      throws SQLException {
    long oid = relation.oid();
    String schema = relation.schema();
    String name = relation.name();
    String table = schema + "." + name;
    // The connector sets the replica identity it is told to when it starts.
    Optional<String> autoset = captured.autosetIdentity(schema, name);
    if (autoset.isPresent() && !relation.connectorCanAlter()) {
      out.add(new Finding(
          Level.WARNING,
          table,
          "replica.identity.autoset.values says REPLICA IDENTITY " + autoset.get() + ", which the"
              + " connector cannot set (its user does not own the table, or the name needs"
              + " quoting, which Debezium's ALTER TABLE does not do): it logs the error and goes"
              + " on; the findings below are for the identity the table has now"));
      autoset = Optional.empty();
    }
    char identity = autoset.map(PostgresSourceCheck::identityCode).orElse(relation.identity());
    boolean primaryKey = relation.primaryKey();
    boolean deferrableKey = relation.deferrableKey();
    int before = out.size();
    // Whether an identity finding above already says what to change (the key is not judged then).
    boolean identityReported = true;
    if (relation.unlogged()) {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "UNLOGGED: PostgreSQL writes no WAL for it and publishes none of its changes; the"
              + " connector cannot add it to a publication of listed tables (\"cannot add relation"
              + " to publication\": it stops), and a snapshot would leave its table never changing"
              + " after. Leave it out (\"table.exclude.list\": \"" + pattern(table) + "\"), or"
              + " ALTER TABLE " + table + " SET LOGGED"));
    }
    if (!primaryKey && (identity == 'd' || identity == 'n')) {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "no primary key and REPLICA IDENTITY "
              + (identity == 'd' ? "DEFAULT" : "NOTHING")
              + ": once the connector's publication includes it, PostgreSQL"
              + " refuses its UPDATEs and DELETEs (\"cannot update table because it does not have a replica identity and"
              + " publishes updates\"), which breaks the application that writes it. Add a primary key, or"
              + " ALTER TABLE " + table
              + " REPLICA IDENTITY FULL and name its key columns in message.key.columns"));
    } else if (identity == 'n') {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "REPLICA IDENTITY NOTHING: once the connector's publication includes it, PostgreSQL"
              + " refuses its UPDATEs and DELETEs. ALTER TABLE " + table
              // PostgreSQL does not take a deferrable key as the replica identity.
              + (deferrableKey ? " REPLICA IDENTITY FULL" : " REPLICA IDENTITY DEFAULT")));
    } else if (identity == 'i' && autoset.isEmpty() && relation.identityIndex() == null) {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "REPLICA IDENTITY USING INDEX of an index since dropped, which PostgreSQL takes as"
              + " NOTHING: once the connector's publication includes it, PostgreSQL refuses its"
              + " UPDATEs and DELETEs. ALTER TABLE " + table
              + (primaryKey && !deferrableKey
                  ? " REPLICA IDENTITY DEFAULT"
                  : " REPLICA IDENTITY FULL (or USING INDEX of another unique index)")));
    } else if (deferrableKey && identity == 'd') {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "its primary key is DEFERRABLE, which PostgreSQL does not take as the replica identity:"
              + " once the connector's publication includes it, PostgreSQL refuses its UPDATEs and"
              + " DELETEs (\"cannot update table because it does not have a replica identity and"
              + " publishes updates\"). ALTER TABLE " + table + " REPLICA IDENTITY FULL"));
    } else {
      identityReported = false;
    }
    if (deferrableKey) {
      out.add(new Finding(
          Level.WARNING,
          table,
          "its primary key is DEFERRABLE: one statement may move rows through each other's keys"
              + " (UPDATE ... SET id = id + 1), and Debezium then publishes the delete of a key after"
              + " the insert of the row that took it, so the table loses those rows (ten rows"
              + " shifted by one leave one). With REPLICA IDENTITY FULL, list it in ingest's"
              + " ingest.deferrable.key.tables (" + table
              + "): ingest then applies such a delete to"
              + " the row it names, but still loses rows equal in every column but the key, a row"
              + " moved into a key and out again before an INITIALLY DEFERRED key is checked, a"
              + " row whose two changes a restart of ingest fell between, and the rest of a"
              + " transaction after one of its changes was dead-lettered (README, \"Keys: one"
              + " key, one live row\"). After such a statement, snapshot the table again (README,"
              + " \"When main differs from the source\"), or make the key NOT DEFERRABLE"));
    }
    List<String> toasted = new ArrayList<>();
    Set<String> reserved = reservedWords();
    // Debezium's reselect post-processor finds a row by its primary key (or the record's key),
    // writing the key's names unquoted.
    Predicate<String> queryable =
        c -> !captured.leavesOut(schema, name, c) && unquoted(c, reserved);
    List<String> reselectKey = primaryKey ? relation.primaryKeyColumns() : List.of();
    List<String> eventKey =
        captured.messageKeyColumns(schema, name).orElse(relation.primaryKeyColumns());
    boolean canReselect = !reselectKey.isEmpty() && reselectKey.stream().allMatch(queryable);
    List<String> nulled = new ArrayList<>();
    List<String> nulledColumns = new ArrayList<>();
    List<String> nulledNotNull = new ArrayList<>();
    List<String> generated = new ArrayList<>();
    List<String> columns = new ArrayList<>();
    List<String> capturedColumns = new ArrayList<>();
    Map<String, String> unkeyable = new LinkedHashMap<>();
    List<String> nanStops = new ArrayList<>();
    List<String> nanRuledOut = new ArrayList<>();
    boolean virtual = false;
    String typmodSql =
        "CASE WHEN t.typtype = 'd' AND a.atttypmod < 0 THEN t.typtypmod ELSE a.atttypmod END";
    try (PreparedStatement ps = connection.prepareStatement(
        // The element type of an array, the base type of a domain, else the type itself.
        "SELECT a.attname, coalesce(et.typname, bt.typname, t.typname), coalesce(et.typtype, bt.typtype, t.typtype),"
            // A domain's modifier is its own (numeric(10,2)); its NOT NULL binds the column too.
            + " format_type(a.atttypid, a.atttypmod),"
            + " " + typmodSql + ","
            + " a.attstorage, t.typlen, "
            + (version() >= 120000 ? "a.attgenerated" : "''")
            + ", t.typname, a.attndims, a.attnotnull OR (t.typtype = 'd' AND t.typnotnull)"
            // A validated CHECK of the column alone, or of its domain, that names NaN (and the
            // infinities, where the type holds them), as README's remedy does.
            + ", EXISTS (SELECT 1 FROM pg_constraint c WHERE c.contype = 'c' AND c.convalidated"
            + " AND ((c.conrelid = a.attrelid AND c.conkey = ARRAY[a.attnum])"
            + " OR c.contypid = a.atttypid)"
            + " AND pg_get_constraintdef(c.oid) ~* '[[:<:]]nan[[:>:]]'"
            + (version() >= 140000
                ? " AND (" + typmodSql + " >= 4 AND t.typcategory <> 'A'"
                    + " OR pg_get_constraintdef(c.oid) ~* '[[:<:]]infinity[[:>:]]')"
                : "")
            + ")"
            + " FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid"
            + " LEFT JOIN pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'"
            + " LEFT JOIN pg_type bt ON bt.oid = t.typbasetype"
            + " WHERE a.attrelid = ? AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum")) {
      ps.setLong(1, oid);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String column = rs.getString(1);
          columns.add(column);
          String type = rs.getString(4);
          String kind = rs.getString(8);
          if (("s".equals(kind) || "v".equals(kind)) && !captured.leavesOut(schema, name, column)) {
            generated.add(column);
            virtual |= "v".equals(kind);
          }
          boolean array = type.endsWith("[]");
          if (array
              || NO_KEY_TYPES.contains(rs.getString(2))
              || "c".equals(rs.getString(3))
              || (decimalsAsDoubles && DECIMAL_TYPES.contains(rs.getString(2)))) {
            unkeyable.put(column, type);
          }
          if (captured.leavesOut(schema, name, column)) {
            continue; // not in the connector's events
          }
          capturedColumns.add(column);
          boolean notNull = rs.getBoolean(11);
          // Arrays: of money and interval Debezium sends none, and pgjdbc reads bytea[] in either
          // form.
          if (SessionFormatCheck.TYPES.contains(rs.getString(2)) && !array) {
            formatted
                .computeIfAbsent(rs.getString(2), k -> new ArrayList<>())
                .add(table + "." + column);
          }
          if (decimalsPrecise
              && "numeric".equals(rs.getString(2))
              && notNull
              && !rs.getBoolean(12)) {
            nanStops.add(column);
            // Numeric holds infinities from PostgreSQL 14 on, but not with a precision (arrays:
            // one rule for all elements).
            boolean infinities = version() >= 140000 && (array || rs.getInt(5) < 4);
            nanRuledOut.add(notNan(column, infinities, array, reserved));
          }
          boolean reselects =
              reselected.reselectsNull(schema, name, column, reselectKey, eventKey, queryable);
          column(
              out,
              relation,
              column,
              new Declared(
                  type,
                  rs.getString(2),
                  rs.getString(3).charAt(0),
                  rs.getInt(5),
                  array,
                  rs.getString(9),
                  rs.getInt(10),
                  notNull),
              reselects,
              canReselect);
          if ("interval".equals(rs.getString(2)) && !array && intervalsAsNumbers()) {
            out.add(new Finding(
                Level.WARNING,
                table + "." + column,
                type + " with the connector's interval.handling.mode=numeric (Debezium's default"
                    + " when it is not set): Debezium sends microseconds, counting a month as"
                    + " 30.4375 days, so '1 mon' and '30 days 10:30:00' reach the table as the same"
                    + " number and the source's value cannot be told back. Set it to string (the"
                    + " shipped connector does): the table then holds the ISO-8601 text"));
          }
          if (toastable(
              rs.getString(2), rs.getInt(5), rs.getString(6).charAt(0), rs.getInt(7), array)) {
            if (array
                ? ARRAY_PLACEHOLDERS.contains(rs.getString(2))
                : !NO_PLACEHOLDER.contains(rs.getString(2))) {
              toasted.add(column);
            } else if (notNull) {
              // Debezium's null fails a NOT NULL column's schema before any post-processor runs
              // (of the arrays it sends at all; bit arrays are null always, reported as such).
              if (!array || sentArray(rs.getString(2), rs.getString(3).charAt(0))) {
                nulledNotNull.add(column + " " + type);
              }
            } else if (!reselects) {
              nulled.add(column + " " + type);
              nulledColumns.add(column);
            }
          }
        }
      }
    }
    // Debezium picks key columns among all of the table's, left out of its events or not.
    Optional<List<String>> key = captured.keyColumns(schema, name, columns);
    if (!identityReported && !primaryKey && key.isEmpty()) {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "no primary key: its changes reach Kafka without a key and ingest"
              + " refuses them; name its key columns in the connector's message.key.columns"
              + (identity == 'i' && autoset.isEmpty()
                  ? " (the columns of its replica identity index: \"" + pattern(table) + ":"
                      + String.join(",", relation.identityColumns()) + "\")"
                  : "")));
    } else if (!identityReported && (identity == 'd' || (identity == 'i' && autoset.isEmpty()))) {
      // An identity index the connector sets is not looked up: its key is not checked.
      keyOutsideIdentity(out, table, relation, identity, key.orElse(relation.primaryKeyColumns()));
    }
    captured
        .maskedKey(schema, name, key.orElse(relation.primaryKeyColumns()), table)
        .ifPresent(out::add);
    List<String> badKey = key.orElse(relation.primaryKeyColumns()).stream()
        .filter(unkeyable::containsKey)
        .map(c -> c + " " + unkeyable.get(c))
        .toList();
    if (!badKey.isEmpty()) {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "key column(s) " + badKey + ": Iceberg takes no floating-point or array column as a"
              + " key (identifier field), so ingest dead-letters every change of the table, and"
              + " Debezium leaves a composite column out of the record's key (rows would merge)."
              + " Change the column's type (numeric for a floating-point one), or key the table by"
              + " other unique columns (the connector's message.key.columns, with REPLICA IDENTITY"
              + " FULL on the table)"
              + (decimalsAsDoubles
                  ? "; a numeric or money key arrives as a double with the connector's"
                      + " decimal.handling.mode=double: set it to precise"
                  : "")));
    }
    Map<String, List<String>> byLowerCase = new LinkedHashMap<>();
    columns.forEach(c -> byLowerCase
        .computeIfAbsent(c.toLowerCase(Locale.ROOT), k -> new ArrayList<>())
        .add(c));
    byLowerCase.values().stream()
        .filter(same -> same.size() > 1)
        .forEach(same -> out.add(new Finding(
            Level.BLOCKER,
            table,
            "columns " + same + " differ only by case: Debezium refuses such a table (\"has columns"
                + " that differ only by case\"), also when column.exclude.list leaves one out, and the"
                + " connector stops. Rename one of them")));
    ReservedColumnNames.check(table, capturedColumns).ifPresent(out::add);
    if (!generated.isEmpty() && (virtual || !publishesGeneratedColumns())) {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "generated column(s) " + generated + ": logical replication (pgoutput) does not send"
              + " their values (before PostgreSQL 18, and on 18 unless the publication says so), so"
              + " every row changed after the snapshot would hold null in them on the table. Leave"
              + " them out of the connector's events: \"column.exclude.list\": \""
              + exclusion(generated.stream().map(c -> table + "." + c).toList())
              + "\" (a query engine computes them from the other columns)"
              + (virtual
                  ? " (virtual generated columns are never published)"
                  : "; on PostgreSQL 18, publish them instead: ALTER PUBLICATION " + publication()
                      + " SET (publish_generated_columns = stored)")));
    }
    if (!nanStops.isEmpty()) {
      out.add(new Finding(
          Level.WARNING,
          table,
          "NOT NULL numeric column(s) " + nanStops + ": Debezium has no decimal for a NaN (or an"
              + " infinity) and makes it null, which the column's schema refuses, so the"
              + " connector's task fails at such a change and again at every restart (at the"
              + " snapshot, for one already in the table): no table's changes reach Kafka until"
              + " it is skipped (README, \"Values that stop the connector\"). Rule them out: ALTER TABLE "
              + table + " " + String.join(", ", nanRuledOut)));
    }
    if (!toasted.isEmpty() && identity != 'f') {
      out.add(new Finding(
          Level.WARNING,
          table,
          "column(s) " + toasted + " can be stored out of line (TOAST): an UPDATE"
              + " that leaves such a value unchanged does not send it, and ingest fills it from the table's current row."
              + " A primary-key UPDATE of such a row is refused unless its old row is in the same batch: if the"
              + " application updates primary keys, ALTER TABLE " + table
              + " REPLICA IDENTITY FULL"));
    }
    if (!nulledNotNull.isEmpty() && identity != 'f') {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "NOT NULL column(s) " + nulledNotNull + ": Debezium has no placeholder for an unchanged"
              + " TOASTed value of these types and makes it null, which the column's schema"
              + " refuses, so an UPDATE that leaves such a value unchanged while it is stored out of line (from about 2 kB; for a type stored MAIN, as PostGIS's are, once the row does not fit a page compressed) fails"
              + " the connector's task, at that change again at every restart: no table's changes"
              + " reach Kafka until it is skipped (README, \"Values that stop the connector\")."
              + " Having the connector reselect them does not help (the null is refused before it"
              + " runs). ALTER TABLE " + table + " REPLICA IDENTITY FULL"));
    }
    if (!nulled.isEmpty() && identity != 'f') {
      out.add(new Finding(
          Level.WARNING,
          table,
          "column(s) " + nulled + ": Debezium has no placeholder for an unchanged TOASTed value of"
              + " these types and sends null, which cannot be told from a real null: an UPDATE"
              + " that leaves such a value unchanged while it is stored out of line (from about 2 kB; for a type stored MAIN, as PostGIS's are, once the row does not fit a page compressed) sets it to null on the"
              + " table. ALTER TABLE " + table + " REPLICA IDENTITY FULL"
              + (canReselect
                  ? ", or have the connector reselect them: "
                      + ReselectedColumns.settings(schema, name, nulledColumns)
                  : "")));
    }
    if (out.size() == before) {
      out.add(new Finding(
          Level.OK,
          table,
          primaryKey
              ? "primary key, every column type mapped"
              : "key " + key.orElseThrow() + " (message.key.columns), every column type mapped"));
    }
  }

  /**
   * The element types of the arrays whose unchanged TOASTed value Debezium's PostgreSQL connector
   * (3.6) sends as a placeholder ingest recognises: text-like, json, bytea, int4, date, int8, uuid.
   * Of other arrays it sends null.
   */
  private static final Set<String> ARRAY_PLACEHOLDERS =
      Set.of("text", "varchar", "bpchar", "json", "jsonb", "bytea", "int4", "date", "int8", "uuid");

  /** Whether a connector is given whose {@code interval.handling.mode} is not {@code string}. */
  private boolean intervalsAsNumbers() {
    return !connector.isEmpty()
        && !"string"
            .equalsIgnoreCase(
                connector.getOrDefault("interval.handling.mode", "numeric").trim());
  }

  /**
   * Types whose unchanged TOASTed value Debezium's PostgreSQL connector (3.6) sends as null: their
   * converters do not take its placeholder (it is text), the conversion fails, and with the
   * connector's {@code event.converting.failure.handling.mode=warn} (its default) the field is
   * null; in a NOT NULL column the task fails. PostGIS's geometries, bit strings, and pgvector's
   * vectors (read from Debezium's converters, not tested here: no pgvector on these machines).
   */
  private static final Set<String> NO_PLACEHOLDER =
      Set.of("geometry", "geography", "bit", "varbit", "vector", "halfvec", "sparsevec");

  /**
   * Whether PostgreSQL may store a column's values out of line: a variable-length type whose storage
   * allows it and whose declared size does not keep every value small (a varchar(40) or a
   * varbit(64) stays inline; an array of them does not: its length has no bound, whatever its
   * elements' modifier). A geometry's modifier bounds only a point's size.
   */
  private static boolean toastable(
      String typname, int typmod, char storage, int typlen, boolean array) {
    if (typlen != -1 || storage == 'p') {
      return false;
    }
    if (typmod < 0 || array) {
      return true;
    }
    return switch (typname) {
      case "varchar", "bpchar" -> typmod - 4 > 500;
      case "bit", "varbit" -> typmod / 8 > 500;
      case "vector" -> typmod * 4L > 500;
      case "halfvec" -> typmod * 2L > 500;
      // PostGIS's modifier holds the shape in bits 2 to 7: a point (1) is never large.
      case "geometry", "geography" -> ((typmod >> 2) & 0x3f) != 1;
      case "numeric", "time", "timetz", "timestamp", "timestamptz", "interval" -> false;
      default -> true;
    };
  }

  /**
   * What the connector does with one captured column of {@code relation}: {@code reselected} when
   * its reselect post-processor replaces a streamed null by the row's value, {@code canReselect}
   * when it could (the table has a primary key it can query by).
   */
  private static void column(
      List<Finding> out,
      Relation relation,
      String column,
      Declared declared,
      boolean reselected,
      boolean canReselect) {
    String table = relation.schema() + "." + relation.name();
    String subject = table + "." + column;
    String type = declared.format();
    String typname = declared.base();
    char typtype = declared.kind();
    int typmod = declared.typmod();
    boolean array = declared.array();
    if (VECTORS_EMPTIED.contains(declared.name())) {
      out.add(new Finding(
          Level.WARNING,
          subject,
          type + ": Debezium sends every value of it as an empty list, so the column holds only"
              + " empty lists on the table; leave it out with column.exclude.list, or make it "
              + typname + "[]"));
    } else if (array && ARRAYS_LEFT_OUT.contains(typname)) {
      out.add(new Finding(
          Level.WARNING,
          subject,
          type + ": Debezium leaves arrays of " + typname + " out of its events, so the Iceberg"
              + " table will not have the column"));
    } else if (array && typname.equals("bit") && declared.notNull()) {
      out.add(new Finding(
          Level.BLOCKER,
          subject,
          type + " NOT NULL: Debezium makes every array of bit null, which the column's schema"
              + " refuses, so the connector's task fails at the table's first row or change, and"
              + " again at every restart. Leave it out with column.exclude.list, or make it text[]"
              + " (ALTER TABLE " + table + " ALTER COLUMN " + column + " TYPE text[])"));
    } else if (array && typname.equals("bit")) {
      out.add(new Finding(
          Level.WARNING,
          subject,
          type + ": Debezium sends null for every array of bit, so the column holds only nulls on"
              + " the table; leave it out with column.exclude.list, or make it varbit or text"));
    } else if (array && declared.dimensions() > 1) {
      out.add(new Finding(
          Level.BLOCKER,
          subject,
          type + " is declared with " + declared.dimensions() + " dimensions: Debezium sends an"
              + " array of more than one dimension as one null per element of its first"
              + " ({{1,2},{3,4}} arrives as [null, null]), or of text, uuid, inet and enums as"
              + " Java's names of arrays (ingest dead-letters those changes), so the table would"
              + " lose those values."
              + " Make it jsonb (ALTER TABLE " + table + " ALTER COLUMN " + column
              + " TYPE jsonb USING to_jsonb(" + column + ")), or leave it out with"
              + " column.exclude.list; if it only ever holds one dimension, declare it "
              + typname + "[]"));
    } else if (!array && typname.equals("name")) {
      if (!reselected) {
        out.add(new Finding(
            Level.BLOCKER,
            subject,
            type + ": Debezium reads it in snapshots but sends null for it in every change it"
                + " streams, so each row inserted or updated after the snapshot would hold null"
                + " in it on the table. ALTER TABLE " + table + " ALTER COLUMN " + column
                + " TYPE varchar(63)"
                + (canReselect
                    ? "; or have the connector reselect it (a query of the row by its key for each"
                        + " change of the table): "
                        + ReselectedColumns.settings(
                            relation.schema(), relation.name(), List.of(column))
                    : "")
                + "; or leave it out with column.exclude.list"));
      }
    } else if (LEFT_OUT.contains(typname)) {
      out.add(new Finding(
          Level.WARNING,
          subject,
          type + " has no Debezium mapping: the connector leaves the column"
              + " out of its events, so the Iceberg table will not have it"));
    } else if (typtype == 'c') {
      out.add(new Finding(
          Level.WARNING, subject, type + " is a composite type, which the connector leaves out"));
    } else if (!MAPPED.contains(typname) && typtype != 'e') {
      out.add(new Finding(
          Level.WARNING,
          subject,
          type + " is not a type the connector maps: it leaves the column out"
              + " (or sends raw bytes with include.unknown.datatypes=true)"));
    } else if (typname.equals("numeric") && typmod >= 4) {
      int precision = ((typmod - 4) >> 16) & 0xffff;
      int scale = (typmod - 4) & 0xffff;
      if (scale > 38) {
        out.add(
            new Finding(
                Level.BLOCKER,
                subject,
                type + ": Iceberg decimals hold at most 38 digits after the point,"
                    + " so every change of the table is refused; set the connector's decimal.handling.mode to string"));
      } else if (precision > 38) {
        out.add(new Finding(
            Level.WARNING,
            subject,
            type + " maps to decimal(38," + scale + "): a value of more than 38"
                + " digits is refused"));
      }
    } else if (typname.equals("numeric")) {
      out.add(
          new Finding(
              Level.INFO,
              subject,
              "numeric without precision maps to decimal(38,18): a value with more"
                  + " than 20 digits before the point or 18 after is refused (Debezium sends NaN and infinity as null, and stops at them in a NOT NULL column)"));
    } else if (typname.equals("time") || typname.equals("timetz")) {
      if (array && typname.equals("time")) {
        out.add(new Finding(
            Level.INFO,
            subject,
            type + ": Debezium reads the elements of a time array to the millisecond (through"
                + " JDBC's java.sql.Time): 10:15:30.123456 arrives as 10:15:30.123"));
      } else if (array) {
        out.add(new Finding(
            Level.INFO,
            subject,
            type + ": Debezium reads the elements of a timetz array to the second, in UTC"
                + " (through JDBC's java.sql.Time): 10:15:30.123456+05:30 arrives as 04:45:30Z"));
      } else if (typname.equals("time")) {
        out.add(new Finding(
            Level.INFO,
            subject,
            "time 24:00:00, valid in PostgreSQL, has no Iceberg time: a row holding"
                + " it is refused"));
      } else {
        out.add(new Finding(
            Level.INFO,
            subject,
            type + ": Debezium sends 24:00:00 (valid in PostgreSQL: the end of the day) as"
                + " 00:00:00, the day's start, and nothing in the event tells them apart"));
      }
    } else if (array && typname.equals("date")) {
      out.add(new Finding(
          Level.INFO,
          subject,
          type + ": Debezium reads the elements of a date array through JDBC, streamed changes"
              + " too: a BC date arrives as the same date AD, and 1582-10-05 to 1582-10-14 ten days"
              + " later"));
    } else if (array && typname.equals("timestamptz")) {
      out.add(new Finding(
          Level.INFO,
          subject,
          type + ": Debezium reads a -infinity element through JDBC as a year past any"
              + " timestamp (+292269055): a row holding one is refused"));
    } else if (typname.equals("varbit") && typmod >= 0) {
      out.add(new Finding(
          Level.INFO,
          subject,
          type + ": Debezium sends it as it sends a bit(" + typmod + "), its length the declared"
              + " one, and its encoding drops leading zeros: ingest writes " + typmod + " bits,"
              + " a shorter value padded with zeros (in a varbit(8), B'101' arrives as"
              + " 00000101)"));
    } else if (typname.equals("varbit")) {
      out.add(new Finding(
          Level.INFO,
          subject,
          "Debezium's encoding of varbit drops leading zeros (B'0011' arrives as 11)"));
    }
  }

  /**
   * The constraint that keeps the values Debezium cannot send out of a numeric column: NaN, and the
   * {@code infinities} where the column holds them (arrays: in any element).
   */
  private static String notNan(
      String column, boolean infinities, boolean array, Set<String> reserved) {
    String name = quoted(column, reserved);
    String check = array
        ? "NOT (" + name + " && '{NaN" + (infinities ? ",Infinity,-Infinity" : "") + "}')"
        : infinities ? name + " NOT IN ('NaN', 'Infinity', '-Infinity')" : name + " <> 'NaN'";
    return "ADD CHECK (" + check + ")";
  }

  /**
   * Whether Debezium's events hold arrays of {@code element} (its name and {@code typtype}): not
   * those it leaves out, nor those of bit (null always), of a domain or of a type it does not map.
   */
  private static boolean sentArray(String element, char kind) {
    return !ARRAYS_LEFT_OUT.contains(element)
        && !element.equals("bit")
        && (MAPPED.contains(element) || kind == 'e');
  }

  /** {@code column} as PostgreSQL reads it in a statement: quoted where it must be. */
  private static String quoted(String column, Set<String> reserved) {
    return unquoted(column, reserved) ? column : "\"" + column.replace("\"", "\"\"") + "\"";
  }

  /**
   * Whether PostgreSQL reads {@code column} written without quotes as that column: lower case, no
   * character that needs quoting, and none of the {@code reserved} words (as Debezium's reselect
   * query writes key columns).
   */
  private static boolean unquoted(String column, Set<String> reserved) {
    return column.matches("[a-z_][a-z0-9_$]*") && !reserved.contains(column);
  }

  /** PostgreSQL's words a column name must be quoted as, read once. */
  private Set<String> reservedWords() throws SQLException {
    if (reservedWords == null) {
      Set<String> words = new HashSet<>();
      try (Statement s = connection.createStatement();
          ResultSet rs =
              s.executeQuery("SELECT word FROM pg_get_keywords() WHERE catcode IN ('R', 'T')")) {
        while (rs.next()) {
          words.add(rs.getString(1));
        }
      }
      reservedWords = words;
    }
    return reservedWords;
  }

  private String publication() {
    return connector.getOrDefault("publication.name", "dbz_publication");
  }

  /** Whether the connector's publication sends stored generated columns (PostgreSQL 18's option). */
  private boolean publishesGeneratedColumns() throws SQLException {
    if (version() < 180000) {
      return false;
    }
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT pubgencols FROM pg_publication WHERE pubname = ?")) {
      ps.setString(1, publication());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && "s".equals(rs.getString(1));
      }
    }
  }

  private int version() throws SQLException {
    if (version == 0) {
      version = Integer.parseInt(setting("server_version_num"));
    }
    return version;
  }

  private String setting(String name) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs = s.executeQuery("SHOW " + name)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
