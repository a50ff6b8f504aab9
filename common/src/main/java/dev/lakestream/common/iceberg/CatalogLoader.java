package dev.lakestream.common.iceberg;

import dev.lakestream.common.metrics.CommitMetricsReporter;
import java.io.File;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Builds an Iceberg {@link Catalog} from standard Iceberg catalog properties ({@code type} or
 * {@code catalog-impl}, {@code uri}, {@code warehouse}, {@code io-impl}, ...), as {@link
 * CatalogUtil#buildIcebergCatalog} reads them: REST, JDBC, Hive, Glue, Nessie or any other.
 *
 * <p>With neither {@code type} nor {@code catalog-impl} set, the embedded default is used: a JDBC
 * catalog on SQLite in {@code <warehouse>/catalog.db} (warehouse {@code ./warehouse} unless set),
 * for a first run with no servers. It is one machine's disk: a deployment that runs more than one
 * instance needs a shared catalog and object storage.
 *
 * <p>{@code type=rest} (or {@code catalog-impl=org.apache.iceberg.rest.RESTCatalog}) loads {@link
 * RestCatalog}: Iceberg's REST catalog, which retries a commit that older REST servers refuse for
 * its sequence number as the conflict it is, and whose HTTP client gives up on a connection after 10
 * s and on a reply that has not come for 30 s ({@code rest.client.connection-timeout-ms}, {@code
 * rest.client.socket-timeout-ms}; Iceberg sets none, and its HTTP library waits 3 minutes). {@code type=jdbc} (or {@code
 * catalog-impl=org.apache.iceberg.jdbc.JdbcCatalog}), and the embedded default, load {@link
 * JdbcCatalogWithLandedCommits}: Iceberg's JDBC catalog, which takes a commit it reported refused
 * but applied (a statement run again after a lost connection) for committed.
 *
 * <p>Iceberg's manifest cache ({@code io.manifest.cache-enabled}) is on unless the properties say
 * otherwise: the apps read the same immutable manifest lists and manifests many times a minute (a
 * commit that lost a race validates against every snapshot since it started, again on each
 * attempt; sync plans every cycle from the snapshots' manifest lists), and on object storage each
 * read is a request (a manifest list read from the cache still costs a HEAD there: Iceberg asks
 * for its length first). Iceberg bounds the cache ({@code io.manifest.cache.max-total-bytes}, 100
 * MB by default, per FileIO) and drops an entry unused for a minute.
 */
public final class CatalogLoader {

  public static final String DEFAULT_NAME = "lakestream";
  public static final String DEFAULT_WAREHOUSE = "warehouse";
  /** Iceberg's REST client properties (its {@code HTTPClient}'s names, not public there). */
  static final String REST_CONNECTION_TIMEOUT_MS = "rest.client.connection-timeout-ms";

  static final String REST_SOCKET_TIMEOUT_MS = "rest.client.socket-timeout-ms";
  static final String REST_CONNECTION_TIMEOUT_DEFAULT = "10000";
  static final String REST_SOCKET_TIMEOUT_DEFAULT = "30000";

  private CatalogLoader() {}

  public static Catalog load(String name, Map<String, String> properties) {
    Map<String, String> props = withEmbeddedDefault(properties);
    props.putIfAbsent(
        CatalogProperties.METRICS_REPORTER_IMPL, CommitMetricsReporter.class.getName());
    props.putIfAbsent(CatalogProperties.IO_MANIFEST_CACHE_ENABLED, "true");
    // Iceberg's REST catalog, with commits refused for their sequence number retried.
    replace(props, CatalogUtil.ICEBERG_CATALOG_TYPE_REST, RESTCatalog.class, RestCatalog.class);
    if (RestCatalog.class.getName().equals(props.get(CatalogProperties.CATALOG_IMPL))) {
      // Iceberg's HTTP client sets no timeouts, and its HTTP library waits 3 minutes for a reply:
      // a catalog that took a request and never answers would hold a stream thread, and its open
      // transaction, three times past the transaction's timeout.
      props.putIfAbsent(REST_CONNECTION_TIMEOUT_MS, REST_CONNECTION_TIMEOUT_DEFAULT);
      props.putIfAbsent(REST_SOCKET_TIMEOUT_MS, REST_SOCKET_TIMEOUT_DEFAULT);
    }
    // Iceberg's JDBC catalog, with a commit reported refused but applied taken as committed.
    replace(
        props,
        CatalogUtil.ICEBERG_CATALOG_TYPE_JDBC,
        JdbcCatalog.class,
        JdbcCatalogWithLandedCommits.class);
    return CatalogUtil.buildIcebergCatalog(name, props, new Configuration());
  }

  /**
   * Names {@code ours} as the catalog's implementation where the properties name Iceberg's {@code
   * theirs}, by its type or its class (and not both, which Iceberg refuses as it is).
   */
  private static void replace(
      Map<String, String> props, String type, Class<?> theirs, Class<?> ours) {
    String typeSet = props.get(CatalogUtil.ICEBERG_CATALOG_TYPE);
    String implSet = props.get(CatalogProperties.CATALOG_IMPL);
    boolean byType = type.equalsIgnoreCase(typeSet) && implSet == null;
    boolean byImpl = theirs.getName().equals(implSet) && typeSet == null;
    if (byType || byImpl) {
      props.remove(CatalogUtil.ICEBERG_CATALOG_TYPE);
      props.put(CatalogProperties.CATALOG_IMPL, ours.getName());
    }
  }

  /**
   * The catalog for a command that reads or maintains tables: like {@link #load}, but the embedded
   * default must already exist (a command run in the wrong folder says so rather than creating an
   * empty warehouse there).
   */
  public static Catalog loadExisting(String name, Map<String, String> properties) {
    if (!properties.containsKey(CatalogUtil.ICEBERG_CATALOG_TYPE)
        && !properties.containsKey(CatalogProperties.CATALOG_IMPL)) {
      File warehouse = new File(
              properties.getOrDefault(CatalogProperties.WAREHOUSE_LOCATION, DEFAULT_WAREHOUSE))
          .getAbsoluteFile();
      if (!warehouse.isDirectory()) {
        throw new IllegalArgumentException(
            "no catalog is configured and there is no embedded warehouse at " + warehouse
                + ": pass --config FILE, or set iceberg.catalog.* (LAKESTREAM_ICEBERG_CATALOG_* variables)");
      }
    }
    return load(name, properties);
  }

  /** The properties {@link #load} uses: the given ones, or the embedded default filled in. */
  public static Map<String, String> withEmbeddedDefault(Map<String, String> properties) {
    Map<String, String> props = new LinkedHashMap<>(properties);
    if (props.containsKey(CatalogUtil.ICEBERG_CATALOG_TYPE)
        || props.containsKey(CatalogProperties.CATALOG_IMPL)) {
      return props;
    }
    File warehouse = new File(
            props.getOrDefault(CatalogProperties.WAREHOUSE_LOCATION, DEFAULT_WAREHOUSE))
        .getAbsoluteFile();
    if (!warehouse.isDirectory() && !warehouse.mkdirs()) {
      throw new IllegalStateException("cannot create the warehouse directory " + warehouse);
    }
    props.put(CatalogProperties.CATALOG_IMPL, JdbcCatalog.class.getName());
    props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse.getPath());
    props.putIfAbsent(
        CatalogProperties.URI, "jdbc:sqlite:" + new File(warehouse, "catalog.db").getPath());
    // V1 stores views and is what Spark's JDBC catalog expects of a table it did not create.
    props.putIfAbsent("jdbc.schema-version", "V1");
    props.putIfAbsent(CatalogProperties.FILE_IO_IMPL, LocalFileIO.class.getName());
    // A streaming table commits every second: keep its metadata history bounded.
    props.putIfAbsent("table-default.write.metadata.delete-after-commit.enabled", "true");
    props.putIfAbsent("table-default.write.metadata.previous-versions-max", "50");
    return props;
  }
}
