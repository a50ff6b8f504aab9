package dev.lakestream.common.iceberg;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.schema.ReservedColumns;
import dev.lakestream.common.schema.SchemaEvolution;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates pipeline tables and keeps their schema able to hold incoming rows.
 *
 * <p>A table is created on its first row: format version 3, the key columns as identifier fields,
 * an empty first snapshot on {@code main} and the {@code realtime} branch pointing at it, all in one
 * transaction. Afterwards new columns are added and types widened as {@link SchemaEvolution}
 * decides; anything else is a {@link BadChangeException}. Several instances may race to create or
 * evolve a table: the loser reloads and checks again. Tables are cached; the cache is safe to use
 * from several threads.
 */
public final class TableManager {

  private static final Logger LOG = LoggerFactory.getLogger(TableManager.class);
  /** Set on every table the pipeline creates or takes over: sync and maintenance act on no other. */
  public static final String MANAGED = "lakestream.managed";

  /**
   * Iceberg's retry of a commit that lost the race for the table's metadata, on every table the
   * pipeline creates or takes over where the table does not set its own. Ingest's realtime
   * committer, sync and the maintenance commit to one table, several times a second together; a
   * catalog that swaps the whole metadata file (JDBC, Hive, Hadoop) fails one whenever another
   * committed since it read the table. Iceberg's defaults (4 retries, waits from 100 ms doubling)
   * made sync sleep through seconds of realtime commits, and then fail its cycle. The loser
   * reads the table again and retries at once: waits from 20 ms, at most a second, and more
   * retries.
   */
  public static final Map<String, String> COMMIT_RETRY = Map.of(
      TableProperties.COMMIT_NUM_RETRIES, "10",
      TableProperties.COMMIT_MIN_RETRY_WAIT_MS, "20",
      TableProperties.COMMIT_MAX_RETRY_WAIT_MS, "1000");

  private final Catalog catalog;
  private final Map<TableIdentifier, Table> tables = new ConcurrentHashMap<>();
  private final Set<String> accepted = ConcurrentHashMap.newKeySet();
  private final Map<TableIdentifier, Long> refreshedAt = new ConcurrentHashMap<>();
  private final Map<TableIdentifier, String> refreshedFor = new ConcurrentHashMap<>();
  /** Tables this manager created, or took over (managed, realtime branch, version 3). */
  private final Set<TableIdentifier> takenOver = ConcurrentHashMap.newKeySet();

  public TableManager(Catalog catalog) {
    this.catalog = catalog;
  }

  public Catalog catalog() {
    return catalog;
  }

  /** The cached table; loads it on first use. */
  public Table table(TableIdentifier id) {
    return tables.computeIfAbsent(id, catalog::loadTable);
  }

  /**
   * The cached table, refreshed when it was last refreshed more than {@code maxAgeMs} ago: a table
   * dropped meanwhile is found out ({@link org.apache.iceberg.exceptions.NoSuchTableException}),
   * one created again is loaded anew.
   */
  public Table fresh(TableIdentifier id, long maxAgeMs) {
    long now = System.currentTimeMillis();
    Long last = refreshedAt.get(id);
    if (last != null && now - last < maxAgeMs && tables.containsKey(id)) {
      return tables.get(id);
    }
    Table table = refresh(id);
    refreshedAt.put(id, now);
    return table;
  }

  /**
   * The cached table, refreshed at its first use for {@code marker} (a sync cycle): metadata at
   * least as new as the marker's start, whatever another instance changed before it (a schema
   * widened, the table dropped and created again), with one catalog read per marker rather than
   * per use. Concurrent first uses may each refresh.
   */
  public Table refreshedFor(TableIdentifier id, String marker) {
    if (marker.equals(refreshedFor.get(id)) && tables.containsKey(id)) {
      return tables.get(id);
    }
    Table table = refresh(id);
    refreshedFor.put(id, marker);
    return table;
  }

  /**
   * Forgets what is cached of {@code table} (dropped, or dropped and created again): the next use
   * loads it from the catalog and checks its schema again.
   */
  public void forget(String table) {
    TableIdentifier id = TableIdentifier.parse(table);
    tables.remove(id);
    refreshedAt.remove(id);
    refreshedFor.remove(id);
    takenOver.remove(id);
    accepted.removeIf(k -> k.startsWith(id + "\u0000"));
  }

  /** Whether the table exists (in the cache, else in the catalog). */
  public boolean exists(TableIdentifier id) {
    try {
      return tables.containsKey(id) || catalog.tableExists(id);
    } catch (NoSuchNamespaceException e) {
      return false; // a REST catalog that reports the table's namespace missing
    }
  }

