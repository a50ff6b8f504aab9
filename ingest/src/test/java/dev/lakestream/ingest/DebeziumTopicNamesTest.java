package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TestTable;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * Topics Debezium names with more dots than {@code <prefix>.<schema>.<table>}: a {@code
 * topic.prefix} with dots, or a table whose name has one. Their changes reach the table their
 * records' source names (a dot in a name as {@code _}); a topic that does not end with that table (a
 * router's) is dead-lettered, not taken for it.
 */
class DebeziumTopicNamesTest {

  private static final TestTable PLAIN = TestTable.plain("app", "accounts");
  /** {@code topic.prefix=prod.pg1}. */
  private static final TestTable DOTTED_PREFIX =
      new TestTable("prod.pg1", "app", "accounts", PLAIN.columns(), PLAIN.key());
  /** {@code CREATE TABLE app."order.lines"}. */
  private static final TestTable DOTTED_NAME =
      new TestTable("dbserver1", "app", "order.lines", PLAIN.columns(), PLAIN.key());

  private static final String ROUTED = "prod.pg1.routed.all_tables";

  @Test
  void changesOnTopicsOfMoreDotsReachTheTableTheirSourceNames() throws Exception {
    try (IngestDriver ingest =
        new IngestDriver(List.of(DOTTED_PREFIX.topic(), DOTTED_NAME.topic(), ROUTED), Map.of())) {
      for (TestTable table : List.of(DOTTED_PREFIX, DOTTED_NAME)) {
        ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 11);
        ingest.send(gen.next(200), true);
        ingest.send(gen.next(100), false);
      }
      Change routed = new ChangeStreamGenerator(PLAIN, 12).next(1).get(0);
      ingest.sendRaw(ROUTED, DebeziumJson.key(routed, true), DebeziumJson.value(routed, true));
      ingest.flushAndCommit();

      assertThat(ingest.table(DOTTED_PREFIX).name()).endsWith("app.accounts");
      assertThat(ingest.realtimeDiffersFromModel(DOTTED_PREFIX)).isNull();
      TableIdentifier orderLines = TableIdentifier.of("app", "order_lines");
      assertThat(TableComparison.differences(
              ingest.model(DOTTED_NAME).rows(),
              TableRows.byKey(
                  TableRows.read(ingest.table(orderLines), Branches.REALTIME), PLAIN.key())))
          .isNull();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(1);
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.TOPIC)).isEqualTo(ROUTED);
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("does not end with the schema and table its records' source names");
    }
  }
}
