package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.testkit.Eventually;
import java.sql.Connection;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * What applications do inside transactions, on real PostgreSQL 15, Debezium and Kafka: savepoints
 * rolled back and released (nested, and after a failed statement), a key inserted, deleted and
 * inserted again, keys moved away and back, {@code INSERT ... ON CONFLICT}, {@code MERGE}, writable
 * CTEs that delete and insert the same keys, one statement moving many keys, one row updated 50
 * times, a rolled back transaction, and two transactions interleaved on the same key. Logical
 * decoding sends only what committed, in commit order; after all of it both branches equal {@code
 * SELECT *} and the invariants hold.
 */
class PostgresTransactionShapesEndToEndTest {
  private static final TableIdentifier SHAPES = TableIdentifier.of("inventory", "shapes");

  @Test
  void transactionShapesApplicationsUseLeaveBothBranchesEqualToTheSource() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        "CREATE TABLE inventory.shapes (id int PRIMARY KEY, v text, n int)",
        "INSERT INTO inventory.shapes SELECT g, 'v' || g, g FROM generate_series(1, 200) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      try (Connection c = p.postgres.connect();
          Statement s = c.createStatement()) {
        c.setAutoCommit(false);
        // Savepoints: rolled back, released, nested.
        s.execute("UPDATE inventory.shapes SET v = 'a1' WHERE id = 1");
        Savepoint sp = c.setSavepoint("sp1");
        s.execute("UPDATE inventory.shapes SET v = 'rolledback' WHERE id = 1");
        s.execute("DELETE FROM inventory.shapes WHERE id = 2");
        s.execute("INSERT INTO inventory.shapes VALUES (1001, 'rb', 0)");
        c.rollback(sp);
        Savepoint sp2 = c.setSavepoint("sp2");
        s.execute("DELETE FROM inventory.shapes WHERE id = 3");
        s.execute("INSERT INTO inventory.shapes VALUES (3, 'reinserted', 33)");
        c.releaseSavepoint(sp2);
        Savepoint sp3 = c.setSavepoint("sp3");
        Savepoint sp4 = c.setSavepoint("sp4");
        s.execute("UPDATE inventory.shapes SET n = -4 WHERE id = 4");
        c.releaseSavepoint(sp4); // the inner one's change goes with the outer one's rollback
        c.rollback(sp3);
        s.execute("UPDATE inventory.shapes SET n = 44 WHERE id = 4");
        c.commit();
        // A key inserted, deleted and inserted again; keys moved away and back.
        s.execute("INSERT INTO inventory.shapes VALUES (2000, 'x', 1)");
        s.execute("DELETE FROM inventory.shapes WHERE id = 2000");
        s.execute("INSERT INTO inventory.shapes VALUES (2000, 'y', 2)");
        s.execute("UPDATE inventory.shapes SET id = 2001 WHERE id = 5");
        s.execute("INSERT INTO inventory.shapes VALUES (5, 'five again', 5)");
        s.execute("UPDATE inventory.shapes SET id = 2002 WHERE id = 5");
        s.execute("UPDATE inventory.shapes SET id = 5 WHERE id = 2001");
        c.commit();
        // Upserts, MERGE, and writable CTEs that delete and insert the same keys.
        s.execute(
            "INSERT INTO inventory.shapes VALUES (6, 'up', 6), (3000, 'new', 0)"
                + " ON CONFLICT (id) DO UPDATE SET v = excluded.v || '!', n = inventory.shapes.n + 100");
        s.execute("INSERT INTO inventory.shapes VALUES (7, 'nothing', 7) ON CONFLICT DO NOTHING");
        c.commit();
        s.execute(
            "MERGE INTO inventory.shapes t USING (SELECT g AS id FROM generate_series(8, 12) g"
                + " UNION ALL SELECT 3001) src ON t.id = src.id"
                + " WHEN MATCHED AND t.id % 2 = 0 THEN DELETE"
                + " WHEN MATCHED THEN UPDATE SET v = 'merged'"
                + " WHEN NOT MATCHED THEN INSERT VALUES (src.id, 'merged-in', 0)");
        c.commit();
        s.execute("WITH d AS (DELETE FROM inventory.shapes WHERE id BETWEEN 20 AND 25 RETURNING *)"
            + " INSERT INTO inventory.shapes SELECT id, v || '-back', n + 1 FROM d");
        s.execute("WITH d AS (DELETE FROM inventory.shapes WHERE id BETWEEN 30 AND 35 RETURNING *)"
            + " INSERT INTO inventory.shapes SELECT id + 5000, v, n FROM d");
        c.commit();
        // One statement moving keys, one row many times, a transaction rolled back.
        s.execute("UPDATE inventory.shapes SET id = -id WHERE id BETWEEN 40 AND 60");
        c.commit();
        for (int i = 0; i < 50; i++) {
          s.execute("UPDATE inventory.shapes SET n = " + i + " WHERE id = 70");
        }
        c.commit();
        s.execute("DELETE FROM inventory.shapes WHERE id = 71");
        c.rollback();
        // Two transactions interleaved: committed in another order than they began.
        try (Connection c2 = p.postgres.connect();
            Statement s2 = c2.createStatement()) {
          c2.setAutoCommit(false);
          s.execute("UPDATE inventory.shapes SET v = 'A' WHERE id = 80");
          s2.execute("UPDATE inventory.shapes SET v = 'B' WHERE id = 81");
          s2.execute("INSERT INTO inventory.shapes VALUES (4000, 'B', 0)");
          c2.commit();
          s.execute("DELETE FROM inventory.shapes WHERE id = 4000");
          c.commit();
          s2.execute("INSERT INTO inventory.shapes VALUES (4000, 'B2', 0)");
          s.execute("UPDATE inventory.shapes SET v = 'A2' WHERE id = 82");
          c.commit();
          c2.commit();
        }
        // A failed statement inside a transaction, rolled back to its savepoint.
        s.execute("SAVEPOINT e");
        assertThatThrownBy(() -> s.execute("INSERT INTO inventory.shapes VALUES (90, 'dup', 0)"))
            .hasMessageContaining("duplicate key");
        s.execute("ROLLBACK TO SAVEPOINT e");
        s.execute("UPDATE inventory.shapes SET v = 'after error' WHERE id = 90");
        c.commit();
      }
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("shapes"));
    }
  }

  private static String differs(PostgresPipeline p) throws Exception {
    return p.differs("SELECT id, v, n FROM inventory.shapes", SHAPES, List.of("id"));
  }
}
