package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.CommitsThrough;
import dev.lakestream.testkit.LostReplyJdbcDriver;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JDBC catalog whose commit reply is lost after the database applied it (the connection fails
 * after the pointer's {@code UPDATE} ran; Iceberg's connection pool runs it again, finds no row to
 * update and reports the commit refused): the catalog the apps load takes such a commit for
 * committed, so the change is on the table once and every snapshot stays readable.
 */
class JdbcCatalogWithLandedCommitsTest {

  private static final TableIdentifier ID = TableIdentifier.of("inventory", "items");
  private static final Schema SCHEMA =
      new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir
  Path dir;

  private final SimpleMeterRegistry metrics = new SimpleMeterRegistry();
  private String database;
  private Catalog catalog;
  private Table table;

  @BeforeEach
  void openCatalog() {
    Metrics.addRegistry(metrics);
    database = "jdbc:sqlite:" + dir.resolve("catalog.db");
    catalog = CatalogLoader.load(
        "lake",
        Map.of(
            "catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog",
            "uri", LostReplyJdbcDriver.url(database),
            "warehouse", dir.toString(),
            "jdbc.schema-version", "V1",
            "io-impl", LocalFileIO.class.getName()));
    ((SupportsNamespaces) catalog).createNamespace(Namespace.of("inventory"));
    table = catalog
        .buildTable(ID, SCHEMA)
        .withPartitionSpec(PartitionSpec.unpartitioned())
        .withProperty(TableProperties.FORMAT_VERSION, "3")
        .create();
    table.newFastAppend().appendFile(dataFile("a")).commit();
  }

  @AfterEach
  void closeCatalog() throws Exception {
    ((AutoCloseable) catalog).close();
    Metrics.removeRegistry(metrics);
  }

  @Test
  void theAppsLoadTheJdbcCatalogThatChecksForLandedCommits() throws Exception {
    assertThat(catalog).isInstanceOf(JdbcCatalogWithLandedCommits.class);
    Catalog byType = CatalogLoader.load(
        "lake", Map.of("type", "jdbc", "uri", database, "warehouse", dir.toString()));
    try {
      assertThat(byType).isInstanceOf(JdbcCatalogWithLandedCommits.class);
    } finally {
      ((AutoCloseable) byType).close();
    }
  }

  @Test
  void anAppendWhoseReplyIsLostIsOnTheTableOnce() throws IOException {
    double before = reconciled();
    int lostBefore = LostReplyJdbcDriver.lost(database);
    LostReplyJdbcDriver.loseNext(database, 1);

    table.newFastAppend().appendFile(dataFile("b")).commit();

    assertThat(LostReplyJdbcDriver.lost(database) - lostBefore)
        .as("the append's reply was lost")
        .isEqualTo(1);
    Table read = catalog.loadTable(ID);
    assertThat(read.snapshots()).as("one snapshot per append").hasSize(2);
    assertThat(plannedFiles(read)).containsExactly(path("a"), path("b"));
    assertEveryManifestListExists(read);
    assertThat(reconciled() - before).isEqualTo(1.0);
  }

  @Test
  void aDeletionVectorWhoseReplyIsLostLeavesTheBranchReadable() throws IOException {
    long base = table.currentSnapshot().snapshotId();
    LostReplyJdbcDriver.loseNext(database, 1);

    // As sync commits to main: validated from the planned base against concurrent vectors.
    table
        .newRowDelta()
        .addDeletes(deletionVector(
            table, table.currentSnapshot().addedDataFiles(table.io()).iterator().next()))
        .validateFromSnapshot(base)
        .validateNoConflictingDeleteFiles()
        .commit();

    Table read = catalog.loadTable(ID);
    assertThat(read.snapshots()).hasSize(2);
    assertThat(read.currentSnapshot().parentId()).isEqualTo(base);
    assertEveryManifestListExists(read);
    assertThat(deletesPerTask(read)).as("the one data file with its one vector").containsExactly(1);
  }

