package dev.lakestream.testkit;

import dev.lakestream.embedded.Folders;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A fresh local warehouse folder (under {@code java.io.tmpdir}) with the embedded default catalog
 * (JDBC on SQLite) that the pipeline uses when given no catalog: {@link #catalogProperties()} are
 * the Iceberg properties to hand an app, {@link #openCatalog()} opens a catalog of its own for the
 * test to read through.
 */
public final class TemporaryWarehouse implements AutoCloseable {

  public static final String CATALOG_NAME = "lakestream";

  private final Path dir;
  private Catalog shared;

  public TemporaryWarehouse() throws IOException {
    this.dir = Files.createTempDirectory("warehouse-");
  }

  public Path dir() {
    return dir;
  }

  public Map<String, String> catalogProperties() {
    return Map.of(
        "catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog",
        "uri", "jdbc:sqlite:" + dir.resolve("catalog.db"),
        "warehouse", dir.toString(),
        "jdbc.schema-version", "V1",
        // What the pipeline's embedded default uses (lakestream-common's LocalFileIO).
        "io-impl", "dev.lakestream.common.iceberg.LocalFileIO");
  }

  public Catalog openCatalog() {
    return CatalogUtil.buildIcebergCatalog(CATALOG_NAME, catalogProperties(), new Configuration());
  }

  /** A catalog of the test's own, opened once and closed with the warehouse. */
  public synchronized Catalog catalog() {
    if (shared == null) {
      shared = openCatalog();
    }
    return shared;
  }

  /**
   * A builder of an unpartitioned format-v3 table {@code namespace.name} in {@link #catalog()}, the
   * namespace created if it is missing; add properties, then {@code create()}.
   */
  public Catalog.TableBuilder v3Table(String namespace, String name, Schema schema) {
    Namespace ns = Namespace.of(namespace);
    if (!((SupportsNamespaces) catalog()).namespaceExists(ns)) {
      ((SupportsNamespaces) catalog()).createNamespace(ns);
    }
    return catalog()
        .buildTable(TableIdentifier.of(ns, name), schema)
        .withPartitionSpec(PartitionSpec.unpartitioned())
        .withProperty(TableProperties.FORMAT_VERSION, "3");
  }

  @Override
  public void close() {
    if (shared instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    Folders.delete(dir);
  }
}
