package dev.lakestream.common.iceberg;

import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.jdbc.JdbcCatalog;

/**
 * Iceberg's JDBC catalog, as {@link CatalogLoader} loads it for {@code
 * catalog-impl=org.apache.iceberg.jdbc.JdbcCatalog} (and for the embedded default): the same
 * catalog, configured by the same properties, whose tables take a commit the catalog reported
 * refused but applied for the commit it is ({@link LandedCommitCheck}).
 *
 * <p>Iceberg's JDBC connection pool runs a statement again on a new connection when the first
 * connection failed (an SQL state of a lost connection, for example a database restart or a
 * network reset). When the reply of the commit's {@code UPDATE} was what got lost, the second run
 * finds the table's pointer already moved and updates no row, and the catalog reports the commit
 * refused. Iceberg then commits the operation once more on top of itself (the same files a second
 * time: duplicate rows) or, refused again by its own validation, deletes the manifest list of the
 * snapshot that is the branch's head (a branch no engine can read).
 */
public class JdbcCatalogWithLandedCommits extends JdbcCatalog {

  @Override
  protected TableOperations newTableOps(TableIdentifier identifier) {
    return new LandedCommitCheck(super.newTableOps(identifier), identifier.toString());
  }
}
