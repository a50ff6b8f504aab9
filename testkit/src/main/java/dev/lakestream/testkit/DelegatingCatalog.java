package dev.lakestream.testkit;

import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * A catalog that does everything through another (a test's real catalog); a test overrides the
 * one method whose timing or outcome it arranges (another writer creating a table first, a load
 * held until the test releases it).
 */
public abstract class DelegatingCatalog implements Catalog {

  protected final Catalog delegate;

  protected DelegatingCatalog(Catalog delegate) {
    this.delegate = delegate;
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public Table loadTable(TableIdentifier identifier) {
    return delegate.loadTable(identifier);
  }

  @Override
  public boolean tableExists(TableIdentifier identifier) {
    return delegate.tableExists(identifier);
  }

  @Override
  public TableBuilder buildTable(TableIdentifier identifier, Schema schema) {
    return delegate.buildTable(identifier, schema);
  }

  @Override
  public List<TableIdentifier> listTables(Namespace namespace) {
    return delegate.listTables(namespace);
  }

  @Override
  public boolean dropTable(TableIdentifier identifier, boolean purge) {
    return delegate.dropTable(identifier, purge);
  }

  @Override
  public void renameTable(TableIdentifier from, TableIdentifier to) {
    delegate.renameTable(from, to);
  }
}
