package dev.lakestream.ingest.buffer;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ChangeOp;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.ChangeLogTables;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.iceberg.TableNaming;
import dev.lakestream.common.schema.RowConverter;
import dev.lakestream.common.schema.RowShape;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.changelog.ChangeLog;
import io.micrometer.core.instrument.Counter;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether a change record can be applied, and to which table: names the table from the
 * topic, decodes the Debezium envelope, creates the table or evolves its schema when the record
 * first needs it, and converts the row and key once so a value that does not fit its column is
 * refused here rather than found at flush.
 *
 * <p>A TRUNCATE is admitted without a schema (it names no row), also of a table that does not exist
 * yet: the topic's other partitions may still bring rows of before it (a backlog read partition by
 * partition), which the committer removes once a change creates the table.
 *
 * <p>What a record's content causes ends in a {@link BadChangeException} with the reason, whatever
 * threw: decoding and conversion errors of any kind, and the schema changes Iceberg refuses. Errors
 * of the catalog or storage themselves (unreachable, failing commits) are not the record's fault
 * and propagate, so the task is retried rather than the record lost.
 */
final class Admission {

  /**
   * A change that fits its table; {@code row}: its row as converted to {@code rowType} (the table's
   * columns and the source position, left empty), null for a delete or a truncate.
   */
  record Admitted(
      TableIdentifier table,
      ChangeEvent event,
      boolean logged,
      Types.StructType rowType,
      Record row) {}

