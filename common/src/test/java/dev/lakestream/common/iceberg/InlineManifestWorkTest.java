package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class InlineManifestWorkTest {

  /** The local file system, noting which threads open manifests. */
  public static final class RecordingFileIO implements FileIO {
    static final Set<String> MANIFEST_READERS = ConcurrentHashMap.newKeySet();
    private final LocalFileIO local = new LocalFileIO();

    @Override
    public void initialize(Map<String, String> properties) {
      local.initialize(properties);
    }

    @Override
    public InputFile newInputFile(String path) {
      if (path.endsWith(".avro") && !path.substring(path.lastIndexOf('/')).startsWith("/snap-")) {
        MANIFEST_READERS.add(Thread.currentThread().getName());
      }
      return local.newInputFile(path);
    }

    @Override
    public OutputFile newOutputFile(String path) {
      return local.newOutputFile(path);
    }

    @Override
    public void deleteFile(String path) {
      local.deleteFile(path);
    }
  }

  @Test
  void aCommitsManifestWorkRunsOnTheCommittingThread() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Map<String, String> props = new HashMap<>(warehouse.catalogProperties());
      props.put("io-impl", RecordingFileIO.class.getName());
      Catalog catalog = CatalogUtil.buildIcebergCatalog("test", props, new Configuration());
      ((SupportsNamespaces) catalog).createNamespace(Namespace.of("db"));
      Schema schema = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));
      Table table =
          catalog.createTable(TableIdentifier.of("db", "t"), schema, PartitionSpec.unpartitioned());
      DataFile[] files = new DataFile[3];
      for (int i = 0; i < files.length; i++) {
        files[i] = DataFiles.builder(PartitionSpec.unpartitioned())
            .withPath(warehouse.dir().resolve("f" + i + ".parquet").toString())
            .withFileSizeInBytes(100)
            .withRecordCount(1)
            .build();
        table.newFastAppend().appendFile(files[i]).commit();
      }
      String committing = Thread.currentThread().getName();

      // Removing a file makes a commit read the manifests that may list it.
      RecordingFileIO.MANIFEST_READERS.clear();
      table.newRowDelta().removeRows(files[0]).commit();
      assertThat(RecordingFileIO.MANIFEST_READERS)
          .as("Iceberg's own way: its worker pool reads them")
          .isNotEmpty()
          .doesNotContain(committing);

      RecordingFileIO.MANIFEST_READERS.clear();
      InlineManifestWork.on(table.newRowDelta()).removeRows(files[1]).commit();
      assertThat(RecordingFileIO.MANIFEST_READERS).containsExactly(committing);
      assertThat(table.currentSnapshot().summary()).containsEntry("total-data-files", "1");
    }
  }
}
