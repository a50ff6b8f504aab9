package dev.lakestream.testkit;

import java.util.List;
import java.util.Map;

/**
 * One generated source change, as Debezium would report it.
 *
 * @param op {@code c}, {@code u}, {@code d}, {@code r}, {@code t} for the tombstone Debezium
 *     sends after a delete, or {@code T} for a TRUNCATE of the table (no key, no row)
 * @param table the table's shape when the change happened
 * @param key the primary-key values, in key-column order
 * @param before the row before (null for c and r)
 * @param after the row after (null for d and the tombstone)
 * @param sourceTsMs commit time in the source
 * @param lsn the change's position in the source log
 */
public record Change(
    char op,
    TestTable table,
    List<Object> key,
    Map<String, Object> before,
    Map<String, Object> after,
    long sourceTsMs,
    long lsn) {

  public boolean isTombstone() {
    return op == 't';
  }

  public boolean isTruncate() {
    return op == 'T';
  }
}