  /** A table (by its UUID: a table dropped and created again is another) at a schema version. */
  private record TableSchema(UUID table, int schemaId) {
    static TableSchema of(Table table, Schema schema) {
      return new TableSchema(table.uuid(), schema.schemaId());
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(Admission.class);
  /** How stale the table a batch is written for may be (one catalog read per table per second at most). */
  static final long FRESH_MS = 1_000;
  /** How often a table refused for its columns is read again from the catalog. */
  static final long RECHECK_MS = 30_000;

  private final IngestConfig config;
  private final TableManager tables;
  private final TableNaming naming;
  private final DebeziumDecoder decoder = new DebeziumDecoder();
  private final RowShape.Resolver shapes = new RowShape.Resolver();
  /** Key columns by table and schema id. */
  private final Map<TableSchema, Types.StructType> keyTypes = new HashMap<>();

  private final Map<TableSchema, Types.StructType> rowTypes = new HashMap<>();
  private Table lastTable;
  private Schema lastSchema;
  private TableSchema lastTableSchema;
  /** The fingerprints of the shapes each table already holds (bounded by the distinct shapes). */
  private final Map<TableIdentifier, Set<String>> accepted = new HashMap<>();
  /** The table object {@link #accepted}'s shapes were checked against (another once loaded anew). */
  private final Map<TableIdentifier, Table> acceptedIn = new HashMap<>();

  private final Map<TableIdentifier, Logging> logged = new HashMap<>();
  private final Counter changelogSkipped;
  private final SourceNames sourceNames;

  Admission(IngestConfig config, TableManager tables, Counter changelogSkipped) {
    this.config = config;
    this.tables = tables;
    this.changelogSkipped = changelogSkipped;
    this.sourceNames = new SourceNames(tables);
    this.naming = config.tableNaming();
  }

  /**
   * The table of {@code topic}'s batches: as the topic's records were admitted (a batch holds only
   * admitted records); {@code source}, the source table a change of the batch names, when no record
   * of the topic was admitted in this task's run (a batch an earlier version kept in its stores).
   */
  TableIdentifier tableOf(String topic, Supplier<Optional<SourceTable>> source) {
    return naming.tableFor(topic, source);
  }

  DebeziumDecoder decoder() {
    return decoder;
  }

  /** Empty for a tombstone. */
  Optional<Admitted> admit(String topic, byte[] key, byte[] value) {
    TableIdentifier id;
    ChangeEvent event;
    RowShape shape;
    try {
      if (value == null || value.length == 0) {
        return Optional.empty(); // a tombstone: nothing to apply, whatever its topic
      }
      id = naming.tableFor(topic, () -> SourceTable.of(value));
      Optional<ChangeEvent> decoded = decoder.decode(key, value);
      if (decoded.isEmpty()) {
        return Optional.empty();
      }
      event = decoded.get();
      shape = event.op() == ChangeOp.TRUNCATE ? null : shapes.of(event);
    } catch (BadChangeException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw new BadChangeException(e.getMessage(), e);
    } catch (RuntimeException e) {
      throw new BadChangeException("cannot decode the record: " + e, e);
    }
    if (event.op() == ChangeOp.TRUNCATE) {
      return truncate(topic, id, event); // the catalog's errors are not the record's
    }
    if (sourceNames.pending(event.table()) && tables.exists(id)) {
      // Before the table's schema takes this record's columns.
      sourceNames.check(topic, id, tables.table(id), event.table());
    }
    Table table = recheckedForPositionName(id, ensure(id, shape));
    sourceNames.check(topic, id, table, event.table());
    Types.StructType rowType = rowType(table);
    Record row = null;
    try {
      // Convert now so a value that does not fit its column is dead-lettered, not found at flush;
      // the flush takes this row while the table's schema is still the same.
      if (event.op().leavesRow()) {
        row = RowConverter.toRecord(event.afterImage(), event.rowSchema(), rowType);
      }
      Record keyRow = keyRecord(event, keyType(table));
      if (row != null) {
        sameKey(keyRow, row);
      }
    } catch (BadChangeException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new BadChangeException("cannot convert the record to table " + id + ": " + e, e);
    }
    return Optional.of(new Admitted(id, event, logs(id), rowType, row));
  }

  /**
   * The table a batch of {@code events} is written for, as the catalog has it now (a second old at
   * most), with the columns of every change of the batch: created again from them if it was dropped
   * while the batch waited, so the batch goes to the table of that name (a batch written for a
   * dropped table is not committed), and checked against them again if it was loaded anew since they
   * were taken (dropped and created again, perhaps by another instance from an older shape), whoever
   * loaded it.
   */
  Table tableFor(TableIdentifier id, List<ChangeEvent> events) {
    try {
      tables.fresh(id, FRESH_MS);
    } catch (NoSuchTableException e) {
      LOG.info(
          "Table {} was dropped; creating it again for the batch that ends with {}",
          id,
          events.get(events.size() - 1).source().describe());
      tables.forget(id.toString());
      accepted.remove(id);
    }
    // Each distinct shape once, newest first (the one that creates a dropped table is the newest);
    // a shape already checked on this table object costs a set lookup.
    Set<String> seen = new HashSet<>();
    Table table = null;
    for (int i = events.size() - 1; i >= 0; i--) {
      RowShape shape = shapes.of(events.get(i));
      if (seen.add(shape.fingerprint())) {
        table = ensure(id, shape);
      }
    }
    return table;
  }

  /**
   * A TRUNCATE needs no schema. Of a table that does not exist yet it is admitted all the same: rows
   * of before it may still come from the topic's other partitions, and create the table; the
   * committer keeps it until then and applies it to them. Such a truncate is not written to the
   * change log (it writes nothing, and waits in the committer's store with nothing to check).
   */
  private Optional<Admitted> truncate(String topic, TableIdentifier id, ChangeEvent event) {
    if (!tables.exists(id)) {
      LOG.info(
          "TRUNCATE of {} at {}: the table does not exist yet; kept until a change creates it, for"
              + " the rows of before it the topic's other partitions may bring",
          id,
          event.source().describe());
      return Optional.of(new Admitted(id, event, false, null, null));
    }
    Table table = tables.table(id);
    if (!table.refs().containsKey(Branches.REALTIME)) {
      // A change log of that name, or a table ingest has not taken over yet: no realtime branch to
      // truncate (the commit would fail on it at every retry).
      throw new BadChangeException("TRUNCATE of " + id + ": the table has no " + Branches.REALTIME
          + " branch"
          + (ChangeLogTables.isLog(table)
              ? "; it is a change log, not this source table's mirror: map this source table's"
                  + " topic to another name (ingest.table.name.regex and"
                  + " ingest.table.name.replacement)"
              : "; ingest takes the table over with its first row change, after which a TRUNCATE"
                  + " applies: replay this one then"));
    }
    // Not the rows of another source table of the name.
    sourceNames.check(topic, id, table, event.table());
    // A table whose columns ingest cannot write beside its own refuses it too.
    rowType(recheckedForPositionName(id, table));
    return Optional.of(new Admitted(id, event, logs(id), null, null));
  }

  /**
   * Whether the changes of {@code id} go to its change log: the table is listed in {@code
   * ingest.changelog.tables}, and its log's name is not another table's ({@link ChangeLog#ensure},
   * asked once per table in a task's run). A listed table's change that is not logged is counted.
   */
  private boolean logs(TableIdentifier id) {
    Logging logging = logging(id);
    if (logging == Logging.SKIPPED) {
      changelogSkipped.increment();
    }
    return logging == Logging.LOGGED;
  }

  private Logging logging(TableIdentifier id) {
    Logging known = logged.get(id);
    if (known == null) {
      known = !config.changelogFor(id)
          ? Logging.NONE
          : ChangeLog.ensure(tables, id).isPresent() ? Logging.LOGGED : Logging.SKIPPED;
      logged.put(id, known);
    }
    return known;
  }

  /** Whether a table keeps a change log: not listed, listed and logged, listed but its log's name taken. */
  private enum Logging {
    NONE,
    LOGGED,
    SKIPPED
  }

  private Table ensure(TableIdentifier id, RowShape shape) {
    Set<String> acceptedOfTable = accepted.computeIfAbsent(id, t -> new HashSet<>());
    if (!acceptedOfTable.isEmpty()) {
      Table cached;
      try {
        cached = tables.table(id);
      } catch (NoSuchTableException e) {
        // Dropped (the committer found out and forgot it): created again below, from this record.
        LOG.info("Table {} was dropped; creating it again from {}", id, shape.type());
        cached = null;
      }
      if (cached != acceptedIn.get(id)) {
        // Dropped, or loaded anew (dropped and created again, perhaps by another instance from an
        // older shape): every shape is checked again on the table as it is now.
        acceptedOfTable.clear();
      } else if (acceptedOfTable.contains(shape.fingerprint())) {
        return cached;
      }
    }
    Table table;
    try {
      table = tables.ensure(id, shape.type(), shape.keyColumns(), shape.fingerprint());
    } catch (ValidationException | IllegalArgumentException e) {
      // Iceberg refuses the schema the record asks for (a name or type it cannot take).
      throw new BadChangeException(
          "table " + id + " cannot take the record's schema: " + e.getMessage(), e);
    }
    acceptedOfTable.add(shape.fingerprint());
    acceptedIn.put(id, table);
    return table;
  }

  /**
   * The struct of the rows a batch writes to {@code table} as it is now: its columns and the source
   * position. Made once per table and schema version, not per record.
   */
  Types.StructType rowType(Table table) {
    Schema schema = table.schema();
    return rowTypes.computeIfAbsent(tableSchema(table, schema), k -> withPosition(table, schema));
  }

  /**
   * {@code table}, or, when it has a column of the source position's name (refused by {@link
   * #rowType}), the table as the catalog has it now, read at most every {@value #RECHECK_MS} ms: an
   * operator who dropped the column does not have to restart ingest.
   */
  private Table recheckedForPositionName(TableIdentifier id, Table table) {
    return table.schema().findField(SourcePositions.NAME) == null
        ? table
        : tables.fresh(id, RECHECK_MS);
  }

  private static Types.StructType withPosition(Table table, Schema schema) {
    if (schema.findField(SourcePositions.NAME) != null) {
      // Added by a version before the column's name was refused: every change would fail here.
      throw new BadChangeException("table " + table.name() + " has a column named \""
          + SourcePositions.NAME + "\", the name of the source position ingest writes in every"
          + " data file: drop the column from the table (ALTER TABLE ... DROP COLUMN) and leave it"
          + " out of the capture (the connector's column.exclude.list)");
    }
    return SourcePositions.withPosition(schema).asStruct();
  }

  /**
   * The table's UUID and the id of {@code schema} (read once by the caller: another thread may
   * refresh the shared table meanwhile), remembered for the last table and schema instance seen (a
   * table's UUID is parsed from its metadata's text at every call).
   */
  private TableSchema tableSchema(Table table, Schema schema) {
    if (table != lastTable || schema != lastSchema) {
      lastTableSchema = TableSchema.of(table, schema);
      lastTable = table;
      lastSchema = schema;
    }
    return lastTableSchema;
  }

  /** The key columns of {@code table} as it is now; made once per table and schema version. */
  Types.StructType keyType(Table table) {
    Schema schema = table.schema();
    return keyTypes.computeIfAbsent(
        tableSchema(table, schema),
        k -> TypeUtil.select(schema, schema.identifierFieldIds()).asStruct());
  }

  static Record keyRecord(ChangeEvent event, Types.StructType keyType) {
    return RowConverter.toRecord(event.key(), event.keySchema(), keyType);
  }

  /**
   * The record's key names the row its value holds: the batch keys the change by the one and writes
   * the other, so a key other than the row's would delete one row and leave the row it wrote beside
   * that key's current one. Debezium's column masks and truncations change the value's column and
   * not the key's; a transform may rewrite either.
   */
  private static void sameKey(Record key, Record row) {
    for (Types.NestedField field : key.struct().fields()) {
      Object inKey = key.getField(field.name());
      Object inRow = row.getField(field.name());
      if (!Objects.equals(inKey, inRow)) {
        throw new BadChangeException("the record's key has " + field.name() + " = " + inKey
            + " but its row has " + inRow + ": a key must name the row its value holds (a"
            + " column.mask.* or column.truncate.* setting of the connector that matches a key"
            + " column changes the row's value only; so may a transform)");
      }
    }
  }
}