  /**
   * The table with its latest metadata. A table dropped and created again under the same name
   * (Iceberg refuses to refresh across a change of UUID) is loaded anew.
   */
  public Table refresh(TableIdentifier id) {
    Table table = table(id);
    try {
      table.refresh();
    } catch (IllegalStateException e) {
      if (!createdAgain(e)) {
        throw e;
      }
      LOG.info(
          "Table {} was dropped and created again ({}); loading the new one", id, e.getMessage());
      forget(id.toString());
      table = table(id);
    }
    return table;
  }

  /**
   * Makes sure {@code id} exists and can hold rows of {@code rowType} keyed by {@code keyColumns}.
   * {@code fingerprint} identifies {@code rowType}: once accepted for a table it is not checked
   * again (tables only grow, so a type that fit still fits).
   */
  public Table ensure(
      TableIdentifier id, Types.StructType rowType, List<String> keyColumns, String fingerprint) {
    try {
      return ensureOnce(id, rowType, keyColumns, fingerprint);
    } catch (NoSuchTableException | IllegalStateException e) {
      if (e instanceof IllegalStateException changed && !createdAgain(changed)) {
        throw e;
      }
      // Dropped since it was cached, or dropped and created again (by another instance; the
      // schema update's retry found out): every later record would fail the same way. Forget it
      // and create or take it over from this shape, as a first record would.
      LOG.info(
          "Table {} was dropped or created again ({}); ensuring it from {}",
          id,
          e.getMessage(),
          rowType);
      forget(id.toString());
      return ensureOnce(id, rowType, keyColumns, fingerprint);
    }
  }

  /** Whether Iceberg refused to refresh a table because one of another UUID now has its name. */
  private static boolean createdAgain(IllegalStateException e) {
    return e.getMessage() != null && e.getMessage().contains("UUID does not match");
  }

  private static void refuseReservedColumns(
      TableIdentifier id, Types.StructType rowType, Schema existing) {
    ReservedColumns.refusal(rowType, existing).ifPresent(why -> {
      throw new BadChangeException("table " + id + " cannot take the record's " + why);
    });
  }

  private Table ensureOnce(
      TableIdentifier id, Types.StructType rowType, List<String> keyColumns, String fingerprint) {
    String acceptedKey = id + "\u0000" + fingerprint;
    if (accepted.contains(acceptedKey)) {
      return table(id);
    }
    Table table = tables.get(id);
    if (table == null || !takenOver.contains(id)) {
      // Also when another path cached the table first: the takeover is tried until it holds.
      if (catalog.tableExists(id)) {
        table = withRealtimeBranch(id, refresh(id));
      } else {
        refuseReservedColumns(id, rowType, null);
        table = create(id, rowType, keyColumns);
      }
      takenOver.add(id);
    }
    Table current = table;
    CommitRetry.onConflict(CommitFailedException.class, attempt -> {
      if (attempt > 1) {
        current.refresh(); // another writer changed the schema: plan again from its schema
      }
      // Planned from the schema the update starts from: another thread may refresh the shared
      // table between a read of its schema and the update (a column it then holds could not be
      // added again).
      var update = current.updateSchema();
      Schema base = update.apply();
      checkKey(id, base, keyColumns);
      refuseReservedColumns(id, rowType, base);
      List<SchemaEvolution.Change> changes = SchemaEvolution.plan(base.asStruct(), rowType);
      if (!changes.isEmpty()) {
        SchemaEvolution.apply(changes, update);
        update.commit();
        LOG.info("Evolved schema of {}: {}", id, changes);
      }
      return changes;
    });
    withoutUuidBounds(id, table);
    accepted.add(acceptedKey);
    return table;
  }

  /**
   * Keeps files from recording lower and upper bounds of UUID columns. Parquet orders UUIDs as
   * unsigned bytes, Iceberg 1.12's comparator as signed longs (apache/iceberg#14216): with such
   * bounds Iceberg's own readers skip equality deletes and files that hold the keys they look for,
   * so a reader of realtime (and any engine filtering on a UUID) could see deleted rows or miss
   * rows. Without bounds nothing is pruned on those columns, which random UUIDs would not allow
   * anyway.
   */
  private static void withoutUuidBounds(TableIdentifier id, Table table) {
    List<String> missing = new ArrayList<>();
    for (String name : uuidColumns(table.schema())) {
      String property = TableProperties.METRICS_MODE_COLUMN_CONF_PREFIX + name;
      if (!"counts".equals(table.properties().get(property))) {
        missing.add(property);
      }
    }
    if (missing.isEmpty()) {
      return;
    }
    try {
      var update = table.updateProperties();
      missing.forEach(p -> update.set(p, "counts"));
      update.commit();
      LOG.info("Table {}: no bounds for UUID columns ({})", id, missing);
    } catch (CommitFailedException e) {
      table.refresh(); // another instance set them; checked again on the next schema
    }
  }

