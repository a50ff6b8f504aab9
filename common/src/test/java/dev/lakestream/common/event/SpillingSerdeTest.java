package dev.lakestream.common.event;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class SpillingSerdeTest {

  private static final Schema SCHEMA =
      new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @Test
  void smallEventsStayInTheRecordLargeOnesGoToAFileOfTheirTable() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Catalog catalog = warehouse.catalog();
      ((SupportsNamespaces) catalog).createNamespace(Namespace.of("db"));
      Table table = catalog.createTable(TableIdentifier.of("db", "t"), SCHEMA);
      Serde<ConvertTask> serde = SpillingSerde.of(
          EventSerdes.convertTask(),
          ConvertTask::table,
          n -> catalog.loadTable(TableIdentifier.parse(n)),
          2048);

      ConvertTask small = task(2);
      byte[] smallBytes = serde.serializer().serialize("t", small);
      assertThat(smallBytes).isEqualTo(small.toJson());

      ConvertTask large = task(400);
      assertThat(large.toJson().length).isGreaterThan(2048);
      byte[] pointer = serde.serializer().serialize("t", large);
      assertThat(pointer.length).isLessThan(2048);
      String text = new String(pointer, StandardCharsets.UTF_8);
      assertThat(text)
          .contains("\"type\":\"spilled\"", table.location() + "/" + SpillingSerde.FOLDER);

      // A fresh serde (another instance, after a restart) reads it from the file.
      Serde<ConvertTask> other = SpillingSerde.of(
          EventSerdes.convertTask(),
          ConvertTask::table,
          n -> catalog.loadTable(TableIdentifier.parse(n)),
          2048);
      assertThat(other.deserializer().deserialize("t", pointer)).isEqualTo(large);
    }
  }

  @Test
  void aPointerOutsideTheTablesSpillFolderIsRefused() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Catalog catalog = warehouse.catalog();
      ((SupportsNamespaces) catalog).createNamespace(Namespace.of("db"));
      Table table = catalog.createTable(TableIdentifier.of("db", "t"), SCHEMA);
      Serde<ConvertTask> serde = SpillingSerde.of(
          EventSerdes.convertTask(),
          ConvertTask::table,
          n -> catalog.loadTable(TableIdentifier.parse(n)),
          2048);
      for (String path : List.of(
          "/etc/passwd",
          table.location() + "/metadata/v1.metadata.json",
          table.location() + "/" + SpillingSerde.FOLDER + "../../data/x.parquet")) {
        byte[] forged = ("{\"type\":\"spilled\",\"v\":1,\"table\":\"db.t\",\"path\":\"" + path
                + "\",\"bytes\":10}")
            .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> serde.deserializer().deserialize("t", forged))
            .hasMessageContaining("outside");
      }
    }
  }

  @Test
  void onlyAFileDirectlyInTheSpillFolderIsASpillPath() {
    String table = "s3://lake/wh/db/t";
    String folder = table + "/" + SpillingSerde.FOLDER;
    assertThat(SpillingSerde.isSpillPath(table, folder + "a.json.gz")).isTrue();
    assertThat(SpillingSerde.isSpillPath(table + "/", folder + "a.json.gz")).isTrue();
    // The folder's own marker, as an object store may list it, is not a spill file.
    assertThat(SpillingSerde.isSpillPath(table, folder)).isFalse();
    assertThat(SpillingSerde.isSpillPath(table, folder + "sub/a.json.gz")).isFalse();
    assertThat(SpillingSerde.isSpillPath(table, folder + "../x")).isFalse();
    assertThat(SpillingSerde.isSpillPath(table, table + "/metadata/v1.metadata.json"))
        .isFalse();
    assertThat(SpillingSerde.isSpillPath(table, "s3://lake/wh/db/t2/" + SpillingSerde.FOLDER + "a"))
        .isFalse();
  }

  private static ConvertTask task(int deletes) {
    JsonNodeFactory json = JsonNodeFactory.instance;
    List<DeleteFileJson> files = new ArrayList<>();
    for (int i = 0; i < deletes; i++) {
      files.add(new DeleteFileJson(json.objectNode()
          .put("file-path", "/wh/db/t/data/delete-" + i + ".parquet")
          .put("record-count", i)));
    }
    return new ConvertTask(
        "db.t",
        "cycle-1",
        new DataFileJson(json.objectNode().put("file-path", "/wh/db/t/data/a.parquet")),
        null,
        files);
  }
}
