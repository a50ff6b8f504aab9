package dev.lakestream.ingest.changelog;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.iceberg.ChangeLogTables;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.iceberg.WithoutHadoopDefaults;
import dev.lakestream.ingest.commit.SourceOffsets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SnapshotRef;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bronze change log of a table: {@code <table>_changelog}, append-only, one row per source
 * change event, raw. The row images stay Debezium's JSON ({@code before}, {@code after}), so the log
 * never needs a schema change when the source table evolves, and keeps exactly what was published.
 */
public final class ChangeLog {

  /** The change log's columns. */
  public static final Schema SCHEMA = ChangeLogTables.SCHEMA;

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

  /** How long a cached change log is taken to exist without asking the catalog again. */
  static final long CHECKED_EVERY_MS = 30_000;

  private ChangeLog() {}

  public static TableIdentifier of(TableIdentifier table) {
    return ChangeLogTables.of(table);
  }

  /**
   * The UUID of the table whose rows the log's latest append that records source offsets logged;
   * empty when it names none (an append of an earlier version).
   */
  public static Optional<String> loggedTableUuid(Table log) {
    return SourceOffsets.recordingSnapshot(log, log.snapshot(SnapshotRef.MAIN_BRANCH))
        .map(s -> s.summary().get(SummaryKeys.LOGGED_TABLE_UUID));
  }

  /**
   * The change log of {@code table}, created when missing (a creation race is fine); empty, with a
   * warning, when a table of that name is not {@code table}'s change log (a mirrored source table
   * named so): no log row is ever written into it, and {@code table} is mirrored without its log.
   * Once loaded the log comes from the table manager's cache, read again from the catalog at most
   * every {@link #CHECKED_EVERY_MS}: a log dropped meanwhile is made again. (The committer that
   * finds it dropped forgets it, but with several instances that committer may run on another
   * one, and this instance's flushes would write rows for the dropped log for as long as it runs.)
   */
  public static Optional<Table> ensure(TableManager tables, TableIdentifier table) {
    TableIdentifier id = of(table);
    Table log;
    try {
      log = tables.fresh(id, CHECKED_EVERY_MS);
    } catch (NoSuchTableException missing) {
      tables.forget(id.toString());
      try {
        Catalog.TableBuilder builder = tables.catalog().buildTable(id, SCHEMA);
        // Each stream task's committer commits its rounds' rows here: retried as the table is.
        TableManager.COMMIT_RETRY.forEach(builder::withProperty);
        builder
            .withPartitionSpec(PartitionSpec.unpartitioned())
            .withProperty(TableProperties.FORMAT_VERSION, "3")
            .withProperty(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
            .withProperty(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "50")
            .withProperty(ChangeLogTables.LOG_OF, table.toString())
            .create();
        LOG.info("Created change log {} of {}", id, table);
      } catch (AlreadyExistsException raced) {
        // Another task created it first (or another table has the name: checked below).
      }
      log = tables.table(id);
    }
    return checked(log, id, table);
  }

  /** {@code log} when it is {@code table}'s change log; an earlier version's log is marked so. */
  private static Optional<Table> checked(Table log, TableIdentifier id, TableIdentifier table) {
    String of = log.properties().get(ChangeLogTables.LOG_OF);
    if (table.toString().equals(of)) {
      return Optional.of(log);
    }
    if (of == null && ChangeLogTables.unmarkedLog(log)) {
      try {
        log.updateProperties().set(ChangeLogTables.LOG_OF, table.toString()).commit();
        LOG.info("Change log {} of an earlier version: marked as the change log of {}", id, table);
      } catch (RuntimeException e) {
        // Recognised by its columns all the same; marked by another task, or at a later start.
        LOG.warn("Change log {} of an earlier version could not be marked: {}", id, e.toString());
      }
      return Optional.of(log);
    }
    LOG.warn(
        "Table {} is {}, not the change log of {}: {} is mirrored without its change log (counted"
            + " in lakestream_ingest_changelog_skipped_total). To keep it, rename one of the two: map"
            + " the other source table's topic to another name (ingest.table.name.regex and"
            + " ingest.table.name.replacement), then restart ingest",
        id,
        of != null
            ? "the change log of " + of
            : TableManager.isManaged(log) || log.properties().containsKey(TableManager.MANAGED)
                ? "a table the pipeline mirrors (a source table of that name)"
                : "a table made outside the pipeline",
        table,
        table);
    return Optional.empty();
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
