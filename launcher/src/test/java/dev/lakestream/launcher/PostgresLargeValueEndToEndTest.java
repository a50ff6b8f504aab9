package dev.lakestream.launcher;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * Values of megabytes, on real PostgreSQL, Debezium and Kafka: a 3 MB text and a 2 MB bytea of
 * random bytes in one row, inserted, then left unchanged by an update of another column (TOAST),
 * then changed. With Kafka's defaults the connector cannot send such a record (larger than
 * {@code max.request.size}) and its task stops for every table; the shipped connector allows
 * records up to 16 MiB, and the table holds each value as the source does.
 */
class PostgresLargeValueEndToEndTest {

  private static final TableIdentifier DOCS = TableIdentifier.of("inventory", "docs");

  @Test
  void rowsOfMegabytesReachTheTableWhole() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        "CREATE TABLE inventory.docs (id int PRIMARY KEY, body text, blob bytea, v int)",
        "INSERT INTO inventory.docs VALUES (1, 'small', '\\x00', 1)")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      p.postgres.execute(
          "INSERT INTO inventory.docs SELECT 2,"
              + " (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100000) g),"
              + " (SELECT string_agg(decode(md5(random()::text), 'hex'), ''::bytea)"
              + " FROM generate_series(1, 131072)), 1",
          "INSERT INTO inventory.docs VALUES (3, 'after the large one', '\\x01', 1)");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      // An update that leaves both unchanged: PostgreSQL sends neither (TOAST), ingest fills them.
      p.postgres.execute("UPDATE inventory.docs SET v = v + 1");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      p.postgres.execute("UPDATE inventory.docs SET body = body || 'x', v = v + 1 WHERE id = 2");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("docs"));
    }
  }

  /**
   * Null when both branches hold the source's rows: each value's length and digest, so that
   * megabytes are not compared character by character in messages.
   */
  private static String differs(PostgresPipeline p) throws Exception {
    Map<Integer, String> expected = new HashMap<>();
    try (Connection c = p.postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT id, length(body), md5(body), length(blob),"
            + " md5(blob), v FROM inventory.docs")) {
      while (rs.next()) {
        expected.put(
            rs.getInt(1),
            rs.getLong(2) + ":" + rs.getString(3) + ":" + rs.getLong(4) + ":" + rs.getString(5)
                + ":" + rs.getInt(6));
      }
    }
    if (!p.reader.tableExists(DOCS)) {
      return "no table yet";
    }
    for (String branch : List.of(Branches.REALTIME, Branches.MAIN)) {
      Map<Integer, String> actual = new HashMap<>();
      for (Map<String, Object> row : TableRows.read(p.reader.loadTable(DOCS), branch)) {
        String body = (String) row.get("body");
        byte[] blob = bytes((ByteBuffer) row.get("blob"));
        actual.put(
            (Integer) row.get("id"),
            body.length() + ":"
                + md5(body.getBytes(StandardCharsets.UTF_8)) + ":" + blob.length + ":" + md5(blob)
                + ":"
                + row.get("v"));
      }
      if (!actual.equals(expected)) {
        return branch + ": expected " + expected + " but was " + actual;
      }
    }
    return null;
  }

  private static byte[] bytes(ByteBuffer buffer) {
    ByteBuffer b = buffer.duplicate();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  private static String md5(byte[] bytes) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(bytes));
  }
}
