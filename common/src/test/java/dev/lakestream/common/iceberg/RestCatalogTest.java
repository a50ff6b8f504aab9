package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.testkit.RestCatalogServer;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * The pipeline's REST catalog against a REST server over HTTP: a commit to one branch, read before
 * another commit landed on the other branch, asks for a sequence number that is no longer free. A server that refuses that as a bad request (as Iceberg's server code did before
 * 1.11) gets the commit again, on the table as it is now, from {@link RestCatalog}; Iceberg's own
 * REST catalog gives up on it.
 */
class RestCatalogTest {

  private static final TableIdentifier ID = TableIdentifier.of("inventory", "customers");
  private static final Types.StructType ROW = Types.StructType.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "name", Types.StringType.get()));

  @Test
  void aCommitRefusedForItsSequenceNumberIsRetriedAndLands() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse();
        RestCatalogServer server =
            RestCatalogServer.servingSequenceConflictsAsBadRequests(warehouse.catalog())) {
      Catalog catalog = CatalogLoader.load("rest", properties(server));
      assertThat(catalog).isInstanceOf(RestCatalog.class);
      new TableManager(catalog).ensure(ID, ROW, List.of("id"), "f1");
      long mainBefore = catalog.loadTable(ID).snapshot(Branches.MAIN).snapshotId();
      server.beforeNextCommit(() -> realtimeCommitMeanwhile(warehouse));

      catalog.loadTable(ID).newFastAppend().toBranch(Branches.MAIN).commit();

      assertThat(server.badRequests())
          .as("commits refused for their sequence number")
          .isEqualTo(1);
      Table now = catalog.loadTable(ID);
      assertThat(now.snapshot(Branches.MAIN).parentId()).isEqualTo(mainBefore);
      assertThat(now.snapshot(Branches.MAIN).sequenceNumber())
          .isGreaterThan(now.snapshot(Branches.REALTIME).sequenceNumber());
      ((AutoCloseable) catalog).close();
    }
  }

  @Test
  void icebergsOwnRestCatalogGivesUpOnTheSameCommit() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse();
        RestCatalogServer server =
            RestCatalogServer.servingSequenceConflictsAsBadRequests(warehouse.catalog())) {
      Catalog catalog =
          CatalogUtil.buildIcebergCatalog("rest", properties(server), new Configuration());
      assertThat(catalog).isExactlyInstanceOf(RESTCatalog.class);
      new TableManager(catalog).ensure(ID, ROW, List.of("id"), "f1");
      server.beforeNextCommit(() -> realtimeCommitMeanwhile(warehouse));
      Table table = catalog.loadTable(ID);

      assertThatThrownBy(() -> table.newFastAppend().toBranch(Branches.MAIN).commit())
          .isInstanceOf(BadRequestException.class)
          .hasMessageContaining(RestCatalogClient.SEQUENCE_TAKEN);
      ((AutoCloseable) catalog).close();
    }
  }

  /** Ingest's committer lands a commit on realtime between the client's read and its commit. */
  private static void realtimeCommitMeanwhile(TemporaryWarehouse warehouse) {
    warehouse
        .catalog()
        .loadTable(ID)
        .newFastAppend()
        .toBranch(Branches.REALTIME)
        .commit();
  }

  private static Map<String, String> properties(RestCatalogServer server) {
    return new HashMap<>(server.catalogProperties(LocalFileIO.class.getName()));
  }
}
