package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * What the realtime committer does with a batch it must not commit: an unreadable batch event, a
 * batch whose files are gone after a long wait, a batch written for a table that was dropped and
 * created again. Each is dead-lettered with the reason and the source offsets it held; the offsets
 * are committed without its files, so the partition's later batches go on.
 */
class RefusedBatchTest {

  private final TestTable table = TestTable.wide("inventory", "customers");

  @Test
  void unreadableBatchEventsAreDeadLetteredAndTheCommitterGoesOn() throws Exception {
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 1);
      ingest.sendRawBatch("inventory.customers", "{}".getBytes(StandardCharsets.UTF_8));
      ingest.sendRawBatch(
          "inventory.customers",
          "{\"type\":\"files-written\",\"v\":2}".getBytes(StandardCharsets.UTF_8));
      // Readable, but never to be applied: a table that is no name (it failed every round of its
      // task's committer, whose other tables then never committed), a position that is not hex.
      String batch = "{\"type\":\"files-written\",\"v\":2,\"table\":\"%s\","
          + "\"sourceTopic\":\"%s\",\"sourcePartition\":0,\"firstOffset\":0,\"lastOffset\":0,"
          + "\"dataFiles\":[],\"deleteFiles\":[],\"minPosition\":\"%s\"}";
      ingest.sendRawBatch(
          "inventory.customers",
          String.format(batch, "", table.topic(), "01").getBytes(StandardCharsets.UTF_8));
      ingest.sendRawBatch(
          "inventory.customers",
          String.format(batch, "inventory.customers", table.topic(), "not hex!")
              .getBytes(StandardCharsets.UTF_8));
      ingest.send(gen.snapshot(100), true);
      ingest.flushAndCommit();
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(4);
      assertThat(reason(letters.get(1))).contains("unreadable batch event", "table");
      assertThat(reason(letters.get(2))).contains("unreadable batch event", "not a table name");
      assertThat(reason(letters.get(3)))
          .contains("unreadable batch event", "not a source position", "not hex!");
    }
  }

  @Test
  void batchesThatMustNotBeCommittedAreDeadLetteredAndTheirPartitionGoesOn() throws Exception {
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 2);
      ingest.send(gen.snapshot(100), true);
      ingest.flushAndCommit();
      FilesWritten real = ingest.filesWritten.readValuesToList().get(0);
      String uuid = ingest.table(table).uuid().toString();
      assertThat(real.tableUuid()).isEqualTo(uuid);

      // Written long ago, its data file since removed (a stall longer than the orphan age).
      DataFileJson gone = new DataFileJson(((ObjectNode) real.dataFiles().get(0).json())
          .deepCopy()
          .put("file-path", ingest.table(table).location() + "/data/removed.parquet"));
      FilesWritten stale = new FilesWritten(
          real.table(),
          real.sourceTopic(),
          real.sourcePartition(),
          1_000,
          1_099,
          100,
          real.dataRows(),
          real.deleteKeys(),
          real.maxSourceTsMs(),
          List.of(gone),
          real.deleteFiles(),
          0,
          null,
          List.of(),
          null,
          null,
          null,
          uuid,
          real.sourceTopicId());
      // Written for a table of the same name that was dropped.
      FilesWritten orphaned = new FilesWritten(
          real.table(),
          real.sourceTopic(),
          real.sourcePartition(),
          1_100,
          1_199,
          100,
          real.dataRows(),
          real.deleteKeys(),
          real.maxSourceTsMs(),
          real.dataFiles(),
          real.deleteFiles(),
          System.currentTimeMillis(),
          null,
          List.of(),
          null,
          null,
          null,
          "00000000-0000-0000-0000-000000000000",
          real.sourceTopicId());
      ingest.filesWrittenIn.pipeInput(real.table(), stale);
      ingest.filesWrittenIn.pipeInput(real.table(), orphaned);
      ingest.commitOnly();

      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(2);
      assertThat(reason(letters.get(0))).contains("offsets 1000..1099", "is gone", "re-snapshot");
      assertThat(reason(letters.get(1))).contains("offsets 1100..1199", "dropped");
      assertThat(KafkaHeaders.text(letters.get(0).headers(), DeadLetters.TOPIC))
          .isEqualTo(real.sourceTopic());
      assertThat(ingest.counter("lakestream.realtime.batches.refused")).isEqualTo(2);
      SourceOffsets committed = SourceOffsets.of(ingest.table(table), Branches.REALTIME);
      assertThat(committed.last(real.sourceTopic(), real.sourcePartition()))
          .as("the refused batches' offsets are committed, without their files")
          .isEqualTo(1_199);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();

      // The committer's Kafka transaction did not commit (a crash after the commit to realtime):
      // the batches are read again, found committed, and dead-lettered again, the first dead
      // letters having gone with the transaction. A batch committed with its files is not.
      ingest.filesWrittenIn.pipeInput(real.table(), real);
      ingest.filesWrittenIn.pipeInput(real.table(), stale);
      ingest.filesWrittenIn.pipeInput(real.table(), orphaned);
      ingest.commitOnly();
      List<TestRecord<byte[], byte[]>> again = ingest.deadLetters.readRecordsToList();
      assertThat(again).hasSize(2);
      assertThat(reason(again.get(0))).isEqualTo(reason(letters.get(0)));
      assertThat(reason(again.get(1))).isEqualTo(reason(letters.get(1)));
      assertThat(ingest.counter("lakestream.realtime.replays.skipped")).isEqualTo(3);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  private static String reason(TestRecord<byte[], byte[]> record) {
    return KafkaHeaders.text(record.headers(), DeadLetters.REASON);
  }
}
