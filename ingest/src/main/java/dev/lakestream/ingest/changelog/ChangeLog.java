package dev.lakestream.ingest.changelog;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.iceberg.TableNaming;
import dev.lakestream.common.iceberg.WithoutHadoopDefaults;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileWriterFactory;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bronze change log of a table: {@code <table>_changelog}, append-only, one row per source
 * change event, raw. The row images stay Debezium's JSON ({@code before}, {@code after}), so the log
 * never needs a schema change when the source table evolves, and keeps exactly what was published.
 */
public final class ChangeLog {

  /** The change log's columns. */
  public static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "op", Types.StringType.get(), "c, u, d or r (snapshot read)"),
      Types.NestedField.required(2, "key", Types.StringType.get(), "the primary key, JSON"),
      Types.NestedField.optional(
          3, "before", Types.StringType.get(), "the row before the change, Debezium JSON"),
      Types.NestedField.optional(
          4, "after", Types.StringType.get(), "the row after the change, Debezium JSON"),
      Types.NestedField.optional(
          5,
          "source_position",
          Types.StringType.get(),
          "where in the source: lsn or binlog position"),
      Types.NestedField.optional(
          6, "source_ts_ms", Types.LongType.get(), "source commit time, ms since epoch"),
      Types.NestedField.required(
          7, "snapshot", Types.BooleanType.get(), "read by a connector snapshot"),
      Types.NestedField.required(8, "kafka_topic", Types.StringType.get()),
      Types.NestedField.required(9, "kafka_partition", Types.IntegerType.get()),
      Types.NestedField.required(10, "kafka_offset", Types.LongType.get()));

  private static final Logger LOG = LoggerFactory.getLogger(ChangeLog.class);
  /**
   * Reads back what admission accepted: the decoder skips the parts of a value it does not use
   * ({@code before} among them) without Jackson's limit on a string's length, so this reader has
   * none either, or a record admitted with a longer string would fail its flush at every retry.
   */
  private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
      .streamReadConstraints(
          StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
      .build());

  private ChangeLog() {}

  public static TableIdentifier of(TableIdentifier table) {
    return TableNaming.changelogOf(table);
  }

  /**
   * The change log of {@code table}, created when missing (a creation race is fine). Once loaded it
   * comes from the table manager's cache, so calling this per change costs nothing.
   */
  public static Table ensure(TableManager tables, TableIdentifier table) {
    TableIdentifier id = of(table);
    try {
      return tables.table(id);
    } catch (NoSuchTableException missing) {
      try {
        Catalog.TableBuilder builder = tables.catalog().buildTable(id, SCHEMA);
        // Each stream task's committer commits its rounds' rows here: retried as the table is.
        TableManager.COMMIT_RETRY.forEach(builder::withProperty);
        builder
            .withPartitionSpec(PartitionSpec.unpartitioned())
            .withProperty(TableProperties.FORMAT_VERSION, "3")
            .withProperty(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
            .withProperty(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "50")
            .create();
        LOG.info("Created change log {} of {}", id, table);
      } catch (AlreadyExistsException raced) {
        // Another task created it first.
      }
      return tables.table(id);
    }
  }

  /** One change-log row. */
  public static Record row(
      String op,
      JsonNode key,
      JsonNode before,
      JsonNode after,
      String position,
      long sourceTsMs,
      boolean snapshot,
      String topic,
      int partition,
      long offset) {
    GenericRecord r = GenericRecord.create(SCHEMA);
    r.setField("op", op);
    r.setField("key", key.toString());
    r.setField("before", before == null || before.isNull() ? null : before.toString());
    r.setField("after", after == null || after.isNull() ? null : after.toString());
    r.setField("source_position", position);
    r.setField("source_ts_ms", sourceTsMs < 0 ? null : sourceTsMs);
    r.setField("snapshot", snapshot);
    r.setField("kafka_topic", topic);
    r.setField("kafka_partition", partition);
    r.setField("kafka_offset", offset);
    return r;
  }

  /** Writes {@code rows} as one Parquet data file of the change log; commits nothing. */
  public static DataFile write(Table log, List<Record> rows, int partitionId, long taskId) {
    FileWriterFactory<Record> writers =
        WithoutHadoopDefaults.writers(new GenericFileWriterFactory.Builder(log)
            .dataFileFormat(FileFormat.PARQUET)
            .dataSchema(log.schema())
            .build());
    OutputFileFactory files = OutputFileFactory.builderFor(log, partitionId, taskId)
        .format(FileFormat.PARQUET)
        .operationId(UUID.randomUUID().toString())
        .build();
    DataWriter<Record> writer = writers.newDataWriter(files.newOutputFile(), log.spec(), null);
    try (writer) {
      rows.forEach(writer::write);
    } catch (IOException e) {
      throw new UncheckedIOException("writing the change log " + log.name(), e);
    }
    return writer.toDataFile();
  }

  /** The row of a Debezium record: op, key, source and position from the decoded event; before and after raw. */
  public static Record row(
      ChangeEvent event, byte[] value, String topic, int partition, long offset) {
    JsonNode envelope;
    try {
      envelope = JSON.readTree(value);
    } catch (IOException e) {
      throw new UncheckedIOException("re-reading " + topic + "-" + partition + "@" + offset, e);
    }
    JsonNode payload =
        envelope.has("schema") && envelope.has("payload") ? envelope.get("payload") : envelope;
    return row(
        String.valueOf(event.op().code()),
        event.key(),
        payload.get("before"),
        payload.get("after"),
        event.source().describe(),
        event.source().tsMs(),
        event.source().snapshot(),
        topic,
        partition,
        offset);
  }
}
