package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.embedded.EmbeddedPostgres;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code check-source} against real PostgreSQL servers, as a user runs it with the shipped
 * connector JSON: a clean database passes; each blocker is found, named, and makes it exit 1.
 */
class CheckSourceCommandTest {

  record Run(int exit, String output) {}

  @Test
  void aDatabaseReadyForTheConnectorPassesWithItsWarningsListed() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, name varchar(40), balance numeric(12,2))",
          "CREATE TABLE inventory.documents (id int PRIMARY KEY, body text)",
          "CREATE TABLE inventory.series (id int PRIMARY KEY, nums int[], amounts numeric[],"
              + " flags boolean[], prices numeric(12,2)[], names varchar(40)[], name varchar(40))",
          "CREATE TABLE inventory.keyed_elsewhere (a int, b text)",
          "ALTER TABLE inventory.keyed_elsewhere REPLICA IDENTITY FULL",
          "CREATE TABLE public.ignored (x box)");
      Run run = checkSource(pg, Map.of("message.key.columns", "inventory.keyed_elsewhere:a"));
      assertThat(run.exit()).as(run.output()).isZero();
      assertThat(run.output())
          .contains("OK       wal_level: logical")
          .contains("OK       inventory.customers: primary key, every column type mapped")
          .contains("OK       inventory.keyed_elsewhere: key [a] (message.key.columns)")
          .contains(
              "WARNING  inventory.documents: column(s) [body] can be stored out of line (TOAST)")
          // Ingest fills these; the arrays without a placeholder are reported on their own.
          .contains("WARNING  inventory.series: column(s) [nums, names]"
              + " can be stored out of line (TOAST)")
          .contains("WARNING  inventory.series: column(s) [amounts numeric[], flags boolean[],"
              + " prices numeric(12,2)[]]: Debezium has no placeholder")
          .contains("0 blocker(s)")
          .doesNotContain("public.ignored");
    }
  }

  /**
   * Debezium's reselect post-processor finds a row by the table's primary key, its names written
   * unquoted into its query: a reselected {@code name} column is no blocker on a table with such a
   * key, and stays one, without the reselect remedy, on a table without a primary key or keyed by a
   * name that needs quotes (the query fails there, and the null stays).
   */
  @Test
  void aReselectedColumnCountsOnlyWhereTheReselectQueryCanFindTheRow() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.fine (id int PRIMARY KEY, nm name)",
          "CREATE TABLE inventory.keyless (a int NOT NULL, nm name)",
          "ALTER TABLE inventory.keyless REPLICA IDENTITY FULL",
          "CREATE TABLE inventory.quoted (\"Id\" int PRIMARY KEY, nm name)",
          "CREATE TABLE inventory.reserved (\"order\" int PRIMARY KEY, nm name)");
      Run run = checkSource(
          pg,
          Map.of(
              "message.key.columns", "inventory.keyless:a",
              "post.processors", "reselector",
              "post.processors.reselector.type",
                  "io.debezium.processors.reselect.ReselectColumnsPostProcessor",
              "post.processors.reselector.reselect.columns.include.list", "inventory\\..*:nm"));
      assertThat(run.output())
          .contains("OK       inventory.fine: primary key, every column type mapped")
          .contains("BLOCKER  inventory.keyless.nm: name:")
          .contains("BLOCKER  inventory.quoted.nm: name:")
          .contains("BLOCKER  inventory.reserved.nm: name:")
          .doesNotContain("inventory.fine.nm", "reselect it")
          .contains("3 blocker(s)");
    }
  }

  /**
   * Debezium's value modes other than the shipped connector's: decimals as doubles (a numeric or
   * money key then arrives as a double, which Iceberg takes as no key), times in milliseconds,
   * binary values as text, intervals as microseconds (months approximated). The shipped settings report none of it.
   */
  @Test
  void valueModesThatLoseDigitsOrChangeTypesAreReported() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.priced (sku numeric(10,0) PRIMARY KEY, price money,"
              + " waited interval)",
          "CREATE TABLE inventory.billed (amount money PRIMARY KEY)");
      Run shipped = checkSource(pg, Map.of());
      assertThat(shipped.exit()).as(shipped.output()).isZero();
      assertThat(shipped.output())
          .contains("OK       inventory.billed: primary key, every column type mapped")
          // A numeric key is NOT NULL, and a NaN in it stops a connector sending decimals.
          .contains("WARNING  inventory.priced: NOT NULL numeric column(s) [sku]")
          .contains("ALTER TABLE inventory.priced ADD CHECK (sku <> 'NaN')")
          .doesNotContain(
              "decimal.handling.mode",
              "time.precision.mode",
              "binary.handling.mode",
              "interval.handling.mode");
      Run modes = checkSource(
          pg,
          Map.of(
              "decimal.handling.mode", "double",
              "time.precision.mode", "connect",
              "binary.handling.mode", "base64",
              "interval.handling.mode", "numeric"));
      assertThat(modes.exit()).as(modes.output()).isEqualTo(1);
      assertThat(modes.output())
          .contains("WARNING  decimal.handling.mode: double: Debezium sends decimal (numeric,"
              + " money) values as doubles")
          .contains("WARNING  time.precision.mode: connect: Debezium sends times and timestamps in"
              + " milliseconds")
          .contains("INFO     binary.handling.mode: base64: Debezium sends binary values as base64"
              + " text")
          .contains("WARNING  inventory.priced.waited: interval with the connector's"
              + " interval.handling.mode=numeric (Debezium's default when it is not set): Debezium"
              + " sends microseconds, counting a month as 30.4375 days")
          .contains("BLOCKER  inventory.priced: key column(s) [sku numeric(10,0)]")
          .contains("BLOCKER  inventory.billed: key column(s) [amount money]")
          .contains("a numeric or money key arrives as a double with the connector's"
              + " decimal.handling.mode=double: set it to precise")
          .contains("2 blocker(s)")
          .doesNotContain("NOT NULL numeric"); // a double holds NaN
    }
  }

  @Test
  void tablesThatComeToOneNameUnloggedTablesAndColumnsDebeziumRefusesAreBlockers()
      throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.\"Order Items\" (id int PRIMARY KEY)",
          "CREATE TABLE inventory.\"Order_Items\" (id int PRIMARY KEY)",
          "CREATE TABLE inventory.\"dot.ted\" (id int PRIMARY KEY)",
          "CREATE TABLE inventory.\"line.items\" (id int PRIMARY KEY)",
          "CREATE TABLE inventory.line_items (id int PRIMARY KEY)",
          "CREATE TABLE inventory.\"Orders\" (id int PRIMARY KEY)",
          "CREATE TABLE inventory.orders (id int PRIMARY KEY)",
          "CREATE TABLE inventory.people (id int PRIMARY KEY, \"Name\" text, name text, \"NAME\" text)",
          "CREATE UNLOGGED TABLE inventory.scratch (id int PRIMARY KEY)");
      Run run = checkSource(pg, Map.of());
      assertThat(run.exit()).as(run.output()).isEqualTo(1);
      assertThat(run.output())
          .contains("INFO     inventory.Order Items: its changes go to table inventory.Order_Items")
          .contains("INFO     inventory.dot.ted: its changes go to table inventory.dot_ted")
          .contains("BLOCKER  inventory.Order Items, inventory.Order_Items: Debezium writes these"
              + " tables' changes to one topic, <topic.prefix>.inventory.Order_Items")
          .contains("WARNING  inventory.line.items, inventory.line_items: these tables come to"
              + " one table name, inventory.line_items")
          .contains("WARNING  inventory.Orders, inventory.orders: these tables' names differ only"
              + " by case")
          .contains("BLOCKER  inventory.people: columns [Name, name, NAME] differ only by case:"
              + " Debezium refuses such a table")
          .contains("OK       inventory.dot.ted: primary key")
          .contains("BLOCKER  inventory.scratch: UNLOGGED: PostgreSQL writes no WAL for it")
          .contains("\"table.exclude.list\": \"inventory\\\\.scratch\"")
          .contains("3 blocker(s)");
    }
  }

  @Test
  void keysIdentitiesAndColumnsAreJudgedAsTheConnectorsOwnSettingsMakeThem() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.accounts (id int PRIMARY KEY, code text NOT NULL, v text)",
          "CREATE UNIQUE INDEX accounts_code ON inventory.accounts (code)",
          "ALTER TABLE inventory.accounts REPLICA IDENTITY USING INDEX accounts_code",
          // An INCLUDE column is not sent with the identity: id stays outside it.
          "CREATE TABLE inventory.wide (id int PRIMARY KEY, code text NOT NULL)",
          "CREATE UNIQUE INDEX wide_code ON inventory.wide (code) INCLUDE (id)",
          "ALTER TABLE inventory.wide REPLICA IDENTITY USING INDEX wide_code",
          "CREATE TABLE inventory.named (id int PRIMARY KEY, nm name)",
          // Debezium's ALTER TABLE does not quote the name: it cannot set this one's identity.
          "CREATE TABLE inventory.\"Quoted\" (id int PRIMARY KEY, code text NOT NULL)",
          "CREATE UNIQUE INDEX quoted_code ON inventory.\"Quoted\" (code)",
          "ALTER TABLE inventory.\"Quoted\" REPLICA IDENTITY USING INDEX quoted_code",
          "CREATE TABLE inventory.\"order\" (id int PRIMARY KEY)",
          "CREATE TABLE inventory.order_2020 () INHERITS (inventory.\"order\")",
          "CREATE TABLE inventory.filtered (id int PRIMARY KEY, region text)",
          "ALTER TABLE inventory.filtered REPLICA IDENTITY FULL",
          "CREATE PUBLICATION lakestream FOR TABLE inventory.filtered WHERE (region = 'eu')");
      Run asIs = checkSource(pg, Map.of());
      assertThat(asIs.output())
          .contains("BLOCKER  inventory.accounts: REPLICA IDENTITY USING INDEX accounts_code")
          .contains("BLOCKER  inventory.wide: REPLICA IDENTITY USING INDEX wide_code: of a deleted"
              + " or key-changed row PostgreSQL sends [code], not the record key's [id]")
          .contains("BLOCKER  inventory.named.nm: name: Debezium reads it in snapshots")
          .contains("\"SELECT * FROM ONLY inventory.\\\"order\\\"\"")
          .contains("\"filter\": \"tableoid = 'inventory.\\\"order\\\"'::regclass\"")
          // The shipped connector (filtered) sets the publication's tables itself: no filter.
          .contains("INFO     publication lakestream: its tables differ from the captured ones")
          .doesNotContain("inventory.filtered: published with a row filter");

      Run fixed = checkSource(
          pg,
          Map.of(
              "message.key.columns", "inventory\\.ACCOUNTS:CODE",
              "replica.identity.autoset.values", "inventory.wide:DEFAULT,inventory.Quoted:DEFAULT",
              "column.exclude.list", "inventory\\.named\\.nm",
              "publication.autocreate.mode", "disabled"));
      assertThat(fixed.output())
          .doesNotContain(
              "BLOCKER  inventory.accounts", "BLOCKER  inventory.wide", "inventory.named.nm")
          .contains("BLOCKER  inventory.filtered: published with a row filter, (region ="
              + " 'eu'::text)")
          .contains("WARNING  inventory.Quoted: replica.identity.autoset.values says REPLICA"
              + " IDENTITY DEFAULT, which the connector cannot set")
          .contains("BLOCKER  inventory.Quoted: REPLICA IDENTITY USING INDEX quoted_code");

      Run badPattern = checkSource(pg, Map.of("message.key.columns", "inventory.(:id"));
      assertThat(badPattern.exit()).isNotZero();
      assertThat(badPattern.output())
          .contains("the connector's message.key.columns holds a pattern Java cannot read,"
              + " inventory.(");
    }
  }

  @Test
  void eachBlockerIsNamedWithItsFixAndTheExitCodeIsOne() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.events (id int, payload text)",
          "CREATE TABLE inventory.audit (id int, note text)",
          "ALTER TABLE inventory.audit REPLICA IDENTITY FULL",
          "CREATE TABLE inventory.measures (id int PRIMARY KEY, tiny numeric(60,40), wide numeric(50,2), shape box)",
          "SELECT pg_create_logical_replication_slot('lakestream', 'test_decoding')",
          "CREATE ROLE app LOGIN");
      Run run = checkSource(pg, Map.of());
      assertThat(run.exit()).as(run.output()).isEqualTo(1);
      assertThat(run.output())
          .contains("BLOCKER  inventory.events: no primary key and REPLICA IDENTITY DEFAULT")
          .contains(
              "BLOCKER  inventory.audit: no primary key: its changes reach Kafka without a key")
          .contains("BLOCKER  inventory.measures.tiny: numeric(60,40)")
          .contains("WARNING  inventory.measures.wide: numeric(50,2) maps to decimal(38,2)")
          .contains("WARNING  inventory.measures.shape: box has no Debezium mapping")
          .contains("BLOCKER  slot lakestream: ")
          .contains("decodes with test_decoding where the connector uses pgoutput")
          .contains("4 blocker(s)");

      Run asApp = checkSource(pg, Map.of("database.user", "app"));
      assertThat(asApp.output()).contains("BLOCKER  user app: lacks the REPLICATION attribute");

      // What the first blocker warns of, as PostgreSQL does it once the table is published.
      pg.execute(
          "CREATE PUBLICATION lakestream FOR TABLE inventory.events",
          "INSERT INTO inventory.events VALUES (1, 'x')");
      assertThatThrownBy(() -> pg.execute("UPDATE inventory.events SET payload = 'y'"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("does not have a replica identity and publishes updates");
    }
  }

  @Test
  void withoutLogicalDecodingNothingCanBeCaptured() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start(Map.of("wal_level", "replica"))) {
      pg.execute("CREATE SCHEMA inventory", "CREATE TABLE inventory.t (id int PRIMARY KEY)");
      Run run = checkSource(pg, Map.of());
      assertThat(run.exit()).isEqualTo(1);
      assertThat(run.output())
          .contains("BLOCKER  wal_level: replica: Debezium needs logical decoding");
    }
  }

  /**
   * A partitioned table: published through it (the shipped connector's
   * publish.via.partition.root=true) with its partitions left out is OK; its partitions captured
   * too is a warning that names the exclusion; without publishing through it, a blocker.
   */
  @Test
  void aPartitionedTableIsPublishedThroughItWithItsPartitionsLeftOut() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.events (id bigint, day date, PRIMARY KEY (id, day))"
              + " PARTITION BY RANGE (day)",
          "CREATE TABLE inventory.events_2025 PARTITION OF inventory.events"
              + " FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
          "CREATE TABLE inventory.events_2026 PARTITION OF inventory.events"
              + " FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')");
      Run shipped = checkSource(pg, Map.of());
      assertThat(shipped.exit()).as(shipped.output()).isZero();
      assertThat(shipped.output())
          .contains("WARNING  inventory.events: partitioned, and its partition(s)"
              + " [inventory.events_2025, inventory.events_2026] are captured too")
          .contains("\"table.exclude.list\": \"inventory\\\\.events_2025,"
              + "inventory\\\\.events_2026\"")
          .contains("OK       inventory.events: primary key, every column type mapped");

      Run leftOut = checkSource(
          pg, Map.of("table.exclude.list", "inventory\\.events_2025,inventory\\.events_2026"));
      assertThat(leftOut.output())
          .contains(
              "OK       inventory.events: partitioned, published through it, its partitions left out;"
                  + " an ATTACH, DETACH, DROP or TRUNCATE of a partition publishes no change")
          .doesNotContain("inventory.events_2025:");

      Run notThroughIt = checkSource(pg, Map.of("publish.via.partition.root", "false"));
      assertThat(notThroughIt.exit()).isEqualTo(1);
      assertThat(notThroughIt.output())
          .contains("BLOCKER  inventory.events: a partitioned table, and the connector has"
              + " publish.via.partition.root=false");

      pg.execute("CREATE PUBLICATION lakestream FOR TABLE inventory.events");
      assertThat(checkSource(pg, Map.of()).output())
          .contains("WARNING  publication lakestream: was created without"
              + " publish_via_partition_root");
    }
  }

  /**
   * A stored generated column, whose values logical replication does not send: a blocker that names
   * the column.exclude.list to set; with it set, OK.
   */
  @Test
  void aGeneratedColumnIsABlockerUntilTheConnectorLeavesItOut() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.items (id bigint PRIMARY KEY, price numeric(12,2), qty int,"
              + " total numeric(14,2) GENERATED ALWAYS AS (price * qty) STORED)");
      Run shipped = checkSource(pg, Map.of());
      assertThat(shipped.exit()).as(shipped.output()).isEqualTo(1);
      assertThat(shipped.output())
          .contains("BLOCKER  inventory.items: generated column(s) [total]")
          .contains("\"column.exclude.list\": \"inventory\\\\.items\\\\.total\"")
          .contains("ALTER PUBLICATION lakestream SET (publish_generated_columns = stored)");

      Run leftOut = checkSource(pg, Map.of("column.exclude.list", "inventory\\.items\\.total"));
      assertThat(leftOut.exit()).as(leftOut.output()).isZero();
      assertThat(leftOut.output())
          .contains("OK       inventory.items: primary key, every column type mapped")
          .doesNotContain("replaces a null");
    }
  }

  /** A connector whose JSON converter turns a NULL into the column's default is warned of. */
  @Test
  void aConverterThatReplacesNullsWithDefaultsIsWarnedOf() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute("CREATE SCHEMA inventory", "CREATE TABLE inventory.items (id bigint PRIMARY KEY)");
      Run replacing = checkSource(pg, Map.of("value.converter.replace.null.with.default", "true"));
      assertThat(replacing.output())
          .contains("WARNING  value.converter.replace.null.with.default: Connect's JSON converter"
              + " replaces a null a column holds with the column's default");
    }
  }

  /**
   * A deferrable primary key: PostgreSQL refuses the table's updates under REPLICA IDENTITY
   * DEFAULT (a blocker); under FULL, a warning of the rows statements shifting keys can still lose.
   */
  @Test
  void aDeferrablePrimaryKeyNeedsReplicaIdentityFullAndIsWarnedOf() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.slots (id int, v text,"
              + " CONSTRAINT slots_pk PRIMARY KEY (id) DEFERRABLE INITIALLY IMMEDIATE)");
      Run identityDefault = checkSource(pg, Map.of());
      assertThat(identityDefault.exit()).as(identityDefault.output()).isEqualTo(1);
      assertThat(identityDefault.output())
          .contains("BLOCKER  inventory.slots: its primary key is DEFERRABLE, which PostgreSQL"
              + " does not take as the replica identity")
          .contains("WARNING  inventory.slots: its primary key is DEFERRABLE: one statement may"
              + " move rows through each other's keys");

      pg.execute("ALTER TABLE inventory.slots REPLICA IDENTITY FULL");
      Run full = checkSource(pg, Map.of());
      assertThat(full.exit()).as(full.output()).isZero();
      assertThat(full.output())
          .doesNotContain("BLOCKER  inventory.slots")
          .contains("WARNING  inventory.slots: its primary key is DEFERRABLE");

      pg.execute("ALTER TABLE inventory.slots REPLICA IDENTITY NOTHING");
      Run nothing = checkSource(pg, Map.of());
      assertThat(nothing.exit()).as(nothing.output()).isEqualTo(1);
      assertThat(nothing.output())
          .contains("BLOCKER  inventory.slots: REPLICA IDENTITY NOTHING: once the connector's"
              + " publication includes it, PostgreSQL refuses its UPDATEs and DELETEs. ALTER TABLE"
              + " inventory.slots REPLICA IDENTITY FULL");
    }
  }

  /**
   * A table created while the connector runs is published only by a publication of all tables or
   * schemas, or, for the shipped connector's publication of listed tables, by the shipped event
   * trigger, whose settings must match the connector's.
   */
  @Test
  void tablesCreatedLaterAreWarnedOfUntilTheShippedEventTriggerAddsThemWithTheConnectorsSettings()
      throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, name varchar(40))");
      assertThat(checkSource(pg, Map.of()).output())
          .contains("WARNING  tables created later: publication lakestream will list the"
              + " captured tables (publication.autocreate.mode=filtered makes it so when the"
              + " connector starts): a table created while the connector runs publishes nothing"
              + " until the connector restarts, and what is written to it until then never"
              + " reaches main. Install (or enable) the event trigger of"
              + " connectors/postgres-publish-new-tables.sql");

      pg.execute(Files.readString(
          PostgresEndToEndTest.connectorsDir().resolve("postgres-publish-new-tables.sql")));
      Run installed = checkSource(pg, Map.of());
      assertThat(installed.output())
          .as(installed.output())
          .contains("OK       tables created later: the event trigger of"
              + " connectors/postgres-publish-new-tables.sql adds them to publication lakestream"
              + " as they are created")
          .doesNotContain("WARNING  tables created later");
      assertThat(
              checkSource(pg, Map.of("schema.include.list", "inventory,sales")).output())
          .contains("WARNING  tables created later: the event trigger of"
              + " connectors/postgres-publish-new-tables.sql has {publication_name=lakestream,"
              + " schema_patterns=inventory, table_patterns=null} where the connector has"
              + " {publication_name=lakestream, schema_patterns=inventory,sales,"
              + " table_patterns=null}");

      pg.execute("ALTER EVENT TRIGGER lakestream_publish_new_tables DISABLE");
      assertThat(checkSource(pg, Map.of()).output())
          .contains("WARNING  tables created later: publication lakestream will list the"
              + " captured tables");
      pg.execute("ALTER EVENT TRIGGER lakestream_publish_new_tables ENABLE REPLICA");
      assertThat(checkSource(pg, Map.of()).output())
          .as("a trigger that fires only in replication sessions")
          .contains("WARNING  tables created later: publication lakestream will list the"
              + " captured tables");

      // A publication of the schema, which a filtered connector's restart would replace.
      pg.execute("CREATE PUBLICATION lakestream FOR TABLES IN SCHEMA inventory");
      assertThat(checkSource(pg, Map.of()).output())
          .contains("WARNING  tables created later: publication lakestream lists its tables"
              + " (publication.autocreate.mode=filtered)");
      Map<String, String> own = Map.of("publication.autocreate.mode", "disabled");
      assertThat(checkSource(pg, own).output())
          .contains("OK       tables created later: publication lakestream publishes the tables in"
              + " schema(s) [inventory], tables created in them later included");
      pg.execute("CREATE SCHEMA sales");
      pg.execute("CREATE TABLE sales.orders (id int PRIMARY KEY)");
      assertThat(checkSource(
                  pg,
                  Map.of(
                      "publication.autocreate.mode",
                      "disabled",
                      "schema.include.list",
                      "inventory,sales"))
              .output())
          .as("a captured schema the publication leaves out")
          .contains("WARNING  tables created later: publication lakestream publishes the tables"
              + " in schema(s) [inventory] but not in [sales], where the connector captures"
              + " tables: a table created there while it runs is not published. ALTER PUBLICATION"
              + " lakestream ADD TABLES IN SCHEMA sales");
      assertThat(checkSource(
                  pg,
                  Map.of(
                      "publication.autocreate.mode",
                      "all_tables",
                      "publication.name",
                      "everything"))
              .output())
          .contains("OK       tables created later: publication everything is (or will be made)"
              + " of all tables");
    }
  }

  /**
   * A publication of all tables (Debezium's default {@code publication.autocreate.mode}) takes in
   * the tables the connector does not capture too, and PostgreSQL then refuses the {@code UPDATE}s
   * and {@code DELETE}s of those without a replica identity: a blocker naming them, which the
   * shipped connector's publication of the captured tables never meets. Shown on the server: the
   * publication Debezium would make refuses the update the finding names.
   */
  @Test
  void tablesOutsideTheCaptureThatAPublicationOfAllTablesWouldBreakAreBlockers() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE SCHEMA app",
          "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, name varchar(40))",
          // A partition left out of the capture (as check-source advises), keyed by its root.
          "CREATE TABLE inventory.readings (id bigint PRIMARY KEY, v int) PARTITION BY RANGE (id)",
          "CREATE TABLE inventory.readings_1 PARTITION OF inventory.readings"
              + " FOR VALUES FROM (0) TO (100)",
          // One of a root without a key: PostgreSQL refuses its updates, though it is not captured.
          "CREATE TABLE app.log (at date, what text) PARTITION BY RANGE (at)",
          "CREATE TABLE app.log_2026 PARTITION OF app.log"
              + " FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
          "CREATE TABLE app.audit (at timestamptz, what text)",
          "CREATE TABLE app.sessions (id int PRIMARY KEY DEFERRABLE, v text)",
          "CREATE TABLE app.events (a int, b text)",
          "ALTER TABLE app.events REPLICA IDENTITY FULL",
          "CREATE TABLE app.keyed (id int PRIMARY KEY, v text)",
          "CREATE UNLOGGED TABLE app.scratch (a int)",
          // USING INDEX, then the index dropped: PostgreSQL acts as for NOTHING.
          "CREATE TABLE app.indexed (a int NOT NULL, b text)",
          "CREATE UNIQUE INDEX indexed_a ON app.indexed (a)",
          "ALTER TABLE app.indexed REPLICA IDENTITY USING INDEX indexed_a",
          "DROP INDEX app.indexed_a",
          "INSERT INTO app.audit VALUES (now(), 'login')");
      String blocker = "BLOCKER  publication lakestream: will be of all tables"
          + " (publication.autocreate.mode=all_tables makes it so when the connector starts), 4"
          + " table(s) the connector does not capture among them without a replica identity:"
          + " app.audit, app.indexed, app.log_2026, app.sessions. Once the publication includes them, PostgreSQL refuses"
          + " their UPDATEs and DELETEs";
      Map<String, String> shippedWithPartitionsOut =
          Map.of("table.exclude.list", "inventory\\.readings_1");
      Run shipped = checkSource(pg, shippedWithPartitionsOut);
      assertThat(shipped.exit()).as(shipped.output()).isZero();
      assertThat(shipped.output()).doesNotContain("app.audit").doesNotContain("app.sessions");

      Map<String, String> allTables = Map.of(
          "publication.autocreate.mode",
          "all_tables",
          "table.exclude.list",
          "inventory\\.readings_1");
      Run all = checkSource(pg, allTables);
      assertThat(all.exit()).as(all.output()).isEqualTo(1);
      assertThat(all.output())
          .contains(blocker)
          .doesNotContain("app.events")
          .doesNotContain("app.keyed")
          .doesNotContain("app.scratch");
      assertThat(checkSource(
                  pg,
                  Map.of(
                      "publication.autocreate.mode",
                      "all_tables",
                      "plugin.name",
                      "decoderbufs",
                      "table.exclude.list",
                      "inventory\\.readings_1"))
              .output())
          .as("Debezium makes a publication for pgoutput only")
          .doesNotContain("will be of all tables");

      // The publication Debezium makes in that mode, and what PostgreSQL then does.
      pg.execute("CREATE PUBLICATION lakestream FOR ALL TABLES");
      assertThatThrownBy(() -> pg.execute("UPDATE app.audit SET what = 'logout'"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("does not have a replica identity and publishes updates");
      pg.execute("UPDATE app.keyed SET v = 'fine'", "UPDATE app.events SET b = 'fine'");
      Run existing = checkSource(pg, allTables);
      assertThat(existing.exit()).as(existing.output()).isEqualTo(1);
      assertThat(existing.output())
          .contains("BLOCKER  publication lakestream: publishes 4 table(s) the connector does"
              + " not capture without a replica identity: app.audit, app.indexed, app.log_2026, app.sessions."
              + " While it does,"
              + " PostgreSQL refuses their UPDATEs and DELETEs");

      // A publication of a schema, made beforehand.
      pg.execute(
          "DROP PUBLICATION lakestream",
          // Published through its root, a partition is not listed in pg_publication_tables.
          "CREATE PUBLICATION lakestream FOR TABLE inventory.customers, TABLES IN SCHEMA app"
              + " WITH (publish_via_partition_root = true)");
      assertThat(
              checkSource(pg, Map.of("publication.autocreate.mode", "disabled")).output())
          .contains("BLOCKER  publication lakestream: publishes 4 table(s) the connector does"
              + " not capture without a replica identity: app.audit, app.indexed, app.log_2026,"
              + " app.sessions. While it does");

      // The remedy for the tables themselves.
      pg.execute(
          "DROP PUBLICATION lakestream",
          "ALTER TABLE app.audit REPLICA IDENTITY FULL",
          "ALTER TABLE app.sessions REPLICA IDENTITY FULL",
          "ALTER TABLE app.log_2026 REPLICA IDENTITY FULL",
          "ALTER TABLE app.indexed REPLICA IDENTITY FULL");
      Run remedied = checkSource(pg, allTables);
      assertThat(remedied.exit()).as(remedied.output()).isZero();
      assertThat(remedied.output()).doesNotContain("does not capture without a replica identity");
    }
  }

  /**
   * A captured table whose replica identity was an index since dropped: PostgreSQL keeps {@code
   * USING INDEX} in the catalog and acts as for {@code NOTHING}, refusing its updates once
   * published. A blocker, shown on the server.
   */
  @Test
  void aReplicaIdentityIndexSinceDroppedIsABlocker() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.accounts (id bigint PRIMARY KEY, email text NOT NULL)",
          "CREATE UNIQUE INDEX accounts_email ON inventory.accounts (email)",
          "ALTER TABLE inventory.accounts REPLICA IDENTITY USING INDEX accounts_email",
          "DROP INDEX inventory.accounts_email",
          "INSERT INTO inventory.accounts VALUES (1, 'a@example.com')");
      Run run = checkSource(pg, Map.of());
      assertThat(run.exit()).as(run.output()).isEqualTo(1);
      assertThat(run.output())
          .contains("BLOCKER  inventory.accounts: REPLICA IDENTITY USING INDEX of an index since"
              + " dropped, which PostgreSQL takes as NOTHING: once the connector's publication"
              + " includes it, PostgreSQL refuses its UPDATEs and DELETEs. ALTER TABLE"
              + " inventory.accounts REPLICA IDENTITY DEFAULT");
      pg.execute("CREATE PUBLICATION lakestream FOR TABLE inventory.accounts");
      assertThatThrownBy(() -> pg.execute("UPDATE inventory.accounts SET email = 'b@example.com'"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("does not have a replica identity and publishes updates");
      pg.execute("ALTER TABLE inventory.accounts REPLICA IDENTITY DEFAULT");
      pg.execute("UPDATE inventory.accounts SET email = 'b@example.com'");
      Run remedied = checkSource(pg, Map.of());
      assertThat(remedied.output()).doesNotContain("since dropped");
    }
  }

  /**
   * A partitioned table without a key, captured through its root with {@code REPLICA IDENTITY
   * FULL}: that identity is the root's only, and the publication the shipped connector makes
   * publishes the partitions, whose updates PostgreSQL then refuses. A blocker naming the
   * partitions, shown on the server with the publication the connector makes.
   */
  @Test
  void partitionsOfACapturedRootWithoutAReplicaIdentityOfTheirOwnAreBlockers() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, name varchar(40))",
          "CREATE TABLE inventory.logs (at date, what text) PARTITION BY RANGE (at)",
          "CREATE TABLE inventory.logs_2026 PARTITION OF inventory.logs"
              + " FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
          "ALTER TABLE inventory.logs REPLICA IDENTITY FULL",
          "INSERT INTO inventory.logs VALUES ('2026-12-05', 'started')");
      Map<String, String> connector = Map.of(
          "table.exclude.list", "inventory\\.logs_2026",
          "message.key.columns", "inventory.logs:at,what");
      Run run = checkSource(pg, connector);
      assertThat(run.exit()).as(run.output()).isEqualTo(1);
      assertThat(run.output())
          .contains("BLOCKER  publication lakestream: will publish the captured tables with their"
              + " partitions (publication.autocreate.mode=filtered), 1 partition(s) the connector"
              + " does not capture among them without a replica identity: inventory.logs_2026."
              + " Once the publication includes them, PostgreSQL refuses their UPDATEs and"
              + " DELETEs")
          .contains("Give each a primary key or REPLICA IDENTITY FULL");

      // The publication the connector makes, and what PostgreSQL then does.
      pg.execute("CREATE PUBLICATION lakestream FOR TABLE inventory.customers, inventory.logs"
          + " WITH (publish_via_partition_root = true)");
      assertThatThrownBy(() -> pg.execute("UPDATE inventory.logs SET what = 'stopped'"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("\"logs_2026\" because it does not have a replica identity");
      assertThat(checkSource(pg, connector).output())
          .contains("BLOCKER  publication lakestream: publishes 1 table(s) the connector does not"
              + " capture without a replica identity: inventory.logs_2026. While it does");

      pg.execute("ALTER TABLE inventory.logs_2026 REPLICA IDENTITY FULL");
      pg.execute("UPDATE inventory.logs SET what = 'stopped'");
      Run remedied = checkSource(pg, connector);
      assertThat(remedied.exit()).as(remedied.output()).isZero();
    }
  }

  /**
   * Connector settings that lose changes without anything failing are named with the setting that
   * keeps them, through the command as a user runs it on their own connector JSON.
   */
  @Test
  void connectorSettingsThatLoseChangesSilentlyAreNamed() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start()) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, name varchar(40))");
      Run run = checkSource(
          pg,
          Map.of(
              "skipped.operations", "t",
              "heartbeat.interval.ms", "0",
              "transforms", "unwrap",
              "transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState"));
      assertThat(run.exit()).as(run.output()).isEqualTo(1);
      assertThat(run.output())
          .contains("WARNING  skipped.operations: t: Debezium publishes no TRUNCATE")
          .contains("WARNING  heartbeat.interval.ms: 0: while the captured tables do not change,"
              + " the replication slot keeps every byte of WAL the server writes for other tables")
          .contains("BLOCKER  transforms.unwrap: io.debezium.transforms.ExtractNewRecordState"
              + " reshapes each change event")
          .contains("1 blocker(s)");
    }
  }

  /**
   * A slot may be invalidated when {@code max_slot_wal_keep_size} bounds the WAL it keeps: the
   * setting is warned of, and the connector's slot, once lost, is a blocker naming the recovery.
   */
  @Test
  void aBoundOnTheWalASlotKeepsIsWarnedOfAndALostSlotIsABlocker() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.start(Map.of("max_slot_wal_keep_size", "32MB"))) {
      pg.execute(
          "CREATE SCHEMA inventory",
          "CREATE TABLE inventory.customers (id bigint PRIMARY KEY, name varchar(40))",
          "SELECT pg_create_logical_replication_slot('lakestream', 'pgoutput')");
      Run bounded = checkSource(pg, Map.of());
      assertThat(bounded.output())
          .as(bounded.output())
          .contains("WARNING  max_slot_wal_keep_size: 32MB: a slot that falls further behind")
          .contains("OK       slot lakestream: logical slot of database postgres, plugin pgoutput");

      // More WAL than the bound, then a checkpoint: the slot, never read, is invalidated.
      pg.execute(
          "CREATE TABLE inventory.filler AS SELECT g, repeat('x', 1000) AS v"
              + " FROM generate_series(1, 100000) g",
          "SELECT pg_switch_wal()",
          "CHECKPOINT");
      Run lost = checkSource(pg, Map.of());
      assertThat(lost.exit()).as(lost.output()).isEqualTo(1);
      assertThat(lost.output())
          .contains("BLOCKER  slot lakestream: logical slot of database postgres, plugin pgoutput")
          .contains("the connector's slot, invalidated (wal_status lost): the WAL it needed is"
              + " gone, with the changes in it, and the connector cannot go on from it (Debezium"
              + " 3.6.1 retries reading it, 900 times 2 s apart). Drop the"
              + " slot and recover as the README says (\"A lost replication slot\")");
    }
  }

  /** Runs the command with the shipped connector JSON, its settings overridden by {@code overrides}. */
  static Run checkSource(EmbeddedPostgres pg, Map<String, String> overrides) throws Exception {
    var json = new ObjectMapper()
        .readTree(Files.readString(
            PostgresEndToEndTest.connectorsDir().resolve("postgres-inventory.json")));
    var config = (ObjectNode) json.get("config");
    config.put("database.password", "");
    config.put("database.user", "postgres");
    overrides.forEach(config::put);
    Path file = Files.createTempFile("connector-", ".json");
    Files.writeString(file, json.toString());
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int exit = CheckSourceCommand.run(
        new String[] {"--jdbc", pg.jdbcUrl(), "--connector", file.toString()},
        new PrintStream(bytes, true, StandardCharsets.UTF_8),
        Map.of());
    return new Run(exit, bytes.toString(StandardCharsets.UTF_8));
  }
}
