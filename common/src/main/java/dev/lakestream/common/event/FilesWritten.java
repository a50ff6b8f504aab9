package dev.lakestream.common.event;

import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;

/**
 * One flushed batch of one source partition: the data file(s) with the batch's surviving
 * after-images and the equality-delete file(s) with every key the batch touched. Sent by the change
 * buffer to the realtime committer, keyed by table.
 *
 * <p>The source offsets identify the batch: batches of one source partition cover disjoint,
 * increasing offset ranges, which is what lets the committer skip a batch it has already committed.
 *
 * @param table the table, {@code namespace.name}
 * @param sourceTopic the change topic the batch came from
 * @param sourcePartition its partition
 * @param firstOffset the lowest input offset in the batch
 * @param lastOffset the highest input offset in the batch
 * @param changes input changes in the batch (before per-key deduplication)
 * @param dataRows rows in the data files
 * @param deleteKeys keys in the equality-delete files
 * @param maxSourceTsMs the newest source commit time in the batch
 * @param dataFiles the data files, in Iceberg's content-file JSON
 * @param deleteFiles the equality-delete files, in Iceberg's content-file JSON
 * @param writtenAtMs when the files were written
 * @param changelogTable the table's change log ({@code namespace.name_changelog}) when it keeps one, else null
 * @param changelogFiles the change log's data files with every change of the batch, content-file JSON
 * @param minPosition the lowest source position of the batch's changes ({@code SourcePositions}, hex),
 *     null when none has one
 * @param maxPosition the highest source position of the batch's changes, or null
 * @param truncatedAt for a TRUNCATE of the table at this source position (hex): the batch ends with
 *     it, and its changes before it are gone (it has no data or delete files); else null
 * @param tableUuid the UUID of the table the files were written for (null from older writers, and
 *     for a TRUNCATE read before its table existed): a batch of a table that was dropped and
 *     created again is not committed to the new one
 * @param sourceTopicId the ID Kafka gave the source topic (null when unknown, and from older
 *     writers): offsets of a topic deleted and created again are not the old one's
 * @param minSourceTsMs the oldest source commit time in the batch (null from older writers): a
 *     batch that committed at the source well after a truncate holds nothing from before it,
 *     whatever its positions say (the source's positions started over)
 * @param awaitedSource for a TRUNCATE read before its table existed, the source table it truncates
 *     (null otherwise, and from older writers): checked against the source tables the table records
 *     once a change has created it
 */