  /** Whether Iceberg takes a column of {@code type} as an identifier field. */
  private static boolean identifierType(Type type) {
    return type.isPrimitiveType()
        && type.typeId() != Type.TypeID.FLOAT
        && type.typeId() != Type.TypeID.DOUBLE;
  }

  private Table create(TableIdentifier id, Types.StructType rowType, List<String> keyColumns) {
    if (catalog instanceof SupportsNamespaces namespaces
        && !id.namespace().isEmpty()
        && !namespaces.namespaceExists(id.namespace())) {
      try {
        namespaces.createNamespace(id.namespace());
      } catch (RuntimeException e) {
        // Another instance or thread won the race; catalogs report it differently (the JDBC
        // catalog as a constraint violation), so check rather than trust the exception type.
        if (!namespaces.namespaceExists(id.namespace())) {
          throw e;
        }
        LOG.debug("Namespace {} was created concurrently", id.namespace());
      }
    }
    Set<Integer> identifierIds = new HashSet<>();
    List<Types.NestedField> fields = new ArrayList<>();
    for (Types.NestedField f : rowType.fields()) {
      if (keyColumns.contains(f.name()) && !identifierType(f.type())) {
        throw new BadChangeException("table " + id + " cannot take key column \"" + f.name()
            + "\" of type " + f.type() + ": Iceberg takes no floating-point, list, map or struct"
            + " column as a key (identifier field). Change the key column's type in the source"
            + " (numeric for a floating-point one), or key the table by other unique columns (the"
            + " connector's message.key.columns, with REPLICA IDENTITY FULL on the table)"
            + (f.type().typeId() == Type.TypeID.DOUBLE || f.type().typeId() == Type.TypeID.FLOAT
                ? ". A decimal column arrives as a double when the connector's"
                    + " decimal.handling.mode is double: set it to precise"
                : ""));
      }
      if (keyColumns.contains(f.name())) {
        identifierIds.add(f.fieldId());
        fields.add(Types.NestedField.required(f.fieldId(), f.name(), f.type()));
      } else {
        fields.add(f);
      }
    }
    Schema schema = new Schema(fields, identifierIds);
    checkKey(id, schema, keyColumns);
    try {
      Catalog.TableBuilder builder = catalog.buildTable(id, schema);
      COMMIT_RETRY.forEach(builder::withProperty);
      uuidColumns(schema)
          .forEach(name -> builder.withProperty(
              TableProperties.METRICS_MODE_COLUMN_CONF_PREFIX + name, "counts"));
      Transaction txn = builder
          .withPartitionSpec(PartitionSpec.unpartitioned())
          .withProperty(TableProperties.FORMAT_VERSION, "3")
          .withProperty(MANAGED, "true")
          // Two branches commit every few seconds: keep a bounded metadata log, delete the rest.
          .withProperty(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
          .withProperty(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "50")
          .createTransaction();
      txn.newFastAppend().commit();
      long first = txn.table().currentSnapshot().snapshotId();
      txn.manageSnapshots().createBranch(Branches.REALTIME, first).commit();
      txn.commitTransaction();
      LOG.info("Created table {} (format v3, key {}, branches main and realtime)", id, keyColumns);
    } catch (RuntimeException e) {
      if (!catalog.tableExists(id)) {
        throw e;
      }
      // Another ingest instance made it with the mark and both branches (then this changes
      // nothing), or something else did, without them: taken over as a table that existed before.
      LOG.info("Table {} was created concurrently; using it", id);
      try {
        return withRealtimeBranch(id, refresh(id));
      } catch (RuntimeException takeover) {
        takeover.addSuppressed(e); // why the create failed
        throw takeover;
      }
    }
    return table(id);
  }

  /** The full names of the UUID columns of {@code schema}, nested ones too. */
  private static List<String> uuidColumns(Schema schema) {
    List<String> out = new ArrayList<>();
    TypeUtil.indexByName(schema.asStruct()).forEach((name, fieldId) -> {
      if (schema.findType(fieldId).typeId() == Type.TypeID.UUID) {
        out.add(name);
      }
    });
    return out;
  }

  /**
   * Whether the pipeline manages {@code table}: created or taken over by ingest ({@link #MANAGED}),
   * with both branches. Tables of an earlier version without the property count when their
   * realtime branch carries ingest's commits.
   */
  public static boolean isManaged(Table table) {
    if (!table.refs().containsKey(Branches.REALTIME) || !table.refs().containsKey(Branches.MAIN)) {
      return false;
    }
    if ("true".equals(table.properties().get(MANAGED))) {
      return true;
    }
    Snapshot s = table.snapshot(Branches.REALTIME);
    for (int i = 0; s != null && i < 20; i++, s = BranchFiles.parent(table, s)) {
      if (s.summary().containsKey(SummaryKeys.SOURCE_OFFSETS)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A table created outside the pipeline, or by an earlier version, is marked managed, gets the
   * {@link #COMMIT_RETRY} properties it does not set, and its {@code realtime} branch from {@code
   * main}. A change log ({@link ChangeLogTables}) is never taken over: a source table named like one
   * is refused.
   */
  private static Table withRealtimeBranch(TableIdentifier id, Table table) {
    if (ChangeLogTables.isLog(table)) {
      String of = table.properties().get(ChangeLogTables.LOG_OF);
      throw new BadChangeException("table " + id + " is the change log of "
          + (of != null ? of : "a table (made by an earlier version)")
          + ", not a table to mirror: map this source table's topic to another name"
          + " (ingest.table.name.regex and ingest.table.name.replacement), or stop keeping that"
          + " change log (ingest.changelog.tables) and drop it");
    }
    if (table.spec().isPartitioned()) {
      // Ingest writes unpartitioned files only: every flush of the table's batches would fail.
      throw new BadChangeException("table " + id + " is partitioned (" + table.spec()
          + "); the pipeline writes unpartitioned tables only: map this source table's topic to"
          + " another name (ingest.table.name.regex and ingest.table.name.replacement), or drop"
          + " the table's partition fields with your engine");
    }
    Map<String, String> missing = new TreeMap<>();
    if (!"true".equals(table.properties().get(MANAGED))) {
      missing.put(MANAGED, "true");
    }
    COMMIT_RETRY.forEach((key, value) -> {
      if (!table.properties().containsKey(key)) {
        missing.put(key, value); // a table's own setting is kept
      }
    });
    if (!missing.isEmpty()) {
      try {
        var update = table.updateProperties();
        missing.forEach(update::set);
        update.commit();
        LOG.info("Table {}: set {}", id, missing);
      } catch (CommitFailedException e) {
        table.refresh(); // another instance set them
        if (!"true".equals(table.properties().get(MANAGED))) {
          // Another writer's change, without the mark: the record is retried, and the takeover.
          throw e;
        }
      }
    }
    int version = TableUtil.formatVersion(table);
    if (version < 3) {
      toFormatVersion3(id, table, version);
    }
    if (table.refs().containsKey(Branches.REALTIME)) {
      return table;
    }
    if (table.currentSnapshot() == null) {
      table.newFastAppend().commit();
    }
    try {
      table
          .manageSnapshots()
          .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
          .commit();
      LOG.info("Created branch {} of existing table {}", Branches.REALTIME, id);
    } catch (CommitFailedException | IllegalArgumentException e) {
      table.refresh();
      if (!table.refs().containsKey(Branches.REALTIME)) {
        throw e;
      }
    }
    return table;
  }

  /**
   * Raises a table taken over to format version 3: main's deletes are deletion vectors, which only
   * version 3 holds (a version 2 table would take realtime's batches and refuse every cycle of sync,
   * for ever). A table that holds row-level deletes is refused instead: Iceberg reads a data file's
   * deletion vector in place of its position deletes, so the first vector sync wrote would bring
   * back rows they delete.
   */
  private static void toFormatVersion3(TableIdentifier id, Table table, int version) {
    Snapshot current = table.currentSnapshot();
    if (current != null && holdsDeletes(table, current)) {
      throw new BadChangeException("table " + id + " is format version " + version
          + " and holds row-level delete files; the pipeline needs version 3, whose deletion"
          + " vectors Iceberg reads in place of a file's position deletes. Rewrite its deletes away"
          + " (Spark: CALL system.rewrite_data_files(table => '" + id
          + "', options => map('delete-file-threshold', '1'))) and set 'format-version'='3', or"
          + " let ingest create the table");
    }
    try {
      table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
    } catch (CommitFailedException e) {
      table.refresh(); // another instance may have raised it meanwhile
      if (TableUtil.formatVersion(table) < 3) {
        throw e;
      }
    }
    LOG.warn(
        "Existing table {} was format version {}; raised it to 3, which main's deletion vectors"
            + " need (engines that read only version {} cannot read it any more)",
        id,
        version,
        version);
  }

  /** Whether the snapshot holds delete files (by its summary; by its manifests if it has none). */
  private static boolean holdsDeletes(Table table, Snapshot snapshot) {
    String total = snapshot.summary() == null
        ? null
        : snapshot.summary().get(SnapshotSummary.TOTAL_DELETE_FILES_PROP);
    if (total != null) {
      return !"0".equals(total);
    }
    return !snapshot.deleteManifests(table.io()).isEmpty();
  }

  private static void checkKey(TableIdentifier id, Schema schema, List<String> keyColumns) {
    Set<String> identifiers = new HashSet<>(schema.identifierFieldNames());
    if (!identifiers.equals(new HashSet<>(keyColumns))) {
      throw new BadChangeException(
          "table " + id + " has key " + identifiers + " but the record's key is " + keyColumns
              + "; a change of primary key needs a new table");
    }
  }
}
