package dev.lakestream.ingest.buffer;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.UniqueColumns;
import dev.lakestream.common.iceberg.WithoutHadoopDefaults;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileWriterFactory;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;

/**
 * Writes one batch as files of the table, without committing them: a Parquet data file with the
 * rows, each with its source position in the column {@link SourcePositions} keeps outside the
 * table's schema, and a Parquet equality-delete file with the keys (delete by the table's
 * identifier fields). Either file is left out when it would be empty.
 *
 * <p>Only unpartitioned tables are written (the pipeline creates them so). A partitioned table
 * would need an equality delete in every partition an old row may live in.
 */
public final class BatchWriter {

  /** The files written; {@code bytes} their total size. */
  public record Written(List<DataFile> dataFiles, List<DeleteFile> deleteFiles, long bytes) {}

  private BatchWriter() {}

  /** {@code rows}: records of {@link SourcePositions#withPosition} of {@code schema}. */
  public static Written write(
      Table table,
      Schema schema,
      List<Record> rows,
      List<Record> keys,
      int partitionId,
      long taskId) {
    if (table.spec().isPartitioned()) {
      // Partitioned by another hand since ingest took the table: the batch is refused (its changes
      // dead-lettered), not failed at every flush.
      throw new BadChangeException("table " + table.name() + " is partitioned (" + table.spec()
          + "); ingest writes unpartitioned tables only: drop the table's partition fields with"
          + " your engine");
    }
    Set<Integer> keyIds = schema.identifierFieldIds();
    Schema keySchema = TypeUtil.select(schema, keyIds);
    // Two factories, neither writing a dictionary for a column unique in the file: data files turn
    // it off per column (keys, positions, and the columns whose sampled rows hold no repeat),
    // equality-delete files (all keys) with Parquet's global switch, the only one Iceberg's delete
    // writers read, which would reach every data column too.
    FileWriterFactory<Record> dataWriters =
        WithoutHadoopDefaults.writers(new GenericFileWriterFactory.Builder(table)
            .dataFileFormat(FileFormat.PARQUET)
            .dataSchema(SourcePositions.withPosition(schema))
            .writerProperties(UniqueColumns.dataFile(schema, rows, table.properties()))
            .build());
    FileWriterFactory<Record> deleteWriters =
        WithoutHadoopDefaults.writers(new GenericFileWriterFactory.Builder(table)
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(
                keyIds.stream().mapToInt(Integer::intValue).sorted().toArray())
            .equalityDeleteRowSchema(keySchema)
            .writerProperties(UniqueColumns.equalityDeleteFile())
            .build());
    OutputFileFactory files = OutputFileFactory.builderFor(table, partitionId, taskId)
        .format(FileFormat.PARQUET)
        .operationId(UUID.randomUUID().toString())
        .build();
    try {
      List<DataFile> dataFiles = List.of();
      long bytes = 0;
      if (!rows.isEmpty()) {
        DataWriter<Record> writer =
            dataWriters.newDataWriter(files.newOutputFile(), table.spec(), null);
        try (writer) {
          rows.forEach(writer::write);
        }
        DataFile file = writer.toDataFile();
        dataFiles = List.of(file);
        bytes += file.fileSizeInBytes();
      }
      List<DeleteFile> deleteFiles = List.of();
      if (!keys.isEmpty()) {
        EqualityDeleteWriter<Record> writer =
            deleteWriters.newEqualityDeleteWriter(files.newOutputFile(), table.spec(), null);
        try (writer) {
          keys.forEach(writer::write);
        }
        DeleteFile file = writer.toDeleteFile();
        deleteFiles = List.of(file);
        bytes += file.fileSizeInBytes();
      }
      return new Written(dataFiles, deleteFiles, bytes);
    } catch (IOException e) {
      throw new UncheckedIOException("writing a batch of " + table.name() + " failed", e);
    }
  }
}
