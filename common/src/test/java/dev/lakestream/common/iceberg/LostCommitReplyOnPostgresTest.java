package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.testkit.ReplyCuttingProxy;
import java.nio.file.Path;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JDBC catalog on a real PostgreSQL server, its connection cut on the network after the server
 * committed a commit's {@code UPDATE} and before its reply reached the client: PostgreSQL's driver
 * reports the I/O error, Iceberg's connection pool runs the update again on a new connection, and
 * the catalog reports the commit refused. A commit validated as sync's commits to {@code main} are
 * is on the table once, and its branch stays readable.
 */
class LostCommitReplyOnPostgresTest {

  private static final TableIdentifier ID = TableIdentifier.of("inventory", "items");
  private static final Schema SCHEMA =
      new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir
  Path dir;

  @Test
  void aDeletionVectorCommittedOverACutConnectionIsOnTheTableOnce() throws Exception {
    try (EmbeddedPostgres postgres = EmbeddedPostgres.start();
        ReplyCuttingProxy proxy = new ReplyCuttingProxy(postgres.port())) {
      Catalog catalog = CatalogLoader.load(
          "lake",
          Map.of(
              "catalog-impl",
              "org.apache.iceberg.jdbc.JdbcCatalog",
              "uri",
              "jdbc:postgresql://127.0.0.1:" + proxy.port()
                  + "/postgres?sslmode=disable&gssEncMode=disable",
              "jdbc.user",
              "postgres",
              "warehouse",
              dir.toString(),
              "io-impl",
              LocalFileIO.class.getName()));
      try {
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("inventory"));
        Table table = catalog
            .buildTable(ID, SCHEMA)
            .withPartitionSpec(PartitionSpec.unpartitioned())
            .withProperty(TableProperties.FORMAT_VERSION, "3")
            .create();
        DataFile data = DataFiles.builder(PartitionSpec.unpartitioned())
            .withPath(table.location() + "/data/a.parquet")
            .withFileSizeInBytes(100)
            .withRecordCount(2)
            .build();
        table.newFastAppend().appendFile(data).commit();
        long base = table.currentSnapshot().snapshotId();

        proxy.cutNextUpdateReplies(1);
        table
            .newRowDelta()
            .addDeletes(JdbcCatalogWithLandedCommitsTest.deletionVector(table, data))
            .validateFromSnapshot(base)
            .validateNoConflictingDeleteFiles()
            .commit();

        assertThat(proxy.cut())
            .as("connections cut after their update committed")
            .isEqualTo(1);
        Table read = catalog.loadTable(ID);
        assertThat(read.snapshots()).hasSize(2);
        assertThat(read.currentSnapshot().parentId()).isEqualTo(base);
        JdbcCatalogWithLandedCommitsTest.assertEveryManifestListExists(read);
        assertThat(JdbcCatalogWithLandedCommitsTest.deletesPerTask(read))
            .as("the data file with its one vector")
            .containsExactly(1);
      } finally {
        ((AutoCloseable) catalog).close();
      }
    }
  }
}
