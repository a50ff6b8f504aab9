package dev.lakestream.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.ingest.commit.SourceOffsets;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * A source topic deleted and created again under its name starts its offsets at 0 again. The
 * table's offsets are recorded with the ID of the topic they are of: a batch of the new topic is
 * committed (not skipped as committed because its offsets are below the old topic's), and a batch
 * of the old topic that arrives after it is dead-lettered, not committed over it. (Against a real
 * broker, from the change buffer on: {@code IngestOnKafkaTest}.)
 */
class RecreatedTopicTest {

  private final TestTable table = TestTable.wide("inventory", "customers");

  @Test
  void aBatchOfTheTopicCreatedAgainIsCommittedAndALateOneOfTheOldTopicIsNot() throws Exception {
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ingest.topicIds.put(table.topic(), "old-topic-id");
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 41);
      ingest.send(gen.snapshot(100), true);
      ingest.send(gen.next(100), true);
      ingest.flushAndCommit();
      List<FilesWritten> written = ingest.filesWritten.readValuesToList();
      assertThat(written).hasSize(1);
      FilesWritten first = written.get(0);
      assertThat(first.sourceTopicId()).isEqualTo("old-topic-id");
      SourceOffsets committed = SourceOffsets.of(ingest.table(table), Branches.REALTIME);
      assertThat(committed.topicId(table.topic())).isEqualTo("old-topic-id");
      assertThat(committed.last(table.topic(), 0)).isEqualTo(first.lastOffset());

      // The topic is deleted and created again; the new one's first batch holds offsets 0..49
      // (the same rows again, as a connector's new snapshot would).
      ingest.topicIds.put(table.topic(), "new-topic-id");
      ingest.filesWrittenIn.pipeInput(first.table(), renumbered(first, 0, 49, "new-topic-id"));
      ingest.commitOnly();
      committed = SourceOffsets.of(ingest.table(table), Branches.REALTIME);
      assertThat(committed.topicId(table.topic()))
          .as("the topic the realtime offsets are of")
          .isEqualTo("new-topic-id");
      assertThat(committed.last(table.topic(), 0))
          .as("the new topic's batch committed, not skipped below the old topic's offsets")
          .isEqualTo(49);
      assertThat(ingest.counter("lakestream.realtime.replays.skipped")).isZero();

      // A batch the old topic flushed before it was deleted arrives late.
      ingest.filesWrittenIn.pipeInput(
          first.table(), renumbered(first, 1_000, 1_099, "old-topic-id"));
      ingest.commitOnly();
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(1);
      assertThat(reason(letters.get(0)))
          .contains("offsets 1000..1099", "no longer exists", "now has ID new-topic-id");
      committed = SourceOffsets.of(ingest.table(table), Branches.REALTIME);
      assertThat(committed.topicId(table.topic())).isEqualTo("new-topic-id");
      assertThat(committed.last(table.topic(), 0))
          .as("the old topic's offsets are not recorded for the new one")
          .isEqualTo(49);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  /**
   * Batches of the old topic and of the new one pending together: the old topic's are committed
   * first, in a commit of their own, and the new topic's in the next; a batch of a topic that does
   * not exist now is dead-lettered, not committed over the table.
   */
  @Test
  void theOldTopicsPendingBatchesAreCommittedBeforeTheNewOnesNeverInOneRound() throws Exception {
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ingest.topicIds.put(table.topic(), "old-topic-id");
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 42);
      ingest.send(gen.snapshot(100), true);
      ingest.flushAndCommit();
      FilesWritten first = ingest.filesWritten.readValuesToList().get(0);
      int before = ingest.realtimeSnapshots(table).size();

      ingest.topicIds.put(table.topic(), "new-topic-id");
      ingest.filesWrittenIn.pipeInput(first.table(), renumbered(first, 0, 9, "new-topic-id"));
      ingest.filesWrittenIn.pipeInput(first.table(), renumbered(first, 500, 599, "old-topic-id"));
      ingest.commitOnly();
      ingest.commitOnly();

      List<Snapshot> after = ingest.realtimeSnapshots(table);
      assertThat(after).hasSize(before + 2);
      SourceOffsets oldRound = SourceOffsets.recordedBy(after.get(before)).orElseThrow();
      assertThat(oldRound.topicId(table.topic())).isEqualTo("old-topic-id");
      assertThat(oldRound.last(table.topic(), 0)).isEqualTo(599);
      SourceOffsets newRound = SourceOffsets.recordedBy(after.get(before + 1)).orElseThrow();
      assertThat(newRound.topicId(table.topic())).isEqualTo("new-topic-id");
      assertThat(newRound.last(table.topic(), 0)).isEqualTo(9);

      // The topic is deleted again and not created: which topic is newer cannot be told.
      ingest.topicIds.remove(table.topic());
      ingest.filesWrittenIn.pipeInput(
          first.table(), renumbered(first, 2_000, 2_099, "third-topic-id"));
      ingest.commitOnly();
      List<TestRecord<byte[], byte[]>> letters = ingest.deadLetters.readRecordsToList();
      assertThat(letters).hasSize(1);
      assertThat(reason(letters.get(0)))
          .contains("offsets 2000..2099", "no topic of that name exists now");
      assertThat(ingest.realtimeSnapshots(table)).hasSize(before + 2);
      assertThat(ingest.realtimeDiffersFromModel(table)).isNull();
    }
  }

  /**
   * A batch of the new topic that starts at the offset a pending batch of the old topic starts at
   * (the new topic has caught up to where the old one was when its batch was flushed) is kept beside
   * it, not in its place: both are committed, the old one first.
   */
  @Test
  void aBatchOfTheNewTopicStartingWhereAPendingOneOfTheOldStartsReplacesNothing() throws Exception {
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ingest.topicIds.put(table.topic(), "old-topic-id");
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 43);
      ingest.send(gen.snapshot(100), true);
      ingest.flushAndCommit();
      FilesWritten first = ingest.filesWritten.readValuesToList().get(0);
      int before = ingest.realtimeSnapshots(table).size();

      ingest.topicIds.put(table.topic(), "new-topic-id");
      ingest.filesWrittenIn.pipeInput(first.table(), renumbered(first, 100, 199, "old-topic-id"));
      ingest.filesWrittenIn.pipeInput(first.table(), renumbered(first, 100, 149, "new-topic-id"));
      ingest.commitOnly();
      ingest.commitOnly();

      List<Snapshot> after = ingest.realtimeSnapshots(table);
      assertThat(after).as("a commit of each topic's batch").hasSize(before + 2);
      SourceOffsets oldRound = SourceOffsets.recordedBy(after.get(before)).orElseThrow();
      assertThat(oldRound.topicId(table.topic())).isEqualTo("old-topic-id");
      assertThat(oldRound.last(table.topic(), 0)).isEqualTo(199);
      SourceOffsets newRound = SourceOffsets.recordedBy(after.get(before + 1)).orElseThrow();
      assertThat(newRound.topicId(table.topic())).isEqualTo("new-topic-id");
      assertThat(newRound.last(table.topic(), 0)).isEqualTo(149);
      assertThat(ingest.deadLetters.readRecordsToList()).isEmpty();
      ingest.commitOnly();
      assertThat(ingest.counter("lakestream.realtime.replays.skipped"))
          .as("no batch left pending once committed (it would be skipped as committed next time)")
          .isZero();
    }
  }

  /**
   * A store kept across an upgrade holds batches under the keys of the version before, which did not
   * hold the topic's ID: such a batch is committed and then leaves the store.
   */
  @Test
  void aBatchStoredUnderTheKeyOfTheVersionBeforeLeavesTheStoreOnceCommitted() throws Exception {
    try (IngestDriver ingest = new IngestDriver(List.of(table.topic()), Map.of())) {
      ingest.topicIds.put(table.topic(), "the-topic-id");
      ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 44);
      ingest.send(gen.snapshot(100), true);
      ingest.flushAndCommit();
      FilesWritten first = ingest.filesWritten.readValuesToList().get(0);
      FilesWritten stored = renumbered(first, 100, 199, "the-topic-id");
      String keyBefore = String.join(
          "\u0000", first.table(), first.sourceTopic(), "0", String.format("%020d", 100));
      ingest.pendingBatches().put(keyBefore, stored);
      // The next batch, stored under a key of this version, makes the committer read the table's
      // pending batches (as it does when its task starts).
      ingest.filesWrittenIn.pipeInput(first.table(), renumbered(first, 200, 249, "the-topic-id"));

      ingest.commitOnly();
      SourceOffsets committed = SourceOffsets.of(ingest.table(table), Branches.REALTIME);
      assertThat(committed.last(table.topic(), 0)).isEqualTo(249);
      assertThat(ingest.pendingBatches().get(keyBefore))
          .as("the committed batch's entry")
          .isNull();
    }
  }

  private static String reason(TestRecord<byte[], byte[]> letter) {
    return new String(
        letter.headers().lastHeader(DeadLetters.REASON).value(), StandardCharsets.UTF_8);
  }

  /** {@code batch}'s files as a batch of offsets {@code first..last} of the topic of ID {@code topicId}. */
  private static FilesWritten renumbered(
      FilesWritten batch, long first, long last, String topicId) {
    return new FilesWritten(
        batch.table(),
        batch.sourceTopic(),
        batch.sourcePartition(),
        first,
        last,
        batch.changes(),
        batch.dataRows(),
        batch.deleteKeys(),
        batch.maxSourceTsMs(),
        batch.dataFiles(),
        batch.deleteFiles(),
        batch.writtenAtMs(),
        batch.changelogTable(),
        batch.changelogFiles(),
        batch.minPosition(),
        batch.maxPosition(),
        batch.truncatedAt(),
        batch.tableUuid(),
        topicId);
  }
}
