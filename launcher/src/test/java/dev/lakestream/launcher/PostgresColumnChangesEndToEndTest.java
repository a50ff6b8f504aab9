package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableRows;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Type;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * The README's "Table and column changes in the source", done as a user would, on real PostgreSQL,
 * Debezium and Kafka: a column renamed and one dropped; a table renamed. Change events carry no DDL, so the new name arrives
 * as a new column, empty in the rows not changed since; an incremental snapshot of the table
 * through Debezium's signal table fills it. Main then equals {@code SELECT *} in every column the
 * source has; the old and the dropped column stay on the table, as the README says.
 */
class PostgresColumnChangesEndToEndTest {

  private static final TableIdentifier ITEMS = TableIdentifier.of("inventory", "items");
  private static final TableIdentifier GOODS = TableIdentifier.of("inventory", "goods");
  private static final String[] ITEMS_WITH_ROWS = {
    "CREATE TABLE inventory.items (id bigint PRIMARY KEY, name text, price int, memo text)",
    "INSERT INTO inventory.items SELECT g, 'n' || g, g, 'm' || g FROM generate_series(1, 200) g"
  };

  @Test
  void aRenamedColumnIsFilledByAnIncrementalSnapshotAndADroppedOneStays() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(Map.of(), ITEMS_WITH_ROWS)) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, "items", ITEMS));

      p.postgres.execute(
          "ALTER TABLE inventory.items RENAME COLUMN name TO title",
          "ALTER TABLE inventory.items DROP COLUMN memo",
          "UPDATE inventory.items SET price = price + 1 WHERE id % 10 = 0");
      Eventually.until(
          Duration.ofSeconds(120),
          "the renamed column on the table, from the changes since",
          () -> p.reader.loadTable(ITEMS).schema().findField("title") != null);
      assertThat(differs(p, "items", ITEMS))
          .as("before the snapshot: the rows not changed since have no title")
          .containsPattern("title: expected n[0-9]+ but was null");

      p.incrementalSnapshot("inventory.items");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p, "items", ITEMS));
      Table table = p.reader.loadTable(ITEMS);
      assertThat(table.schema().findField("name")).as("the column's old name").isNotNull();
      assertThat(table.schema().findField("memo")).as("the dropped column").isNotNull();
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("items"));
    }
  }

  /**
   * A column of out-of-line values renamed: an update that leaves the value unchanged carries
   * Debezium's placeholder under the new name, and the table's row of the key was written before the
   * table had a column of that name, so the value is unknown there (the row used to take a null for
   * it, and the value was then nowhere on main), also once realtime's compaction rewrote the row's
   * file. The update is dead-lettered, the row stays as it was, and an incremental snapshot brings
   * it whole; later updates take the value from it.
   */
  @Test
  void anUnchangedOutOfLineValueOfARenamedColumnIsDeadLetteredNotNulled() throws Exception {
    TableIdentifier docs = TableIdentifier.of("inventory", "docs");
    String query = "SELECT * FROM inventory.docs";
    try (PostgresPipeline p = PostgresPipeline.start(
            Map.of(),
            "CREATE TABLE inventory.docs (id int PRIMARY KEY, body text, v int)",
            // 6,400 characters, kept out of line and uncompressed: PostgreSQL leaves them out of an
            // update that does not change them.
            "ALTER TABLE inventory.docs ALTER COLUMN body SET STORAGE EXTERNAL",
            "INSERT INTO inventory.docs SELECT i, (SELECT string_agg(md5(g::text || i::text), '')"
                + " FROM generate_series(1, 200) g), 0 FROM generate_series(1, 20) i");
        KafkaChangeFeed feed =
            new KafkaChangeFeed(p.kafka.bootstrapServers(), new SourceTableModel())) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(query, docs, List.of("id")));

      // The renamed column on the table, from a change that sets it; then realtime compacted:
      // the file of rows 1 to 19 is rewritten (the row 20's update's, which holds the column, is
      // left in place), and keeps holding no value of the column.
      p.postgres.execute(
          "ALTER TABLE inventory.docs RENAME COLUMN body TO content",
          "UPDATE inventory.docs SET content = content || '+' WHERE id = 20");
      Eventually.until(
          Duration.ofSeconds(120),
          "the renamed column on the table",
          () -> p.reader.loadTable(docs).schema().findField("content") != null);
      RealtimeCompaction.Result compacted =
          RealtimeCompaction.prepare(p.reader.loadTable(docs)).commit();
      assertThat(compacted.dataFilesIn()).as("realtime's data files rewritten").isPositive();

      p.postgres.execute("UPDATE inventory.docs SET v = 1 WHERE id <= 4");
      List<ConsumerRecord<byte[], byte[]>> letters = new ArrayList<>();
      Eventually.until(Duration.ofSeconds(120), "the four updates dead-lettered", () -> {
        letters.addAll(feed.readAvailable("lakestream.dlq"));
        return letters.size() >= 4;
      });
      assertThat(letters).hasSize(4);
      for (ConsumerRecord<byte[], byte[]> letter : letters) {
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains("column(s) [content]")
            .contains("written before it had column(s) [content]")
            .contains("an incremental snapshot of the table");
      }
      assertThat(TableRows.read(p.reader.loadTable(docs), Branches.MAIN))
          .as("rows 1 to 4 on main: as they were before the updates")
          .filteredOn(r -> ((Integer) r.get("id")) <= 4)
          .hasSize(4)
          .allSatisfy(r -> {
            assertThat(r.get("v")).isEqualTo(0);
            assertThat((String) r.get("body")).hasSize(6_400);
          });

      p.incrementalSnapshot("inventory.docs");
      Eventually.noDifference(Duration.ofSeconds(180), () -> p.differs(query, docs, List.of("id")));
      p.postgres.execute("UPDATE inventory.docs SET v = 2 WHERE id <= 6");
      Eventually.noDifference(Duration.ofSeconds(120), () -> p.differs(query, docs, List.of("id")));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("docs"));
    }
  }

  /**
   * A table renamed: its changes arrive on a topic of the new name, and ingest makes a table of
   * it that holds the rows changed since; an incremental snapshot of the renamed table fills it,
   * and the table of the old name stays as it was.
   */
  @Test
  void aRenamedTableIsFilledByAnIncrementalSnapshot() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(Map.of(), ITEMS_WITH_ROWS)) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, "items", ITEMS));

      p.postgres.execute(
          "ALTER TABLE inventory.items RENAME TO goods",
          "UPDATE inventory.goods SET price = price + 1 WHERE id % 10 = 0");
      Eventually.until(
          Duration.ofSeconds(120),
          "a table of the new name, with the rows changed since",
          () -> p.reader.tableExists(GOODS)
              && TableRows.read(p.reader.loadTable(GOODS), Branches.MAIN).size() == 20);

      p.incrementalSnapshot("inventory.goods");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p, "goods", GOODS));
      assertThat(TableRows.read(p.reader.loadTable(ITEMS), Branches.MAIN))
          .as("the table of the old name, as it was")
          .hasSize(200);
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("goods"));
    }
  }

  /**
   * A type change whose {@code USING} rewrites the values (and one that keeps the type): PostgreSQL
   * rewrites every row without a change event, so the rows not changed since keep their old values
   * (the widened column takes the new type) until an incremental snapshot.
   */
  @Test
  void valuesRewrittenByATypeChangeAreFilledByAnIncrementalSnapshot() throws Exception {
    try (PostgresPipeline p = PostgresPipeline.start(Map.of(), ITEMS_WITH_ROWS)) {
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p, "items", ITEMS));

      p.postgres.execute(
          "ALTER TABLE inventory.items ALTER COLUMN price TYPE bigint USING price * 100",
          "ALTER TABLE inventory.items ALTER COLUMN memo TYPE text USING upper(memo)",
          "UPDATE inventory.items SET name = name || '+' WHERE id % 10 = 0");
      Eventually.until(
          Duration.ofSeconds(120),
          "the changes since on main",
          () -> TableRows.read(p.reader.loadTable(ITEMS), Branches.MAIN).stream()
                  .filter(r -> String.valueOf(r.get("name")).endsWith("+"))
                  .count()
              == 20);
      assertThat(differs(p, "items", ITEMS))
          .as("before the snapshot: the rows not changed since keep the values before the rewrite")
          .containsPattern("price: expected [0-9]+00 but was [0-9]+")
          .containsPattern("memo: expected M[0-9]+ but was m[0-9]+");
      assertThat(p.reader.loadTable(ITEMS).schema().findField("price").type().typeId())
          .as("the widened column")
          .isEqualTo(Type.TypeID.LONG);

      p.incrementalSnapshot("inventory.items");
      Eventually.noDifference(Duration.ofSeconds(180), () -> differs(p, "items", ITEMS));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("items"));
    }
  }

  /** Null when realtime and main of {@code id} equal SELECT * of {@code source}; else what differs. */
  private static String differs(PostgresPipeline p, String source, TableIdentifier id)
      throws Exception {
    return p.differs("SELECT * FROM inventory." + source, id, List.of("id"));
  }
}
