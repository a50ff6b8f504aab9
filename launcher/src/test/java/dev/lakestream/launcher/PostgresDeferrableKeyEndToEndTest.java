package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.TableRows;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * What check-source warns of for a DEFERRABLE primary key, on real PostgreSQL, Debezium and
 * Kafka: one statement shifts every key by one, so each row takes the key of the next before the
 * next moves on. Debezium publishes each move as the delete of the old key and the insert of the
 * new, and the delete of a key comes after the insert of the row that took it: the table keeps
 * only the last row. The remedy the warning names, an incremental snapshot of the table, makes
 * main equal {@code SELECT *} again.
 */
class PostgresDeferrableKeyEndToEndTest {

  private static final TableIdentifier SLOTS = TableIdentifier.of("inventory", "slots");

  @Test
  void keysShiftedThroughADeferrableKeyLoseRowsUntilAnIncrementalSnapshot() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(
        Map.of(),
        "CREATE TABLE inventory.slots (id int, v text,"
            + " CONSTRAINT slots_pk PRIMARY KEY (id) DEFERRABLE INITIALLY IMMEDIATE)",
        "ALTER TABLE inventory.slots REPLICA IDENTITY FULL",
        "INSERT INTO inventory.slots SELECT g, 'v' || g FROM generate_series(1, 10) g")) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));

      p.postgres.execute("UPDATE inventory.slots SET id = id + 1");
      Eventually.until(
          Duration.ofSeconds(120),
          "the shift on main (the row of the last key)",
          () -> TableRows.read(p.reader.loadTable(SLOTS), Branches.MAIN).stream()
              .anyMatch(r -> Integer.valueOf(11).equals(r.get("id"))));
      assertThat(TableRows.read(p.reader.loadTable(SLOTS), Branches.MAIN))
          .as("main after the shift: the rows whose key was taken are lost")
          .hasSizeLessThan(10);

      p.incrementalSnapshot("inventory.slots");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("slots"));
    }
  }

  private static String differs(PostgresPipeline p) throws Exception {
    return p.differs("SELECT * FROM inventory.slots", SLOTS, List.of("id"));
  }
}
