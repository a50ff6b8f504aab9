package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The catalogs the apps load read each manifest list and manifest from storage once while they use
 * it (Iceberg's manifest cache, on by default), unless the catalog properties turn it off.
 */
class CatalogLoaderTest {

  private static final TableIdentifier ID = TableIdentifier.of("inventory", "items");
  private static final Schema SCHEMA =
      new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @TempDir
  Path dir;

  @Test
  void aTableIsPlannedAgainWithItsManifestsGoneFromStorage() throws Exception {
    Catalog catalog = CatalogLoader.load("lake", Map.of("warehouse", dir.toString()));
    try {
      Table table = tableOfThreeFiles(catalog);
      assertThat(plannedFiles(table)).hasSize(3);

      assertThat(deleteManifests()).as("manifest lists and manifests deleted").isGreaterThan(3);

      // A table loaded again (no snapshot object of the first load), planned from memory.
      assertThat(plannedFiles(catalog.loadTable(ID)))
          .isEqualTo(plannedFiles(table))
          .hasSize(3);
    } finally {
      ((AutoCloseable) catalog).close();
    }
  }

  @Test
  void theCatalogPropertiesTurnTheCacheOff() throws Exception {
    Catalog catalog = CatalogLoader.load(
        "lake", Map.of("warehouse", dir.toString(), "io.manifest.cache-enabled", "false"));
    try {
      Table table = tableOfThreeFiles(catalog);
      assertThat(plannedFiles(table)).hasSize(3);

      deleteManifests();

      assertThatThrownBy(() -> plannedFiles(catalog.loadTable(ID)))
          .as("each plan reads the manifests from storage")
          .hasMessageContaining(".avro");
    } finally {
      ((AutoCloseable) catalog).close();
    }
  }

  /** A table with three data files, appended one per snapshot (the files need not exist). */
  private static Table tableOfThreeFiles(Catalog catalog) {
    ((SupportsNamespaces) catalog).createNamespace(Namespace.of("inventory"));
    Table table = catalog.createTable(ID, SCHEMA, PartitionSpec.unpartitioned());
    for (int i = 0; i < 3; i++) {
      table
          .newAppend()
          .appendFile(DataFiles.builder(PartitionSpec.unpartitioned())
              .withPath(table.location() + "/data/f" + i + ".parquet")
              .withFileSizeInBytes(100)
              .withRecordCount(1)
              .build())
          .commit();
    }
    return table;
  }

  private static List<String> plannedFiles(Table table) throws IOException {
    List<String> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      tasks.forEach(t -> files.add(t.file().location()));
    }
    files.sort(String::compareTo);
    return files;
  }

  /** Deletes every Avro file (manifest lists and manifests) of the warehouse; returns how many. */
  private int deleteManifests() throws IOException {
    List<Path> avro;
    try (Stream<Path> paths = Files.walk(dir)) {
      avro = paths.filter(p -> p.toString().endsWith(".avro")).toList();
    }
    for (Path p : avro) {
      Files.delete(p);
    }
    return avro.size();
  }
}
