package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableRows;
import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The column types Debezium's PostgreSQL connector (3.6.1, pgoutput) reads in snapshots but not in
 * streamed changes, or not at all, on real PostgreSQL, Debezium and Kafka; {@code check-source}
 * reports each, and the table shows what it says: a {@code name} column holds null in every row
 * changed after the snapshot, arrays of {@code name}, {@code interval}, {@code money}, {@code xml},
 * {@code varbit}, {@code point} and of a domain are left out, and so are multiranges, {@code
 * pg_lsn} and {@code tsquery}; an array of {@code bit} is always null, an {@code int2vector} or
 * {@code oidvector} always empty, and an array of two dimensions a list of nulls (or, of text,
 * dead-lettered: Debezium sends Java's names of arrays). The columns beside them, {@code varchar(63)} (the fix for {@code name}) and {@code int[]}, equal the
 * source.
 */
class PostgresTypeGapsEndToEndTest {

  private static final TableIdentifier GAPS = TableIdentifier.of("inventory", "gaps");
  private static final List<String> LEFT_OUT = List.of(
      "a_name",
      "a_interval",
      "a_money",
      "a_xml",
      "a_varbit",
      "a_point",
      "mrange",
      "lsn",
      "query",
      "a_domain");

  @Test
  void whatDebeziumLeavesOutOrSendsAsNullIsWhatCheckSourceReports() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        "CREATE DOMAIN inventory.positive AS integer CHECK (VALUE > 0)",
        "CREATE TABLE inventory.gaps (id int PRIMARY KEY, nm name, vc varchar(63), a_name name[],"
            + " a_interval interval[], a_money money[], a_xml xml[], a_varbit varbit[],"
            + " a_point point[], a_bit bit(3)[], a_int int[], grid int[][], flat int[],"
            + " i2v int2vector, ov oidvector, mrange int4multirange, lsn pg_lsn, query tsquery,"
            + " a_domain inventory.positive[], dates date[], flags boolean[], blobs bytea[])",
        "INSERT INTO inventory.gaps VALUES (1, 'first', 'first', '{a}', '{1 day}', '{1.50}',"
            + " ARRAY['<a/>'::xml], '{101}', '{\"(1,2)\"}', '{101}', '{1,2}', '{{1,2},{3,4}}',"
            + " '{{5,6,7},{8,9,0}}', '1 2', '3 4', '{[1,3),[5,7)}', '16/B374D848', 'fat & rat',"
            + " '{1,2}', '{{2020-01-01},{2020-01-02}}', '{{t,f},{f,t}}', ARRAY[ARRAY['\\x01'::bytea],"
            + " ARRAY['\\x02'::bytea]])")) {
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.output())
          .contains("BLOCKER  inventory.gaps.nm: name: Debezium reads it in snapshots but sends"
              + " null for it in every change it streams")
          .contains("WARNING  inventory.gaps.a_bit: bit(3)[]: Debezium sends null for every array"
              + " of bit")
          .contains("BLOCKER  inventory.gaps.grid: integer[] is declared with 2 dimensions:"
              + " Debezium sends an array of more than one dimension as one null per element of"
              + " its first")
          .contains("WARNING  inventory.gaps.i2v: int2vector: Debezium sends every value of it as"
              + " an empty list")
          .contains("WARNING  inventory.gaps.ov: oidvector: Debezium sends every value of it as"
              + " an empty list");
      for (String column : LEFT_OUT) {
        String prefix = "WARNING  inventory.gaps." + column + ": ";
        assertThat(check.output().lines().filter(l -> l.startsWith(prefix)))
            .as(column)
            .singleElement()
            .satisfies(line ->
                assertThat(line).containsAnyOf("out of its events", "leaves the column out"));
      }
      // Declared with one dimension, flat says nothing of the two its values have.
      assertThat(check.output())
          .doesNotContain("inventory.gaps.vc:", "inventory.gaps.a_int:", "inventory.gaps.flat:");

      Eventually.until(
          Duration.ofSeconds(120),
          "the snapshot's row on main",
          () -> mainRows(p).size() == 1);
      assertThat(mainRows(p).get(0))
          .containsEntry("nm", "first")
          .containsEntry("vc", "first")
          .as("what Debezium's snapshot sends of arrays of two dimensions and of vectors")
          .containsEntry("grid", Arrays.asList(null, null))
          .containsEntry("flat", Arrays.asList(null, null))
          .containsEntry("dates", Arrays.asList(null, null))
          .containsEntry("flags", Arrays.asList(null, null))
          .containsEntry("blobs", Arrays.asList(null, null))
          .containsEntry("i2v", List.of())
          .containsEntry("ov", List.of());

      p.postgres.execute(
          "INSERT INTO inventory.gaps SELECT 2, 'second', 'second', a_name, a_interval, a_money,"
              + " a_xml, a_varbit, a_point, a_bit, a_int, grid, flat, i2v, ov, mrange, lsn,"
              + " query, a_domain, dates, flags, blobs FROM inventory.gaps WHERE id = 1",
          "UPDATE inventory.gaps SET nm = 'updated', vc = 'updated' WHERE id = 1");
      Eventually.until(
          Duration.ofSeconds(120),
          "both streamed changes on main",
          () -> mainRows(p).stream().filter(r -> !"first".equals(r.get("vc"))).count() == 2);
      Table table = p.reader.loadTable(GAPS);
      for (String column : LEFT_OUT) {
        assertThat(table.schema().findField(column)).as(column).isNull();
      }
      assertThat(table.schema().findField("a_bit"))
          .as("a_bit, a column of nulls")
          .isNotNull();
      for (Map<String, Object> row : mainRows(p)) {
        assertThat(row.get("vc")).isIn("second", "updated");
        assertThat(row.get("nm")).as("name, streamed").isNull();
        assertThat(row.get("a_bit")).as("bit(3)[]").isNull();
        assertThat(row.get("a_int")).isEqualTo(List.of(1, 2));
        assertThat(row.get("grid"))
            .as("int[][] {{1,2},{3,4}}")
            .isEqualTo(Arrays.asList(null, null));
        for (String column : List.of("dates", "flags", "blobs")) {
          assertThat(row.get(column))
              .as(column + ", two dimensions")
              .isEqualTo(Arrays.asList(null, null));
        }
        assertThat(row.get("flat"))
            .as("int[] {{5,6,7},{8,9,0}}")
            .isEqualTo(Arrays.asList(null, null));
        assertThat(row.get("i2v")).as("int2vector '1 2'").isEqualTo(List.of());
        assertThat(row.get("ov")).as("oidvector '3 4'").isEqualTo(List.of());
      }
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("gaps"));
    }
  }

  /**
   * Text, uuid, inet and enum arrays of two dimensions: Debezium 3.6.1 sends each element of their first
   * dimension as the name of a Java array ({@code [Ljava.lang.String;@74c810e2}), read by the
   * snapshot or streamed.
   * Those changes are dead-lettered with the reason; one-dimensional values beside them reach the
   * table.
   */
  @Test
  void textUuidInetAndEnumArraysOfTwoDimensionsAreDeadLetteredNotWrittenAsJavaArrayNames()
      throws Exception {
    TableIdentifier cells = TableIdentifier.of("inventory", "cells");
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TYPE inventory.mood AS ENUM ('sad', 'ok', 'happy')",
            "CREATE TABLE inventory.cells (id int PRIMARY KEY, v text[], u uuid[], ip inet[],"
                + " m inventory.mood[])",
            "INSERT INTO inventory.cells VALUES (1, '{{a,b},{c,d}}'), (2, '{a,b}')");
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      Eventually.until(
          Duration.ofSeconds(120),
          "the snapshot's one-dimensional row on main",
          () -> p.reader.tableExists(cells)
              && TableRows.read(p.reader.loadTable(cells), Branches.MAIN).size() == 1);
      p.postgres.execute(
          "INSERT INTO inventory.cells (id, v) VALUES (3, '{{{x}}}'),"
              + " (4, '{\"[Ljava.lang.String;@74c810e2\",x}')",
          "INSERT INTO inventory.cells (id, v, u) VALUES"
              + " (5, '{x}', '{{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}}')",
          "INSERT INTO inventory.cells (id, ip) VALUES (6, '{{1.2.3.4},{5.6.7.8}}')",
          "INSERT INTO inventory.cells (id, m) VALUES (7, '{{sad},{ok}}')",
          "UPDATE inventory.cells SET v = '{{e,f},{g,h}}' WHERE id = 2");
      Eventually.until(
          Duration.ofSeconds(120),
          "the streamed one-dimensional row on main",
          () -> TableRows.read(p.reader.loadTable(cells), Branches.MAIN).size() == 2);
      List<ConsumerRecord<byte[], byte[]>> letters = new ArrayList<>();
      Eventually.until(Duration.ofSeconds(60), "six dead letters", () -> {
        letters.clear();
        letters.addAll(feed.readAvailable("lakestream.dlq"));
        return letters.size() >= 6;
      });
      assertThat(letters).hasSize(6);
      List<String> columns = new ArrayList<>();
      for (ConsumerRecord<byte[], byte[]> letter : letters) {
        String reason = KafkaHeaders.text(letter.headers(), DeadLetters.REASON);
        assertThat(reason).contains("is the name of a Java array, not a value");
        columns.add(reason.substring(0, reason.indexOf(": element \"[")));
      }
      assertThat(columns)
          .as("the snapshot's row 1, the streamed rows 3, 5, 6 and 7, the update of row 2")
          .containsExactlyInAnyOrder(
              "column \"v\"",
              "column \"v\"",
              "column \"u\"",
              "column \"v\"",
              "column \"ip\"",
              "column \"m\"");
      Map<List<Object>, Map<String, Object>> byId =
          TableRows.byKey(TableRows.read(p.reader.loadTable(cells), Branches.MAIN), List.of("id"));
      assertThat(byId.keySet()).containsExactlyInAnyOrder(List.of(2), List.of(4));
      assertThat(byId.get(List.of(2)))
          .as("its update dead-lettered")
          .containsEntry("v", List.of("a", "b"));
      assertThat(byId.get(List.of(4)))
          .as("a text like a Java array's name, but one-dimensional")
          .containsEntry("v", List.of("[Ljava.lang.String;@74c810e2", "x"));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("cells"));
    }
  }

  /**
   * PostgreSQL's 'infinity' and '-infinity' dates, timestamps and arrays of them, read by Debezium
   * through JDBC in the snapshot and decoded from the stream after it: each way the table holds the
   * same values, the dates of Debezium's timestamp sentinels. (The snapshot's dates and every
   * {@code date[]} element arrive as another overflowed day count than streamed dates, and were
   * dead-lettered.)
   */
  @Test
  void infiniteDatesAndTimestampsAreTheSameOnTheTableFromTheSnapshotAndFromTheStream()
      throws Exception {
    String rows =
        " VALUES (%d, 'infinity', '-infinity', 'infinity', '-infinity', '-infinity', NULL, NULL),"
            + " (%d, NULL, NULL, NULL, NULL, NULL, '{infinity,-infinity,2020-01-01}',"
            + " '{infinity,-infinity,2020-01-01 10:00:00}')";
    TableIdentifier endless = TableIdentifier.of("inventory", "endless");
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TABLE inventory.endless (id int PRIMARY KEY, d date, d2 date, ts timestamp,"
                + " ts2 timestamp, tstz timestamptz, da date[], tsa timestamp[])",
            "INSERT INTO inventory.endless" + String.format(rows, 1, 2));
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      Eventually.until(
          Duration.ofSeconds(120),
          "the snapshot's two rows on main",
          () -> p.reader.tableExists(endless)
              && TableRows.read(p.reader.loadTable(endless), Branches.MAIN).size() == 2);
      p.postgres.execute("INSERT INTO inventory.endless" + String.format(rows, 11, 12));
      Eventually.until(
          Duration.ofSeconds(120),
          "the streamed rows on main",
          () -> TableRows.read(p.reader.loadTable(endless), Branches.MAIN).size() == 4);
      Map<List<Object>, Map<String, Object>> byId = TableRows.byKey(
          TableRows.read(p.reader.loadTable(endless), Branches.MAIN), List.of("id"));
      LocalDate infinity = LocalDate.of(294247, 1, 10);
      LocalDate minusInfinity = LocalDate.of(-290308, 12, 21);
      assertThat(byId.get(List.of(1)))
          .containsEntry("d", infinity)
          .containsEntry("d2", minusInfinity);
      assertThat(byId.get(List.of(2)).get("da"))
          .isEqualTo(List.of(infinity, minusInfinity, LocalDate.of(2020, 1, 1)));
      for (int id : List.of(1, 2)) {
        Map<String, Object> snapshot = new HashMap<>(byId.get(List.of(id)));
        Map<String, Object> streamed = new HashMap<>(byId.get(List.of(id + 10)));
        snapshot.remove("id");
        streamed.remove("id");
        assertThat(snapshot)
            .as("row %d from the snapshot, row %d streamed", id, id + 10)
            .isEqualTo(streamed);
      }
      assertThat(byId.get(List.of(11)))
          .containsEntry("ts", LocalDateTime.of(294247, 1, 10, 4, 0, 25, 200_000_000))
          .containsEntry("ts2", LocalDateTime.of(-290308, 12, 21, 19, 59, 27, 600_000_000));
      assertThat(feed.readAvailable("lakestream.dlq")).as("dead letters").isEmpty();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("endless"));
    }
  }

  /**
   * Time arrays and a {@code timetz} of 24:00, as Debezium sends them from a snapshot and from the
   * stream alike: it reads array elements with pgjdbc's {@code java.sql} types, so a {@code time[]}
   * element keeps milliseconds only and a {@code timetz[]} element no fraction at all, and its
   * parser of {@code timetz} takes 24:00:00+00 for midnight; a {@code -infinity} in a {@code
   * timestamptz[]} arrives as a year past Iceberg's timestamps and the change is dead-lettered.
   * {@code check-source} tells of each such column.
   */
  @Test
  void timeArraysAndMidnightAtTheDaysEndArriveAsDebeziumReadsThem() throws Exception {
    String rows = " VALUES (%d, '{10:15:30.123456}', '{10:15:30.123456+05:30}', '24:00:00+00',"
        + " '{4713-01-01 BC,1582-10-05}')";
    TableIdentifier clocks = TableIdentifier.of("inventory", "clocks");
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TABLE inventory.clocks (id int PRIMARY KEY, tms time[], tzs timetz[],"
                + " tz timetz, dts date[])",
            "INSERT INTO inventory.clocks" + String.format(rows, 1),
            "CREATE TABLE inventory.ends (id int PRIMARY KEY, tss timestamptz[])",
            "INSERT INTO inventory.ends VALUES (1, '{2020-01-01 00:00:00+00}'),"
                + " (2, '{-infinity,2020-01-01 00:00:00+00}')");
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.output())
          .contains("inventory.clocks.tms: time without time zone[]: Debezium reads the elements"
              + " of a time array to the millisecond")
          .contains("inventory.clocks.tzs: time with time zone[]: Debezium reads the elements of"
              + " a timetz array to the second")
          .contains("inventory.clocks.tz: time with time zone: Debezium sends 24:00:00")
          .contains("inventory.ends.tss: timestamp with time zone[]: Debezium reads a -infinity"
              + " element")
          .contains("inventory.clocks.dts: date[]: Debezium reads the elements of a date array"
              + " through JDBC, streamed changes too");
      Eventually.until(
          Duration.ofSeconds(120),
          "the snapshot's row on main",
          () -> p.reader.tableExists(clocks)
              && TableRows.read(p.reader.loadTable(clocks), Branches.MAIN).size() == 1);
      p.postgres.execute("INSERT INTO inventory.clocks" + String.format(rows, 11));
      Eventually.until(
          Duration.ofSeconds(120),
          "the streamed row on main",
          () -> TableRows.read(p.reader.loadTable(clocks), Branches.MAIN).size() == 2);
      Map<List<Object>, Map<String, Object>> byId =
          TableRows.byKey(TableRows.read(p.reader.loadTable(clocks), Branches.MAIN), List.of("id"));
      for (int id : List.of(1, 11)) {
        assertThat(byId.get(List.of(id)))
            .as("row %d", id)
            .containsEntry("tms", List.of(LocalTime.of(10, 15, 30, 123_000_000)))
            .containsEntry("tzs", List.of("04:45:30Z"))
            .containsEntry("tz", "00:00:00Z")
            .containsEntry("dts", List.of(LocalDate.of(4713, 1, 1), LocalDate.of(1582, 10, 15)));
      }
      List<ConsumerRecord<byte[], byte[]>> letters = new ArrayList<>();
      Eventually.until(Duration.ofSeconds(120), "the -infinity row dead-lettered", () -> {
        letters.addAll(feed.readAvailable("lakestream.dlq"));
        return !letters.isEmpty();
      });
      assertThat(letters).hasSize(1);
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("tss");
      Eventually.until(
          Duration.ofSeconds(120),
          "the other row of ends on main",
          () -> p.reader.tableExists(TableIdentifier.of("inventory", "ends"))
              && TableRows.read(
                          p.reader.loadTable(TableIdentifier.of("inventory", "ends")),
                          Branches.MAIN)
                      .size()
                  == 1);
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("clocks", "ends"));
    }
  }

  /**
   * What Debezium streams as null although the row holds a value, a {@code name} column in every
   * change and an unchanged out-of-line {@code numeric[]} or {@code boolean[]} in an update, is
   * filled by Debezium's reselect post-processor with the settings {@code check-source} prints: on
   * {@code reselected} every value equals the source through updates, inserts, deletes and values
   * set to null. Beside it the same changes show the loss it prevents: on {@code plain} the arrays
   * of updated rows and the names of streamed rows are null; {@code REPLICA IDENTITY FULL} ({@code
   * full}) keeps the arrays but not the names.
   */
  @Test
  void nullsDebeziumStreamsForNamesAndToastedArraysAreFilledByItsReselectPostProcessor()
      throws Exception {
    List<String> tables = List.of("plain", "full", "reselected");
    List<String> statements = new ArrayList<>();
    for (String table : tables) {
      statements.add("CREATE TABLE inventory." + table
          + " (id int PRIMARY KEY, small int, nums numeric[], flags boolean[], nm name)");
      // Out of line whenever the row is over about 2 kB, uncompressed: every row here is.
      statements.add("ALTER TABLE inventory." + table
          + " ALTER COLUMN nums SET STORAGE EXTERNAL, ALTER COLUMN flags SET STORAGE EXTERNAL");
      statements.add(insertArrays(table, 1, 20));
    }
    statements.add("ALTER TABLE inventory.full REPLICA IDENTITY FULL");
    Map<String, String> reselector = Map.of(
        "post.processors", "reselector",
        "post.processors.reselector.type",
            "io.debezium.processors.reselect.ReselectColumnsPostProcessor",
        "post.processors.reselector.reselect.columns.include.list",
            "inventory\\.reselected:nums,inventory\\.reselected:flags,inventory\\.reselected:nm",
        "post.processors.reselector.reselect.null.values", "true");
    try (PostgresPipeline p =
        PostgresPipeline.start(reselector, statements.toArray(String[]::new))) {
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, reselector);
      assertThat(check.output())
          .contains("BLOCKER  inventory.plain.nm: name: Debezium reads it in snapshots but sends"
              + " null for it in every change it streams")
          .contains("have the connector reselect it (a query of the row by its key for each change"
              + " of the table): \"post.processors\": \"reselector\","
              + " \"post.processors.reselector.type\":"
              + " \"io.debezium.processors.reselect.ReselectColumnsPostProcessor\","
              + " \"post.processors.reselector.reselect.columns.include.list\":"
              + " \"inventory\\\\.plain:nm\","
              + " \"post.processors.reselector.reselect.null.values\": \"true\"")
          .contains(
              "WARNING  inventory.plain: column(s) [nums numeric[], flags boolean[]]: Debezium"
                  + " has no placeholder")
          .contains("or have the connector reselect them: \"post.processors\": \"reselector\",")
          .contains("\"post.processors.reselector.reselect.columns.include.list\":"
              + " \"inventory\\\\.plain:nums,inventory\\\\.plain:flags\"")
          .contains("BLOCKER  inventory.full.nm: name:")
          .doesNotContain(
              "inventory.full: column(s) [nums numeric[]",
              "inventory.reselected.nm:",
              "inventory.reselected: column(s) [nums numeric[]");

      Eventually.noDifference(Duration.ofSeconds(120), () -> tables.stream()
          .map(t -> arraysDiffer(p, t))
          .filter(d -> d != null)
          .findFirst()
          .orElse(null));
      for (String table : tables) {
        p.postgres.execute(
            "UPDATE inventory." + table + " SET small = small + 100",
            insertArrays(table, 101, 120),
            "UPDATE inventory." + table + " SET nums = NULL, small = -small WHERE id IN (3, 103)",
            "UPDATE inventory." + table + " SET nm = 'renamed' || id WHERE id IN (4, 104)",
            "DELETE FROM inventory." + table + " WHERE id IN (5, 105)",
            // Gone when the connector reads the update: its reselect finds no row.
            "UPDATE inventory." + table + " SET small = 0 WHERE id = 6",
            "DELETE FROM inventory." + table + " WHERE id = 6");
      }
      Eventually.noDifference(Duration.ofSeconds(120), () -> arraysDiffer(p, "reselected"));
      // The other two have taken every change once each small equals the source's.
      for (String table : List.of("plain", "full")) {
        Eventually.until(
            Duration.ofSeconds(120),
            "every change of " + table + " on main",
            () -> differences(p, table).stream().noneMatch(d -> d.endsWith(".small")));
      }
      List<String> plain = differences(p, "plain");
      // Left: 18 rows of the snapshot (5 and 6 deleted), all updated, and 19 inserted (105
      // deleted), of which 103 and 104 updated.
      assertThat(plain)
          .as("plain: the arrays each update left unchanged (18 nums, 3's set to null; 20 flags),"
              + " and the names of all 37 rows, each streamed")
          .hasSize(18 + 20 + 37)
          .contains("1.nums", "1.flags", "3.flags", "104.nums", "104.flags", "4.nm", "101.nm")
          .doesNotContain("3.nums", "103.nums", "101.nums", "101.flags");
      assertThat(differences(p, "full"))
          .as("full: the names only")
          .hasSize(37)
          .allMatch(d -> d.endsWith(".nm"));
      PostgresEndToEndTest.assertInvariants(p.reader, tables);
    }
  }

  /** Rows {@code from} to {@code to} of a table of the reselect test, over 2 kB each. */
  private static String insertArrays(String table, int from, int to) {
    return "INSERT INTO inventory." + table + " SELECT g, g,"
        + " ARRAY(SELECT round((random() * 1e6)::numeric, 3) FROM generate_series(1, 1000)),"
        + " ARRAY(SELECT random() < 0.5 FROM generate_series(1, 3000)), 'n' || g"
        + " FROM generate_series(" + from + ", " + to + ") g";
  }

  /** Null when {@link #differences} finds none, else the differences. */
  private static String arraysDiffer(PostgresPipeline p, String table) {
    return SourceTableComparison.differing(table, () -> differences(p, table));
  }

  /**
   * The values of a table of the reselect test on main that differ from the source's, as {@code
   * id.column} (numbers compared by value: main's decimals have scale 18), and {@code id.row} for a
   * row on one side only.
   */
  private static List<String> differences(PostgresPipeline p, String table) throws Exception {
    try (Connection c = p.postgres.connect()) {
      return SourceTableComparison.byColumn(
          p.reader,
          c,
          "SELECT id, small, nums, flags, nm FROM inventory." + table,
          TableIdentifier.of("inventory", table),
          (key, rs, row, out) -> {
            if (!Integer.valueOf(rs.getInt(2)).equals(row.get("small"))) {
              out.add(key + ".small");
            }
            List<BigDecimal> nums = rs.getArray(3) == null
                ? null
                : Arrays.asList((BigDecimal[]) rs.getArray(3).getArray());
            if (!sameNumbers(nums, row.get("nums"))) {
              out.add(key + ".nums");
            }
            if (!Objects.equals(
                Arrays.asList((Boolean[]) rs.getArray(4).getArray()), row.get("flags"))) {
              out.add(key + ".flags");
            }
            if (!Objects.equals(rs.getString(5), row.get("nm"))) {
              out.add(key + ".nm");
            }
          });
    }
  }

  private static boolean sameNumbers(List<BigDecimal> source, Object table) {
    if (source == null || table == null) {
      return source == table;
    }
    List<?> values = (List<?>) table;
    if (values.size() != source.size()) {
      return false;
    }
    for (int i = 0; i < values.size(); i++) {
      if (source.get(i).compareTo((BigDecimal) values.get(i)) != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Primary keys of types Iceberg takes as no identifier field (floating point, arrays): each change
   * of such a table is dead-lettered with the reason, {@code check-source} blocks it, and the
   * tables beside it flow on.
   */
  @Test
  void keysIcebergCannotTakeAreDeadLetteredAndReportedByCheckSource() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TABLE inventory.measures (x float8 PRIMARY KEY, v text)",
            "CREATE TABLE inventory.tagged (tags int[] PRIMARY KEY, v text)",
            "CREATE TABLE inventory.fine (id int PRIMARY KEY, v text)",
            "INSERT INTO inventory.measures SELECT g / 4.0, 'm' || g FROM generate_series(1, 10) g",
            "INSERT INTO inventory.tagged SELECT ARRAY[g, g + 1], 't' || g FROM generate_series(1, 10) g",
            "INSERT INTO inventory.fine SELECT g, 'f' || g FROM generate_series(1, 10) g");
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, Map.of());
      assertThat(check.output())
          .contains("BLOCKER  inventory.measures: key column(s) [x double precision]: Iceberg takes"
              + " no floating-point or array column as a key")
          .contains("BLOCKER  inventory.tagged: key column(s) [tags integer[]]")
          .doesNotContain("BLOCKER  inventory.fine");
      // 10 snapshot reads and 10 updates of measures, 10 reads and a delete of tagged.
      List<ConsumerRecord<byte[], byte[]>> letters = lettersWhileFineFlows(
          p,
          feed,
          31,
          "UPDATE inventory.measures SET v = v || '+'",
          "DELETE FROM inventory.tagged WHERE v = 't1'",
          "UPDATE inventory.fine SET v = v || '+' WHERE id % 2 = 0");
      assertThat(letters).hasSize(31);
      for (ConsumerRecord<byte[], byte[]> letter : letters) {
        String table =
            KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC).substring("dbserver1.".length());
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .as(table)
            .contains("table " + table + " cannot take key column")
            .contains("message.key.columns");
      }
      assertThat(p.reader.tableExists(TableIdentifier.of("inventory", "measures")))
          .isFalse();
      assertThat(p.reader.tableExists(TableIdentifier.of("inventory", "tagged")))
          .isFalse();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("fine"));
    }
  }

  /**
   * A connector that masks a key column (Debezium's {@code column.mask.hash.*}) hashes the row's
   * value and not the record key's: ingest dead-letters every insert and update of the table with
   * that reason (before, the key deleted nothing and the hashed row stood beside it), the other
   * tables go on, and check-source blocks the setting first.
   */
  @Test
  void aKeyColumnTheConnectorMasksIsDeadLetteredAndABlockerForCheckSource() throws Exception {
    Map<String, String> mask =
        Map.of("column.mask.hash.SHA-256.with.salt.s1", "inventory.codes.code");
    try (PostgresPipeline p = PostgresPipeline.start(
            mask,
            "CREATE TABLE inventory.codes (code varchar(20) PRIMARY KEY, v text)",
            "CREATE TABLE inventory.fine (id int PRIMARY KEY, v text)",
            "INSERT INTO inventory.codes SELECT 'c' || g, 'v' || g FROM generate_series(1, 5) g",
            "INSERT INTO inventory.fine SELECT g, 'f' || g FROM generate_series(1, 5) g");
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, mask).output())
          .contains("BLOCKER  inventory.codes: key column(s) [code"
              + " (column.mask.hash.SHA-256.with.salt.s1)] masked or truncated by the connector")
          .doesNotContain("BLOCKER  inventory.fine");
      // 5 snapshot reads and 5 updates of codes.
      List<ConsumerRecord<byte[], byte[]>> letters = lettersWhileFineFlows(
          p,
          feed,
          10,
          "UPDATE inventory.codes SET v = v || '+'",
          "UPDATE inventory.fine SET v = v || '+'");
      assertThat(letters).hasSize(10);
      for (ConsumerRecord<byte[], byte[]> letter : letters) {
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains("the record's key has code = c")
            .contains("column.mask.* or column.truncate.*");
      }
      TableIdentifier codes = TableIdentifier.of("inventory", "codes");
      assertThat(
              p.reader.tableExists(codes)
                  ? TableRows.read(p.reader.loadTable(codes), Branches.MAIN)
                  : List.of())
          .isEmpty();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("fine"));
    }
  }

  /**
   * Waits for inventory.fine's snapshot on both branches, runs {@code statements}, waits for
   * inventory.fine again, then for {@code count} dead letters; returns those read.
   */
  private static List<ConsumerRecord<byte[], byte[]>> lettersWhileFineFlows(
      PostgresPipeline p, KafkaChangeFeed feed, int count, String... statements) throws Exception {
    TableIdentifier fine = TableIdentifier.of("inventory", "fine");
    Eventually.noDifference(
        Duration.ofSeconds(120),
        () -> p.differs("SELECT * FROM inventory.fine", fine, List.of("id")));
    p.postgres.execute(statements);
    Eventually.noDifference(
        Duration.ofSeconds(120),
        () -> p.differs("SELECT * FROM inventory.fine", fine, List.of("id")));
    feed.read("lakestream.dlq", count); // waits for them
    return feed.readAvailable("lakestream.dlq");
  }

  private static List<Map<String, Object>> mainRows(PostgresPipeline p) {
    return p.reader.tableExists(GAPS)
        ? TableRows.read(p.reader.loadTable(GAPS), Branches.MAIN)
        : List.of();
  }
}
