package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.TestTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/** A TRUNCATE read before any change of its table waits in the committer for the table. */
class TruncateBeforeTableTest {

  /**
   * While it waits, another hand makes the table (a plain CREATE TABLE in another engine), which
   * ingest has not taken over: the truncate is dead-lettered with the reason, and the committer
   * goes on (before, the empty commit's announcement read the missing realtime branch and failed
   * the task at every restart).
   */
  @Test
  void aTableAnotherHandMadeMeanwhileDeadLettersTheWaitingTruncate() throws Exception {
    TestTable table = TestTable.plain("app", "accounts");
    TableIdentifier id = TableIdentifier.of("app", "accounts");
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 41);
      gen.next(20); // positions before the truncate's
      ingest.send(List.of(gen.truncate()), true);
      ingest.flushAndCommit();
      assertThat(ingest.exists(id)).isFalse();
      assertThat(pending(ingest))
          .singleElement()
          .satisfies(b -> assertThat(b.isTruncate()).isTrue())
          .satisfies(b -> assertThat(b.awaitedSource()).isNotNull());

      ingest
          .catalog()
          .createTable(id, new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
      ingest.flushAndCommit();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(1);
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.REASON))
          .contains("made by another hand")
          .contains("has not taken over");
      assertThat(pending(ingest)).isEmpty();
    }
  }

  private static List<FilesWritten> pending(IngestDriver ingest) {
    List<FilesWritten> out = new ArrayList<>();
    try (var it = ingest.pendingBatches().all()) {
      it.forEachRemaining(e -> out.add(e.value));
    }
    return out;
  }
}
