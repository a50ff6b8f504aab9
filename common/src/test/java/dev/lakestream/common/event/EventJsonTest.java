package dev.lakestream.common.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class EventJsonTest {

  private static final Schema SCHEMA =
      new Schema(List.of(Types.NestedField.required(1, "id", Types.LongType.get())), Set.of(1));
  private static final PartitionSpec SPEC = PartitionSpec.unpartitioned();

  @Test
  void filesWrittenRoundTripsWithItsFiles() throws Exception {
    DataFile data = DataFiles.builder(SPEC)
        .withPath("/wh/t/data/00000-1.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(1234)
        .withMetrics(new Metrics(
            10L,
            Map.of(1, 80L),
            Map.of(1, 10L),
            Map.of(1, 0L),
            null,
            Map.of(1, Conversions.toByteBuffer(Types.LongType.get(), 3L)),
            Map.of(1, Conversions.toByteBuffer(Types.LongType.get(), 99L))))
        .build();
    DeleteFile deletes = FileMetadata.deleteFileBuilder(SPEC)
        .ofEqualityDeletes(1)
        .withPath("/wh/t/data/00000-2.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(321)
        .withRecordCount(12)
        .build();
    FilesWritten event = new FilesWritten(
        "inventory.customers",
        "dbserver1.inventory.customers",
        3,
        100,
        250,
        151,
        10,
        12,
        1_700_000_000_000L,
        List.of(DataFileJson.of(data, SPEC)),
        List.of(DeleteFileJson.of(deletes, SPEC)),
        1_700_000_000_500L,
        "inventory.customers_changelog",
        List.of(DataFileJson.of(data, SPEC)),
        "0000000001",
        "00000002ff",
        null);

    FilesWritten back = FilesWritten.fromJson(event.toJson());
    // On the wire a file is Iceberg's content-file JSON itself.
    assertThat(
            new ObjectMapper().readTree(event.toJson()).findValue("dataFiles").get(0))
        .isEqualTo(ContentFiles.toJson(data, SPEC));

    assertThat(back).isEqualTo(event);
    FilesWritten truncate = new FilesWritten(
        "inventory.customers",
        "dbserver1.inventory.customers",
        3,
        251,
        251,
        1,
        0,
        0,
        1_700_000_000_100L,
        List.of(),
        List.of(),
        1_700_000_000_600L,
        null,
        List.of(),
        null,
        null,
        "00000003");
    assertThat(FilesWritten.fromJson(truncate.toJson())).isEqualTo(truncate);
    assertThat(FilesWritten.fromJson(truncate.toJson()).isTruncate()).isTrue();
    FilesWritten waiting = new FilesWritten(
        "inventory.customers",
        "dbserver1.inventory.customers",
        3,
        251,
        251,
        1,
        0,
        0,
        1_700_000_000_100L,
        List.of(),
        List.of(),
        1_700_000_000_600L,
        null,
        List.of(),
        null,
        null,
        "00000003",
        null,
        null,
        null,
        new SourceTable("inventory", "customers"));
    assertThat(FilesWritten.fromJson(waiting.toJson())).isEqualTo(waiting);
    DataFile dataBack = back.dataFiles(Map.of(0, SPEC)).get(0);
    assertThat(dataBack.location()).isEqualTo(data.location());
    assertThat(dataBack.recordCount()).isEqualTo(10);
    assertThat(Conversions.<Long>fromByteBuffer(
            Types.LongType.get(), dataBack.upperBounds().get(1)))
        .isEqualTo(99L);
    DeleteFile deleteBack = back.deleteFiles(Map.of(0, SPEC)).get(0);
    assertThat(deleteBack.equalityFieldIds()).containsExactly(1);
    assertThat(deleteBack.recordCount()).isEqualTo(12);
    assertThat(SCHEMA.identifierFieldIds()).containsExactly(1);
  }

  @Test
  void realtimeCommittedRoundTrips() {
    RealtimeCommitted event = new RealtimeCommitted(
        "inventory.customers", 42L, 7L, 1_700_000_000_000L, 2, 100, 120, 1_700_000_000_900L);
    assertThat(RealtimeCommitted.fromJson(event.toJson())).isEqualTo(event);
    assertThat(new String(event.toJson(), StandardCharsets.UTF_8))
        .startsWith("{\"type\":\"realtime-committed\",\"v\":1,");
  }

  @Test
  void readerIgnoresFieldsAddedByNewerWriterOfSameVersion() {
    String json =
        "{\"type\":\"realtime-committed\",\"v\":1,\"table\":\"a.b\",\"snapshotId\":1,\"sequenceNumber\":2,"
            + "\"maxSourceTsMs\":3,\"batches\":1,\"dataRows\":4,\"deleteKeys\":5,\"committedAtMs\":6,\"newField\":true}";
    assertThat(RealtimeCommitted.fromJson(json.getBytes(StandardCharsets.UTF_8)).snapshotId())
        .isEqualTo(1);
  }

  @Test
  void rejectsFormatVersionNewerThanReaderWithAdvice() {
    String json = "{\"type\":\"realtime-committed\",\"v\":2,\"table\":\"a.b\"}";
    assertThatThrownBy(() -> RealtimeCommitted.fromJson(json.getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("format version 2")
        .hasMessageContaining("upgrade the reading app");
  }

  /**
   * Events a reader could never apply are unreadable at once (their consumers dead-letter them),
   * not failures at every attempt to apply them: a lookup without the lists every lookup carries, a
   * batch read from its topic whose table is no name or whose position is not hex. The committer's
   * store reads what it kept as it is (an earlier version kept what the topic's reader now refuses:
   * reading it again must not fail the task's start).
   */
  @Test
  void rejectsEventsThatCouldNeverBeApplied() {
    String lookup = "{\"type\":\"index-lookup\",\"v\":1,\"table\":\"a.b\",\"cycleId\":\"c\","
        + "\"addDataFiles\":[],\"removeDataFiles\":[],\"deleteFiles\":[]}";
    assertThatThrownBy(() -> IndexLookup.fromJson(lookup.getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("taskDeletes");
    String batch = "{\"type\":\"files-written\",\"v\":2,\"table\":\"%s\",\"sourceTopic\":\"t\","
        + "\"dataFiles\":[],\"deleteFiles\":[],\"truncatedAt\":\"%s\"}";
    assertThat(FilesWritten.fromTopic(
                String.format(batch, "a.b", "00000000000000ff").getBytes(StandardCharsets.UTF_8))
            .truncatedAt())
        .isEqualTo("00000000000000ff");
    byte[] noName = String.format(batch, "", "00").getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> FilesWritten.fromTopic(noName))
        .hasMessageContaining("\"table\" is not a table name");
    assertThat(FilesWritten.fromJson(noName).table())
        .as("as the store reads it")
        .isEmpty();
    assertThatThrownBy(() -> FilesWritten.fromTopic(
            String.format(batch, "a.b", "0x12").getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("\"truncatedAt\" is not a source position in hex: 0x12");
  }

  @Test
  void rejectsEventOfAnotherType() {
    RealtimeCommitted event = new RealtimeCommitted("a.b", 1, 1, 1, 1, 1, 1, 1);
    assertThatThrownBy(() -> FilesWritten.fromJson(event.toJson()))
        .hasMessageContaining("expected a \"files-written\" event");
  }

  @Test
  void syncEventsRoundTrip() {
    DataFile data = DataFiles.builder(SPEC)
        .withPath("/wh/t/data/a.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(10)
        .withRecordCount(3)
        .build();
    DeleteFile deletes = FileMetadata.deleteFileBuilder(SPEC)
        .ofEqualityDeletes(1)
        .withPath("/wh/t/data/b.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(5)
        .withRecordCount(1)
        .build();
    var dataJson = DataFileJson.of(data, SPEC);
    var deleteJson = DeleteFileJson.of(deletes, SPEC);

    ConvertTask task = new ConvertTask("a.b", "cycle-1", dataJson, null, List.of(deleteJson));
    ConvertTask taskBack = ConvertTask.fromJson(task.toJson());
    assertThat(taskBack).isEqualTo(task);
    assertThat(taskBack.dataFilePath()).isEqualTo("/wh/t/data/a.parquet");
    assertThat(taskBack.currentDv(Map.of(0, SPEC))).isNull();
    assertThat(taskBack.deleteFiles(Map.of(0, SPEC)).get(0).equalityFieldIds()).containsExactly(1);

    var otherJson = DataFileJson.of(
        DataFiles.builder(SPEC)
            .withPath("/wh/t/data/c.parquet")
            .withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(10)
            .withRecordCount(3)
            .build(),
        SPEC);
    ConvertTask other = new ConvertTask("a.b", "cycle-1", otherJson, null, List.of(deleteJson))
        .withPositions(List.of(0L, 2L));
    ConvertGroup group = new ConvertGroup("a.b", "cycle-1", List.of(task, other));
    ConvertGroup groupBack = ConvertGroup.fromJson(group.toJson());
    assertThat(groupBack).isEqualTo(group);
    assertThat(groupBack.tasks().get(1).positions()).containsExactly(0L, 2L);
    assertThat(groupBack.key()).isEqualTo("/wh/t/data/a.parquet");
    // A task on the convert-tasks topic from before groups existed reads as a group of one.
    assertThat(ConvertGroup.fromJson(task.toJson())).isEqualTo(ConvertGroup.of(task));
    assertThatThrownBy(() -> new ConvertGroup("a.b", "cycle-2", List.of(task)))
        .hasMessageContaining("holds a task of cycle cycle-1");
    assertThatThrownBy(() -> new ConvertGroup("a.b", "cycle-1", List.of(task, task)))
        .hasMessageContaining("two tasks for /wh/t/data/a.parquet");

    ConvertResult result =
        new ConvertResult("a.b", "cycle-1", "/wh/t/data/a.parquet", null, List.of(), 0, 3, 10);
    assertThat(ConvertResult.fromJson(result.toJson())).isEqualTo(result);

    CyclePlan plan = new CyclePlan(
        "a.b",
        "cycle-1",
        11L,
        22L,
        33L,
        List.of(new CyclePlan.SequencedFile(dataJson, 4L)),
        List.of(),
        List.of(),
        List.of("/wh/t/data/a.parquet"),
        2,
        1,
        true,
        44L);
    CyclePlan planBack = CyclePlan.fromJson(plan.toJson());
    assertThat(planBack).isEqualTo(plan);
    assertThat(planBack.addDataFiles().get(0).dataSequenceNumber()).isEqualTo(4L);

    MainCommitted committed = new MainCommitted("a.b", 1L, 2L, 3L, 4, 5, 6, 7, 8L, 9L);
    assertThat(MainCommitted.fromJson(committed.toJson())).isEqualTo(committed);
  }
}
