package dev.lakestream.common.iceberg;

import org.apache.iceberg.catalog.SessionCatalog;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Iceberg's REST catalog, as {@link CatalogLoader} loads it for {@code type=rest}: the same client,
 * configured by the same properties, with a commit refused for its sequence number retried as a
 * conflict ({@link RestCatalogClient}).
 */
public final class RestCatalog extends RESTCatalog {
  public RestCatalog() {
    super(SessionCatalog.SessionContext.createEmpty(), RestCatalogClient::forConfig);
  }
}