public record FilesWritten(
    String table,
    String sourceTopic,
    int sourcePartition,
    long firstOffset,
    long lastOffset,
    long changes,
    long dataRows,
    long deleteKeys,
    long maxSourceTsMs,
    List<DataFileJson> dataFiles,
    List<DeleteFileJson> deleteFiles,
    long writtenAtMs,
    String changelogTable,
    List<DataFileJson> changelogFiles,
    String minPosition,
    String maxPosition,
    String truncatedAt,
    String tableUuid,
    String sourceTopicId,
    Long minSourceTsMs,
    SourceTable awaitedSource) {

  public static final String TYPE = "files-written";
  /** 2: source positions and truncates (a reader of 1 would take a truncate for an empty batch). */
  public static final int VERSION = 2;

  public FilesWritten {
    EventJson.required("table", table);
    EventJson.required("sourceTopic", sourceTopic);
    EventJson.required("dataFiles", dataFiles);
    EventJson.required("deleteFiles", deleteFiles);
    dataFiles = List.copyOf(dataFiles);
    deleteFiles = List.copyOf(deleteFiles);
    changelogFiles = changelogFiles == null ? List.of() : List.copyOf(changelogFiles);
  }

  public FilesWritten(
      String table,
      String sourceTopic,
      int sourcePartition,
      long firstOffset,
      long lastOffset,
      long changes,
      long dataRows,
      long deleteKeys,
      long maxSourceTsMs,
      List<DataFileJson> dataFiles,
      List<DeleteFileJson> deleteFiles,
      long writtenAtMs,
      String changelogTable,
      List<DataFileJson> changelogFiles,
      String minPosition,
      String maxPosition,
      String truncatedAt) {
    this(
        table,
        sourceTopic,
        sourcePartition,
        firstOffset,
        lastOffset,
        changes,
        dataRows,
        deleteKeys,
        maxSourceTsMs,
        dataFiles,
        deleteFiles,
        writtenAtMs,
        changelogTable,
        changelogFiles,
        minPosition,
        maxPosition,
        truncatedAt,
        null,
        null,
        null,
        null);
  }

  /** A batch from a writer that did not record its oldest source time. */
  public FilesWritten(
      String table,
      String sourceTopic,
      int sourcePartition,
      long firstOffset,
      long lastOffset,
      long changes,
      long dataRows,
      long deleteKeys,
      long maxSourceTsMs,
      List<DataFileJson> dataFiles,
      List<DeleteFileJson> deleteFiles,
      long writtenAtMs,
      String changelogTable,
      List<DataFileJson> changelogFiles,
      String minPosition,
      String maxPosition,
      String truncatedAt,
      String tableUuid,
      String sourceTopicId) {
    this(
        table,
        sourceTopic,
        sourcePartition,
        firstOffset,
        lastOffset,
        changes,
        dataRows,
        deleteKeys,
        maxSourceTsMs,
        dataFiles,
        deleteFiles,
        writtenAtMs,
        changelogTable,
        changelogFiles,
        minPosition,
        maxPosition,
        truncatedAt,
        tableUuid,
        sourceTopicId,
        null,
        null);
  }

  /** A batch of a writer that did not name a waiting truncate's source table. */
  public FilesWritten(
      String table,
      String sourceTopic,
      int sourcePartition,
      long firstOffset,
      long lastOffset,
      long changes,
      long dataRows,
      long deleteKeys,
      long maxSourceTsMs,
      List<DataFileJson> dataFiles,
      List<DeleteFileJson> deleteFiles,
      long writtenAtMs,
      String changelogTable,
      List<DataFileJson> changelogFiles,
      String minPosition,
      String maxPosition,
      String truncatedAt,
      String tableUuid,
      String sourceTopicId,
      Long minSourceTsMs) {
    this(
        table,
        sourceTopic,
        sourcePartition,
        firstOffset,
        lastOffset,
        changes,
        dataRows,
        deleteKeys,
        maxSourceTsMs,
        dataFiles,
        deleteFiles,
        writtenAtMs,
        changelogTable,
        changelogFiles,
        minPosition,
        maxPosition,
        truncatedAt,
        tableUuid,
        sourceTopicId,
        minSourceTsMs,
        null);
  }

  /** This batch with no files: its offsets are committed, its changes are not (they were dead-lettered). */
  public FilesWritten withoutFiles() {
    return new FilesWritten(
        table,
        sourceTopic,
        sourcePartition,
        firstOffset,
        lastOffset,
        changes,
        0,
        0,
        maxSourceTsMs,
        List.of(),
        List.of(),
        writtenAtMs,
        changelogTable,
        List.of(),
        minPosition,
        maxPosition,
        null,
        tableUuid,
        sourceTopicId,
        minSourceTsMs,
        null);
  }

  public List<DataFile> changelogFiles(Map<Integer, PartitionSpec> specs) {
    return changelogFiles.stream().map(f -> f.decode(specs)).toList();
  }

  public boolean isTruncate() {
    return truncatedAt != null;
  }

  public String sourcePartitionName() {
    return sourceTopic + "-" + sourcePartition;
  }

  public List<DataFile> dataFiles(Map<Integer, PartitionSpec> specs) {
    return dataFiles.stream().map(f -> f.decode(specs)).toList();
  }

  public List<DeleteFile> deleteFiles(Map<Integer, PartitionSpec> specs) {
    return deleteFiles.stream().map(f -> f.decode(specs)).toList();
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static FilesWritten fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, FilesWritten.class);
  }

  /**
   * The event read from its topic: {@link #fromJson} and its names and positions checked, so that
   * one the committer could never apply is unreadable (and dead-lettered) rather than stored and
   * tried at every round. Not for the committer's store, which keeps what this let through (and an
   * earlier version may have kept what it would not).
   */
  public static FilesWritten fromTopic(byte[] bytes) {
    FilesWritten event = fromJson(bytes);
    EventJson.table("table", event.table());
    if (event.changelogTable() != null) {
      EventJson.table("changelogTable", event.changelogTable());
    }
    EventJson.position("minPosition", event.minPosition());
    EventJson.position("maxPosition", event.maxPosition());
    EventJson.position("truncatedAt", event.truncatedAt());
    return event;
  }
}
