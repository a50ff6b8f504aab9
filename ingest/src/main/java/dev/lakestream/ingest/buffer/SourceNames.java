package dev.lakestream.ingest.buffer;

import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.SourceTable;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.iceberg.TableNaming;
import dev.lakestream.ingest.IngestConfig;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps two source tables that Debezium's names make one from being mirrored into one table.
 * Debezium names a topic after its table with each character a topic cannot hold replaced ({@code
 * "Order Items"} and {@code Order_Items} share the topic {@code <prefix>.<schema>.Order_Items});
 * the default naming does the same with dots; a catalog that folds case takes {@code Mixed} for
 * {@code mixed}. Their rows would merge, and the deletes and truncates of one would remove the
 * other's rows.
 *
 * <p>A table records each source table whose changes it took ({@value #PREFIX}{@code
 * <schema>.<table>}, the value the name {@link TableNaming#ofSource} gives it). A change of another
 * source table whose name is the same but for those replacements and case is refused, and
 * dead-lettered with the reason; the first one recorded keeps the table. Source tables of other
 * names (shards a router or {@code ingest.table.name.regex} merges on purpose) and the same source
 * table through another topic (a connector moved to another server) are taken as before.
 *
 * <p>Checked once per source table and table in a task's run, against the table's latest metadata,
 * so a change costs a map lookup; a refusal is checked again after {@value #RECHECK_MS} ms. Two instances whose first changes of two such tables race may
 * both record theirs: each reads the table again after recording, and on finding the other's
 * removes its own and refuses the change, so the rows never merge (the next change of either is
 * checked again, and the first recorded then keeps the table).
 */
public final class SourceNames {

  public static final String PREFIX = "lakestream.source-table.";
  private static final Logger LOG = LoggerFactory.getLogger(SourceNames.class);

  private final TableManager tables;
  /** The table (the object: one dropped and created again is another) each source was checked for. */
  private final Map<SourceTable, Table> checked = new HashMap<>();
  /**
   * The sources refused, with the table and the reason: their later changes are refused without
   * reading the catalog again for {@link #RECHECK_MS} (a race being undone, or an operator's
   * removal of a mark, is seen then).
   */
  private final Map<SourceTable, Refusal> refused = new HashMap<>();

  static final long RECHECK_MS = 30_000;

  private record Refusal(Table table, String reason, long untilNanos) {}

  SourceNames(TableManager tables) {
    this.tables = tables;
  }

  /** Whether changes of {@code source} were not checked yet in this run (against any table). */
  boolean pending(SourceTable source) {
    return source != null && !checked.containsKey(source);
  }

  /**
   * Refuses a change of {@code source} for {@code table} (the manager's {@code id}) with a {@link
   * BadChangeException} when the table took the changes of another source table of the same name
   * but for Debezium's replacements and case; records {@code source} in the table the first time.
   * The catalog's own errors propagate (the record is retried, not dead-lettered).
   */
  void check(String topic, TableIdentifier id, Table table, SourceTable source) {
    if (source == null || checked.get(source) == table) {
      return;
    }
    Refusal refusal = refused.get(source);
    if (refusal != null && refusal.table() == table && System.nanoTime() < refusal.untilNanos()) {
      throw new BadChangeException(refusal.reason());
    }
    String key = PREFIX + source.schema() + "." + source.table();
    String named = TableNaming.ofSource(source).toString();
    Table latest;
    try {
      latest = tables.refresh(id);
    } catch (NoSuchTableException e) {
      // Dropped since it was cached: the batch's flush creates it again, and the next change of
      // the source table is checked against that one.
      tables.forget(id.toString());
      return;
    }
    Optional<String> other = another(latest, key, named);
    boolean raced = false;
    if (other.isEmpty() && latest.properties().get(key) == null) {
      latest.updateProperties().set(key, named).commit();
      latest = tables.refresh(id);
      other = another(latest, key, named);
      if (other.isPresent()) {
        // Recorded at the same time as another source table of the name: neither keeps the mark.
        latest.updateProperties().remove(key).commit();
        raced = true;
      } else {
        LOG.info(
            "Table {} takes the changes of source table {}.{} (topic {})",
            id,
            source.schema(),
            source.table(),
            topic);
      }
    }
    if (other.isPresent()) {
      String reason = "source table " + key.substring(PREFIX.length()) + " (topic "
          + topic + ") and source table " + other.get() + " both map to table " + id
          + ", which holds the second one's rows: Debezium's topic names, the table naming or the"
          + " catalog do not tell the two names apart, and their rows would merge. Rename one of"
          + " the source tables, or route its changes to a topic of their own and map that topic"
          + " to another table (" + IngestConfig.TABLE_NAME_REGEX + ", "
          + IngestConfig.TABLE_NAME_REPLACEMENT + "), then replay these dead letters. If the"
          + " source table was renamed from " + other.get() + ", remove the table property "
          + PREFIX + other.get() + " and replay";
      if (!raced) {
        // A race is checked again at its next change.
        refused.put(source, new Refusal(table, reason, System.nanoTime() + RECHECK_MS * 1_000_000));
      }
      throw new BadChangeException(reason);
    }
    checked.put(source, table);
  }

  /**
   * Another source table recorded in {@code table} whose name is {@code source}'s but for
   * Debezium's replacements and case ({@code schema.table}), or empty: the changes of {@code
   * source} are not that table's.
   */
  public static Optional<String> another(Table table, SourceTable source) {
    return another(
        table,
        PREFIX + source.schema() + "." + source.table(),
        TableNaming.ofSource(source).toString());
  }

  /** Another source table recorded in {@code table} whose name is {@code named} but for case. */
  private static Optional<String> another(Table table, String key, String named) {
    for (Map.Entry<String, String> p : table.properties().entrySet()) {
      if (p.getKey().startsWith(PREFIX)
          && !p.getKey().equals(key)
          && p.getValue().toLowerCase(Locale.ROOT).equals(named.toLowerCase(Locale.ROOT))) {
        return Optional.of(p.getKey().substring(PREFIX.length()));
      }
    }
    return Optional.empty();
  }
}