  @Test
  void aTransactionWhoseReplyIsLostIsOnTheTableOnce() throws IOException {
    double before = reconciled();
    int lostBefore = LostReplyJdbcDriver.lost(database);
    LostReplyJdbcDriver.loseNext(database, 1);

    Transaction transaction = table.newTransaction();
    transaction.newFastAppend().appendFile(dataFile("b")).commit();
    transaction.updateProperties().set("lakestream.test", "1").commit();
    transaction.commitTransaction();

    Table read = catalog.loadTable(ID);
    assertThat(read.snapshots()).hasSize(2);
    assertThat(read.properties()).containsEntry("lakestream.test", "1");
    assertThat(plannedFiles(read)).containsExactly(path("a"), path("b"));
    assertEveryManifestListExists(read);
    assertThat(LostReplyJdbcDriver.lost(database) - lostBefore).isEqualTo(1);
    assertThat(reconciled() - before).as("taken as committed at the refusal").isEqualTo(1.0);
  }

  @Test
  void aCommitThatLostTheRaceIsStillCommittedAgainOnTopOfTheOther() throws IOException {
    double before = reconciled();
    AtomicInteger attempts = new AtomicInteger();
    // Another writer commits between this append's reading of the table and its commit: the
    // catalog refuses the commit, which did not land, and Iceberg commits it again on top.
    Table racing = CommitsThrough.table(catalog.loadTable(ID), (ops, base, metadata) -> {
      if (attempts.incrementAndGet() == 1) {
        catalog.loadTable(ID).newFastAppend().appendFile(dataFile("b")).commit();
      }
      ops.commit(base, metadata);
    });

    racing.newFastAppend().appendFile(dataFile("c")).commit();

    assertThat(attempts).as("refused once, then committed").hasValue(2);

    Table read = catalog.loadTable(ID);
    assertThat(read.snapshots()).hasSize(3);
    assertThat(plannedFiles(read)).containsExactly(path("a"), path("b"), path("c"));
    assertEveryManifestListExists(read);
    assertThat(reconciled()).as("a refusal that did not land is not counted").isEqualTo(before);
  }

  private String path(String name) {
    return table.location() + "/data/" + name + ".parquet";
  }

  /** A data file's entry (the file need not exist to be committed and planned). */
  private DataFile dataFile(String name) {
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath(path(name))
        .withFileSizeInBytes(100)
        .withRecordCount(2)
        .build();
  }

  /** A deletion vector's entry of {@code target} (the Puffin file need not exist to be committed). */
  static DeleteFile deletionVector(Table table, DataFile target) {
    return FileMetadata.deleteFileBuilder(PartitionSpec.unpartitioned())
        .ofPositionDeletes()
        .withFormat(FileFormat.PUFFIN)
        .withPath(table.location() + "/data/dv.puffin")
        .withFileSizeInBytes(60)
        .withRecordCount(1)
        .withReferencedDataFile(target.location())
        .withContentOffset(4)
        .withContentSizeInBytes(40)
        .build();
  }

  /** How many deletes each planned task of {@code table} has. */
  static List<Integer> deletesPerTask(Table table) throws IOException {
    List<Integer> deletes = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(t -> deletes.add(t.deletes().size()));
    }
    return deletes;
  }

  private static List<String> plannedFiles(Table table) throws IOException {
    List<String> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(t -> files.add(t.file().location()));
    }
    files.sort(String::compareTo);
    return files;
  }

  static void assertEveryManifestListExists(Table table) {
    for (Snapshot snapshot : table.snapshots()) {
      assertThat(table.io().newInputFile(snapshot.manifestListLocation()).exists())
          .as("manifest list of snapshot %s", snapshot.snapshotId())
          .isTrue();
    }
  }

  private double reconciled() {
    return metrics.counter(LandedCommitCheck.RECONCILED_METRIC).count();
  }
}
