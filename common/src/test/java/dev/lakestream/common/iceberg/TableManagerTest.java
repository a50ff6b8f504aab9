package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.testkit.CommitsThrough;
import dev.lakestream.testkit.DelegatingCatalog;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.types.Types.NestedField;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TableManagerTest {

  private static final TableIdentifier ID = TableIdentifier.of("inventory", "customers");
  private static final Types.StructType ROW = Types.StructType.of(
      NestedField.required(1, "id", Types.LongType.get()),
      NestedField.optional(2, "qty", Types.IntegerType.get()),
      NestedField.optional(3, "name", Types.StringType.get()));

  private TemporaryWarehouse warehouse;
  private Catalog catalog;
  private TableManager tables;

  @BeforeEach
  void setUp() throws Exception {
    warehouse = new TemporaryWarehouse();
    catalog = CatalogLoader.load(TemporaryWarehouse.CATALOG_NAME, warehouse.catalogProperties());
    tables = new TableManager(catalog);
  }

  @AfterEach
  void tearDown() throws Exception {
    ((AutoCloseable) catalog).close();
    warehouse.close();
  }

  @Test
  void createsFormatV3TableWithKeyAsIdentifierFieldsAndBothBranches() {
    Table table = tables.ensure(ID, ROW, List.of("id"), "f1");
    assertThat(((HasTableOperations) table).operations().current().formatVersion())
        .isEqualTo(3);
    assertThat(table.schema().identifierFieldNames()).containsExactly("id");
    assertThat(table.schema().findField("id").isRequired()).isTrue();
    assertThat(table.schema().findField("qty").isOptional()).isTrue();
    assertThat(table.spec().isUnpartitioned()).isTrue();
    assertThat(table.refs()).containsKeys(Branches.MAIN, Branches.REALTIME);
    assertThat(table.snapshot(Branches.REALTIME).snapshotId())
        .isEqualTo(table.snapshot(Branches.MAIN).snapshotId());
  }

  /**
   * A table created beforehand (by Spark, or through the catalog, in format version 2 as most
   * default to) is taken over as version 3: sync's deletion vectors need it, and a version 2 table
   * would refuse every cycle's commit.
   */
  @Test
  void takesOverAnExistingFormatVersion2TableAsVersion3() {
    catalog
        .buildTable(ID, new Schema(ROW.fields(), Set.of(1)))
        .withProperty("format-version", "2")
        .create();

    Table table = tables.ensure(ID, ROW, List.of("id"), "f1");

    assertThat(((HasTableOperations) table).operations().current().formatVersion())
        .isEqualTo(3);
    assertThat(catalog.loadTable(ID).properties()).containsEntry(TableManager.MANAGED, "true");
    assertThat(table.refs()).containsKeys(Branches.MAIN, Branches.REALTIME);
  }

  /**
   * A version 2 table with row-level deletes is refused, not raised: Iceberg reads a data file's
   * deletion vector in place of its position deletes, so sync's first vector would bring back the
   * rows they delete. Every record for it is dead-lettered with the remedy; once the deletes are
   * rewritten away it is taken over.
   */
  @Test
  void refusesAVersion2TableWithRowLevelDeletesUntilTheyAreGone() {
    Table v2 = catalog
        .buildTable(ID, new Schema(ROW.fields(), Set.of(1)))
        .withProperty("format-version", "2")
        .create();
    DataFile data = DataFiles.builder(v2.spec())
        .withPath(v2.location() + "/data/a.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(100)
        .withRecordCount(2)
        .build();
    DeleteFile deletes = FileMetadata.deleteFileBuilder(v2.spec())
        .ofPositionDeletes()
        .withPath(v2.location() + "/data/a-deletes.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(50)
        .withRecordCount(1)
        .build();
    v2.newRowDelta().addRows(data).addDeletes(deletes).commit();

    assertThatThrownBy(() -> tables.ensure(ID, ROW, List.of("id"), "f1"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("is format version 2 and holds row-level delete files");
    assertThatThrownBy(() -> tables.ensure(ID, ROW, List.of("id"), "f1"))
        .as("tried again with the next record")
        .isInstanceOf(BadChangeException.class);
    assertThat(
            ((HasTableOperations) catalog.loadTable(ID)).operations().current().formatVersion())
        .isEqualTo(2);

    // The deletes rewritten away (here: the file they delete from removed).
    catalog.loadTable(ID).newRowDelta().removeRows(data).removeDeletes(deletes).commit();
    Table table = tables.ensure(ID, ROW, List.of("id"), "f1");
    assertThat(((HasTableOperations) table).operations().current().formatVersion())
        .isEqualTo(3);
    assertThat(table.refs()).containsKeys(Branches.MAIN, Branches.REALTIME);
  }

  /**
   * A partitioned table is refused, not taken over: ingest writes unpartitioned files, so every
   * flush of its batches would fail (and the stream thread with it). Each record for it is
   * dead-lettered with the remedy, and the table is left as it was.
   */
  @Test
  void refusesAPartitionedTable() {
    Schema schema = new Schema(ROW.fields(), Set.of(1));
    catalog
        .buildTable(ID, schema)
        .withPartitionSpec(PartitionSpec.builderFor(schema).bucket("id", 4).build())
        .create();
    assertThatThrownBy(() -> tables.ensure(ID, ROW, List.of("id"), "f1"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("is partitioned")
        .hasMessageContaining("ingest.table.name.regex");
    assertThat(catalog.loadTable(ID).properties()).doesNotContainKey(TableManager.MANAGED);
    assertThat(catalog.loadTable(ID).refs()).doesNotContainKey(Branches.REALTIME);
  }

  @Test
  void addsNewColumnsAndWidensTypes() {
    tables.ensure(ID, ROW, List.of("id"), "f1");
    Types.StructType evolved = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, "qty", Types.LongType.get()),
        NestedField.optional(3, "email", Types.StringType.get()));
    tables.ensure(ID, evolved, List.of("id"), "f2");
    Table reloaded = catalog.loadTable(ID);
    assertThat(reloaded.schema().findField("qty").type()).isEqualTo(Types.LongType.get());
    assertThat(reloaded.schema().findField("email").type()).isEqualTo(Types.StringType.get());
    assertThat(reloaded.schema().findField("name")).isNotNull();
  }

  @Test
  void rejectsDifferentPrimaryKey() {
    tables.ensure(ID, ROW, List.of("id"), "f1");
    assertThatThrownBy(() -> tables.ensure(ID, ROW, List.of("id", "name"), "f3"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("has key [id]");
  }

  /**
   * {@code _pos} and ingest's position column are refused, as a new table's column and as a new
   * column, before anything is committed; a table that already has {@code _pos} (an earlier
   * version made it) keeps taking its changes. Other metadata names are plain columns.
   */
  @Test
  void refusesColumnsNamedLikeTheRowPositionOrTheSourcePositionAndKeepsTablesThatHaveThem() {
    Types.StructType withPos = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, "_pos", Types.LongType.get()));
    assertThatThrownBy(() -> tables.ensure(ID, withPos, List.of("id"), "p1"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("table inventory.customers cannot take the record's column \"_pos\"")
        .hasMessageContaining("column.exclude.list");
    assertThat(catalog.tableExists(ID)).as("no table made").isFalse();

    Types.StructType withOthers = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, "_file", Types.StringType.get()),
        NestedField.optional(3, "_row_id", Types.LongType.get()),
        NestedField.optional(
            4, "s", Types.StructType.of(NestedField.optional(5, "_pos", Types.LongType.get()))));
    tables.ensure(ID, withOthers, List.of("id"), "o1");
    Types.StructType plusPosition = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, SourcePositions.NAME, Types.BinaryType.get()));
    assertThatThrownBy(() -> tables.ensure(ID, plusPosition, List.of("id"), "o2"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("\"" + SourcePositions.NAME + "\"");
    assertThat(catalog.loadTable(ID).schema().findField(SourcePositions.NAME)).isNull();

    // A table an earlier version made with the column.
    catalog.loadTable(ID).updateSchema().addColumn("_pos", Types.LongType.get()).commit();
    TableManager later = new TableManager(catalog);
    Types.StructType stillWithPos = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, "_pos", Types.LongType.get()),
        NestedField.optional(3, "added", Types.StringType.get()));
    later.ensure(ID, stillWithPos, List.of("id"), "p2");
    assertThat(catalog.loadTable(ID).schema().findField("added")).isNotNull();
  }

  /** Iceberg takes no floating-point or nested key column: refused with the remedy, no table made. */
  @Test
  void refusesKeysIcebergTakesAsNoIdentifierField() {
    for (Types.NestedField key : List.of(
        NestedField.optional(1, "k", Types.DoubleType.get()),
        NestedField.optional(1, "k", Types.FloatType.get()),
        NestedField.optional(1, "k", Types.ListType.ofOptional(3, Types.IntegerType.get())))) {
      Types.StructType row =
          Types.StructType.of(key, NestedField.optional(2, "v", Types.StringType.get()));
      assertThatThrownBy(() -> tables.ensure(ID, row, List.of("k"), key.type().toString()))
          .as("%s", key.type())
          .isInstanceOf(BadChangeException.class)
          .hasMessageContaining("table inventory.customers cannot take key column \"k\" of type")
          .hasMessageContaining("message.key.columns")
          .satisfies(e -> assertThat(e.getMessage().contains("decimal.handling.mode is double"))
              .as("the decimal mode named for a floating-point key only")
              .isEqualTo(!key.type().isNestedType()));
      assertThat(catalog.tableExists(ID)).isFalse();
    }
  }

  /**
   * Another instance drops the table and creates it again while this one holds the old one: a new
   * column that arrives before anything here refreshed the table goes to the new table (the schema
   * update's retry used to fail on the changed UUID, failing the stream thread).
   */
  @Test
  void aNewColumnForATableCreatedAgainByAnotherInstanceGoesToTheNewTable() {
    tables.ensure(ID, ROW, List.of("id"), "f1");
    catalog.dropTable(ID, false);
    new TableManager(catalog).ensure(ID, ROW, List.of("id"), "f1");
    Types.StructType evolved = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, "qty", Types.IntegerType.get()),
        NestedField.optional(3, "name", Types.StringType.get()),
        NestedField.optional(4, "email", Types.StringType.get()));
    Table table = tables.ensure(ID, evolved, List.of("id"), "f2");
    assertThat(table.uuid()).isEqualTo(catalog.loadTable(ID).uuid());
    assertThat(catalog.loadTable(ID).schema().findField("email")).isNotNull();
  }

  @Test
  void secondInstanceUsesTableCreatedByFirstAndEvolvesIt() {
    tables.ensure(ID, ROW, List.of("id"), "f1");
    TableManager other = new TableManager(catalog);
    Types.StructType more = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, "extra", Types.BooleanType.get()));
    other.ensure(ID, more, List.of("id"), "f4");
    // The first manager's cached table is stale; evolving through it must still succeed.
    Types.StructType evenMore = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, "late", Types.DateType.get()));
    tables.ensure(ID, evenMore, List.of("id"), "f5");
    Table reloaded = catalog.loadTable(ID);
    assertThat(reloaded.schema().findField("extra")).isNotNull();
    assertThat(reloaded.schema().findField("late")).isNotNull();
  }

  @Test
  void embeddedDefaultIsJdbcOnSqliteInTheWarehouse() {
    Map<String, String> props =
        CatalogLoader.withEmbeddedDefault(Map.of("warehouse", warehouse.dir().toString()));
    assertThat(props.get("catalog-impl")).isEqualTo("org.apache.iceberg.jdbc.JdbcCatalog");
    assertThat(props.get("uri")).isEqualTo("jdbc:sqlite:" + warehouse.dir().resolve("catalog.db"));
    Map<String, String> rest =
        CatalogLoader.withEmbeddedDefault(Map.of("type", "rest", "uri", "http://catalog:8181"));
    assertThat(rest).isEqualTo(Map.of("type", "rest", "uri", "http://catalog:8181"));
  }

  @Test
  void mapsDebeziumTopicsToNamespaceAndTable() {
    assertThat(TableNaming.debeziumDefault().tableFor("dbserver1.inventory.customers"))
        .isEqualTo(TableIdentifier.of("inventory", "customers"));
    TableNaming custom = new TableNaming("^cdc\\.(.+)$", "bronze.$1");
    assertThat(custom.tableFor("cdc.orders")).isEqualTo(TableIdentifier.of("bronze", "orders"));
    assertThatThrownBy(() -> TableNaming.debeziumDefault().tableFor("heartbeat"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not match");
  }

  @Test
  void threadsRacingToCreateTheSameTableAllGetIt() throws Exception {
    int threads = 4;
    var pool = Executors.newFixedThreadPool(threads);
    var start = new CountDownLatch(1);
    List<Future<Table>> results = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      TableManager own = new TableManager(catalog);
      results.add(pool.submit(() -> {
        start.await();
        return own.ensure(ID, ROW, List.of("id"), "f1");
      }));
    }
    start.countDown();
    for (var result : results) {
      assertThat(result.get().schema().identifierFieldNames()).containsExactly("id");
    }
    pool.shutdown();
    assertThat(catalog.loadTable(ID).refs()).containsKeys(Branches.MAIN, Branches.REALTIME);
  }

  /**
   * The table is made by something other than ingest (Spark, a person) between ingest's check that
   * it is missing and its own create: ingest's create fails, and the table it then uses is taken
   * over as one that existed before (the mark, both branches), not used as found, which would leave
   * every cycle of sync refused as a table it does not manage.
   */
  @Test
  void aTableCreatedByAnotherWriterDuringTheCreateIsTakenOver() {
    CreatedMeanwhile meanwhile = new CreatedMeanwhile(catalog);

    Table table = new TableManager(meanwhile).ensure(ID, ROW, List.of("id"), "f1");

    assertThat(meanwhile.created).as("the other writer created the table first").isTrue();
    Table reloaded = catalog.loadTable(ID);
    assertThat(TableManager.isManaged(reloaded))
        .as("managed after the takeover")
        .isTrue();
    assertThat(reloaded.refs()).containsKeys(Branches.MAIN, Branches.REALTIME);
    assertThat(table.schema().identifierFieldNames()).containsExactly("id");
  }

  /**
   * Ingest's committer, sync and the maintenance commit to one table several times a second, and
   * the JDBC catalog fails a commit whenever another landed since it read the table. A table the
   * pipeline creates retries such a commit more than Iceberg's default four times: a commit to main
   * that loses to six realtime commits in a row still lands, on its seventh attempt.
   */
  @Test
  void aCommitThatLosesToSixConcurrentCommitsInARowStillLands() {
    Table table = tables.ensure(ID, ROW, List.of("id"), "f1");
    assertThat(table.properties()).containsAllEntriesOf(TableManager.COMMIT_RETRY);
    long mainBefore = table.snapshot(Branches.MAIN).snapshotId();

    AtomicInteger attempts = new AtomicInteger();
    losing(table, 6, attempts).newFastAppend().toBranch(Branches.MAIN).commit();

    assertThat(attempts).hasValue(7);
    Table reloaded = catalog.loadTable(ID);
    assertThat(reloaded.snapshot(Branches.MAIN).parentId()).isEqualTo(mainBefore);
    assertThat(ancestors(reloaded, Branches.REALTIME)).isEqualTo(7); // the first and six more
  }

  /**
   * A table taken over keeps the commit retries it sets itself and gets the others. With
   * Iceberg's default of four retries, the commit of the test above fails after its fifth attempt:
   * what lets it land is the property.
   */
  @Test
  void aTableTakenOverKeepsItsOwnCommitRetriesAndGetsTheOthers() {
    catalog
        .buildTable(ID, new Schema(ROW.fields(), Set.of(1)))
        .withProperty(TableProperties.COMMIT_NUM_RETRIES, "4")
        .create();

    Table table = tables.ensure(ID, ROW, List.of("id"), "f1");

    assertThat(table.properties())
        .containsEntry(TableProperties.COMMIT_NUM_RETRIES, "4")
        .containsEntry(
            TableProperties.COMMIT_MIN_RETRY_WAIT_MS,
            TableManager.COMMIT_RETRY.get(TableProperties.COMMIT_MIN_RETRY_WAIT_MS))
        .containsEntry(
            TableProperties.COMMIT_MAX_RETRY_WAIT_MS,
            TableManager.COMMIT_RETRY.get(TableProperties.COMMIT_MAX_RETRY_WAIT_MS));
    AtomicInteger attempts = new AtomicInteger();
    Table losing = losing(table, 6, attempts);
    assertThatThrownBy(() -> losing.newFastAppend().toBranch(Branches.MAIN).commit())
        .isInstanceOf(CommitFailedException.class);
    assertThat(attempts).hasValue(5);
  }

  private static int ancestors(Table table, String branch) {
    int n = 0;
    for (Snapshot s = table.snapshot(branch);
        s != null;
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      n++;
    }
    return n;
  }

  /**
   * A catalog in which another writer creates {@link #ID} (a plain table, as Spark would) at the
   * moment the pipeline starts to build it, so the pipeline's create finds it there.
   */
  private static final class CreatedMeanwhile extends DelegatingCatalog {
    boolean created;

    CreatedMeanwhile(Catalog delegate) {
      super(delegate);
    }

    @Override
    public TableBuilder buildTable(TableIdentifier id, Schema schema) {
      if (!delegate.tableExists(id)) {
        delegate.buildTable(id, new Schema(ROW.fields(), Set.of(1))).create();
        created = true;
      }
      return delegate.buildTable(id, schema);
    }
  }

  /**
   * {@code table} through which each of the first {@code losses} commits loses: just before it,
   * another writer commits to realtime, as ingest's committer does between sync's read of the
   * table and its commit. Every attempt is counted in {@code attempts}.
   */
  private Table losing(Table table, int losses, AtomicInteger attempts) {
    AtomicInteger left = new AtomicInteger(losses);
    return CommitsThrough.table(table, (ops, base, metadata) -> {
      attempts.incrementAndGet();
      if (left.getAndDecrement() > 0) {
        catalog.loadTable(ID).newFastAppend().toBranch(Branches.REALTIME).commit();
      }
      ops.commit(base, metadata);
    });
  }
}
