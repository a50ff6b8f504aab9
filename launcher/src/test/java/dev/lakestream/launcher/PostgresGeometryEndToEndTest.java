package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import java.io.File;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * PostGIS geometries and geographies, and bit strings, on real PostgreSQL (Debian's PostGIS 3),
 * Debezium and Kafka. Their values reach {@code main} as the source holds them (a geometry as its
 * EWKB and SRID). Debezium has no placeholder for an unchanged out-of-line (TOASTed) value of these
 * types: its converters refuse the text placeholder and it sends null, which nothing tells from a
 * real null, so an {@code UPDATE} of another column empties a large polygon on the table. {@code
 * check-source} reports such columns (a blocker when NOT NULL, where the null stops the connector);
 * {@code REPLICA IDENTITY FULL} or the connector's reselect post-processor keeps them, as the
 * tables beside show.
 */
class PostgresGeometryEndToEndTest {

  @Test
  void largeGeometriesAndBitStringsLeftUnchangedNeedFullIdentityOrReselectAsCheckSourceSays()
      throws Exception {
    assumeTrue(
        postgisInstalled(),
        "PostGIS is not installed for the PostgreSQL the tests run (.ci/run installs it)");
    List<String> tables = List.of("plain", "full", "reselected");
    List<String> statements = new ArrayList<>();
    statements.add("CREATE EXTENSION postgis");
    for (String table : tables) {
      statements.add("CREATE TABLE inventory." + table + " (id int PRIMARY KEY, small int,"
          + " geom geometry(Polygon,4326), geog geography(Point,4326), bits varbit,"
          + " few_bits varbit(8))");
      // Out of line whenever the value is over about 2 kB, uncompressed: every one here is.
      statements.add("ALTER TABLE inventory." + table
          + " ALTER COLUMN geom SET STORAGE EXTERNAL, ALTER COLUMN bits SET STORAGE EXTERNAL");
      statements.add(insertShapes(table, 1, 20));
    }
    statements.add("ALTER TABLE inventory.full REPLICA IDENTITY FULL");
    statements.add("CREATE TABLE inventory.strict (id int PRIMARY KEY, shape geometry NOT NULL,"
        + " flags bit(8000) NOT NULL)");
    Map<String, String> reselector = Map.of(
        "post.processors", "reselector",
        "post.processors.reselector.type",
            "io.debezium.processors.reselect.ReselectColumnsPostProcessor",
        "post.processors.reselector.reselect.columns.include.list",
            "inventory\\.reselected:geom,inventory\\.reselected:bits",
        "post.processors.reselector.reselect.null.values", "true");
    try (PostgresPipeline p =
        PostgresPipeline.start(reselector, statements.toArray(String[]::new))) {
      CheckSourceCommandTest.Run check = CheckSourceCommandTest.checkSource(p.postgres, reselector);
      assertThat(check.output())
          .contains("WARNING  inventory.plain: column(s) [geom geometry(Polygon,4326), bits"
              + " bit varying]: Debezium has no placeholder for an unchanged TOASTed value of"
              + " these types and sends null")
          .contains("\"post.processors.reselector.reselect.columns.include.list\":"
              + " \"inventory\\\\.plain:geom,inventory\\\\.plain:bits\"")
          .contains("BLOCKER  inventory.strict: NOT NULL column(s) [shape geometry, flags"
              + " bit(8000)]: Debezium has no placeholder")
          .contains("INFO     inventory.plain.few_bits: bit varying(8): Debezium sends it as it"
              + " sends a bit(8), its length the declared one, and its encoding drops leading"
              + " zeros: ingest writes 8 bits, a shorter value padded with zeros (in a varbit(8),"
              + " B'101' arrives as 00000101)")
          .doesNotContain(
              "inventory.full: column(s) [geom",
              "inventory.reselected: column(s) [geom",
              "[geom geometry(Polygon,4326)] can be stored out of line",
              "geog geography(Point,4326)");

      Eventually.noDifference(Duration.ofSeconds(120), () -> tables.stream()
          .map(t -> shapesDiffer(p, t))
          .filter(d -> d != null)
          .findFirst()
          .orElse(null));
      assertThat(TableRows.read(
              p.reader.loadTable(TableIdentifier.of("inventory", "plain")), Branches.MAIN))
          .as("B'101' in a varbit(8), as check-source says")
          .allSatisfy(row -> assertThat(row.get("few_bits")).isEqualTo("00000101"));
      for (String table : tables) {
        p.postgres.execute(
            "UPDATE inventory." + table + " SET small = small + 100",
            insertShapes(table, 101, 110),
            "UPDATE inventory." + table + " SET geom = NULL, small = -small WHERE id IN (3, 103)",
            "UPDATE inventory." + table + " SET bits = B'0101', small = 7 WHERE id IN (4, 104)",
            "DELETE FROM inventory." + table + " WHERE id IN (5, 105)");
      }
      Eventually.noDifference(Duration.ofSeconds(120), () -> shapesDiffer(p, "reselected"));
      Eventually.noDifference(Duration.ofSeconds(120), () -> shapesDiffer(p, "full"));
      Eventually.until(
          Duration.ofSeconds(120),
          "every change of plain on main",
          () -> differences(p, "plain").stream().noneMatch(d -> d.endsWith(".small")));
      // Left: 19 rows of the snapshot (5 deleted), all updated; of them 3 set its geometry to
      // null and 4 its bits (so those went with their update), and 9 inserted rows, not updated
      // but 103 and 104.
      assertThat(differences(p, "plain"))
          .as("plain: the geometries and bit strings each update left unchanged")
          .containsExactlyInAnyOrder(
              "1.geom",
              "1.bits",
              "2.geom",
              "2.bits",
              "3.bits",
              "4.geom",
              "6.geom",
              "6.bits",
              "7.geom",
              "7.bits",
              "8.geom",
              "8.bits",
              "9.geom",
              "9.bits",
              "10.geom",
              "10.bits",
              "11.geom",
              "11.bits",
              "12.geom",
              "12.bits",
              "13.geom",
              "13.bits",
              "14.geom",
              "14.bits",
              "15.geom",
              "15.bits",
              "16.geom",
              "16.bits",
              "17.geom",
              "17.bits",
              "18.geom",
              "18.bits",
              "19.geom",
              "19.bits",
              "20.geom",
              "20.bits",
              "103.bits",
              "104.geom");
      PostgresEndToEndTest.assertInvariants(p.reader, tables);
    }
  }

  /** Whether PostGIS is installed for the newest PostgreSQL installed, the one the tests run. */
  private static boolean postgisInstalled() {
    File[] versions = new File("/usr/lib/postgresql").listFiles();
    return versions != null
        && Arrays.stream(versions)
            .map(File::getName)
            .filter(v -> v.matches("\\d+"))
            .max(Comparator.comparingInt(Integer::parseInt))
            .map(
                v -> new File("/usr/share/postgresql/" + v + "/extension/postgis.control").isFile())
            .orElse(false);
  }

  /**
   * Rows {@code from} to {@code to}: a polygon of 401 points (about 6 kB), a point, 20,000 bits
   * that start with a 1 (Debezium's encoding of a varbit drops leading zeros), and 3 bits in a
   * varbit(8).
   */
  private static String insertShapes(String table, int from, int to) {
    return "INSERT INTO inventory." + table + " SELECT g, g,"
        + " ST_SetSRID(ST_Buffer(ST_MakePoint(g, g / 2.0), 1, 100), 4326),"
        + " ST_SetSRID(ST_MakePoint(g / 3.0, g / 7.0), 4326)::geography,"
        + " ('1' || (SELECT string_agg(CASE WHEN random() < 0.5 THEN '1' ELSE '0' END, '')"
        + " FROM generate_series(1, 19999)))::varbit, B'101'"
        + " FROM generate_series(" + from + ", " + to + ") g";
  }

  /** Null when {@link #differences} finds none, else the differences. */
  private static String shapesDiffer(PostgresPipeline p, String table) {
    return SourceTableComparison.differing(table, () -> differences(p, table));
  }

  /**
   * The values of a table on main that differ from the source's, as {@code id.column}, and {@code
   * id.row} for a row on one side only. A geometry is compared as its EWKB (what PostgreSQL sends
   * as its text) and SRID; bits as their text without leading zeros.
   */
  private static List<String> differences(PostgresPipeline p, String table) throws Exception {
    try (Connection c = p.postgres.connect()) {
      return SourceTableComparison.byColumn(
          p.reader,
          c,
          "SELECT id, small, decode(geom::text, 'hex'), ST_SRID(geom), decode(geog::text, 'hex'),"
              + " ST_SRID(geog::geometry), bits::text FROM inventory." + table,
          TableIdentifier.of("inventory", table),
          (key, rs, row, out) -> {
            if (!Integer.valueOf(rs.getInt(2)).equals(row.get("small"))) {
              out.add(key + ".small");
            }
            if (!sameShape(rs.getBytes(3), rs.getInt(4), row.get("geom"))) {
              out.add(key + ".geom");
            }
            if (!sameShape(rs.getBytes(5), rs.getInt(6), row.get("geog"))) {
              out.add(key + ".geog");
            }
            String bits = rs.getString(7);
            if (!Objects.equals(
                bits == null ? null : bits.replaceFirst("^0+(?=.)", ""), row.get("bits"))) {
              out.add(key + ".bits");
            }
          });
    }
  }

  private static boolean sameShape(byte[] ewkb, int srid, Object onTable) {
    if (ewkb == null || onTable == null) {
      return ewkb == null && onTable == null;
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> shape = (Map<String, Object>) onTable;
    ByteBuffer wkb = ((ByteBuffer) shape.get("wkb")).duplicate();
    byte[] bytes = new byte[wkb.remaining()];
    wkb.get(bytes);
    return Arrays.equals(ewkb, bytes) && Integer.valueOf(srid).equals(shape.get("srid"));
  }
}
