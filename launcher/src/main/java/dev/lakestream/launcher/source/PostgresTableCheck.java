package dev.lakestream.launcher.source;

import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.launcher.source.Finding.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The checks of each table the connector would capture: its key and replica identity, column
 * types the pipeline cannot map or Debezium leaves out, generated columns, and columns whose values
 * PostgreSQL may leave out of updates (TOAST). Reads the catalog only.
 */
final class PostgresTableCheck {

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
  private final PostgresServer server;
  private final CapturedTables captured;
  private final ReselectedColumns reselected;
  private final boolean decimalsAsDoubles;
  /** Whether the connector sends numerics as decimals, which hold no NaN (Debezium's default). */
  private final boolean decimalsPrecise;
  /** PostgreSQL's words a column name must be quoted as, read once. */
  private Set<String> reservedWords;

  /** {@code connector}: the connector's configuration (its {@code config} object), or empty. */
  PostgresTableCheck(Connection connection, Map<String, String> connector, PostgresServer server) {
    this.connection = connection;
    this.connector = connector;
    this.server = server;
    this.captured = new CapturedTables(connector);
    this.reselected = new ReselectedColumns(connector);
    this.decimalsAsDoubles = ConverterCheck.decimalsAsDoubles(connector);
    this.decimalsPrecise = ConverterCheck.decimalsPrecise(connector);
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
  int run(List<Finding> out) throws SQLException {
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
    char identity = autoset.map(PostgresTableCheck::identityCode).orElse(relation.identity());
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
              + " after. Leave it out (\"table.exclude.list\": \""
              + PostgresSourceCheck.pattern(table) + "\"), or"
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
            + (server.version() >= 120000 ? "a.attgenerated" : "''")
            + ", t.typname, a.attndims, a.attnotnull OR (t.typtype = 'd' AND t.typnotnull)"
            // A validated CHECK of the column alone, or of its domain, that names NaN (and the
            // infinities, where the type holds them), as README's remedy does.
            + ", EXISTS (SELECT 1 FROM pg_constraint c WHERE c.contype = 'c' AND c.convalidated"
            + " AND ((c.conrelid = a.attrelid AND c.conkey = ARRAY[a.attnum])"
            + " OR c.contypid = a.atttypid)"
            + " AND pg_get_constraintdef(c.oid) ~* '[[:<:]]nan[[:>:]]'"
            + (server.version() >= 140000
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
            boolean infinities = server.version() >= 140000 && (array || rs.getInt(5) < 4);
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
                  ? " (the columns of its replica identity index: \""
                      + PostgresSourceCheck.pattern(table) + ":"
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
    if (!generated.isEmpty() && (virtual || !server.publishesGeneratedColumns())) {
      out.add(new Finding(
          Level.BLOCKER,
          table,
          "generated column(s) " + generated + ": logical replication (pgoutput) does not send"
              + " their values (before PostgreSQL 18, and on 18 unless the publication says so), so"
              + " every row changed after the snapshot would hold null in them on the table. Leave"
              + " them out of the connector's events: \"column.exclude.list\": \""
              + PostgresSourceCheck.exclusion(
                  generated.stream().map(c -> table + "." + c).toList())
              + "\" (a query engine computes them from the other columns)"
              + (virtual
                  ? " (virtual generated columns are never published)"
                  : "; on PostgreSQL 18, publish them instead: ALTER PUBLICATION "
                      + server.publication() + " SET (publish_generated_columns = stored)")));
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
                    + PostgresSourceCheck.pattern(table) + ":" + String.join(",", identity) + "\""
                : "Make the key the replica identity's columns (\"message.key.columns\": \""
                    + PostgresSourceCheck.pattern(table) + ":" + String.join(",", identity)
                    + "\"), or ALTER TABLE "
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
}
