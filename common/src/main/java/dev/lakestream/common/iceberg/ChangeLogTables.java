package dev.lakestream.common.iceberg;

import java.util.List;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;

/**
 * The bronze change logs ingest keeps beside the tables it mirrors: {@code <table>_changelog}, in the
 * table's namespace. A source table may have that name too ({@code orders} and {@code
 * orders_changelog} in one schema), so a change log carries {@link #LOG_OF}, the table it logs:
 * ingest never writes a log's rows into a mirrored table, nor mirrors a table into a change log, and
 * sync's maintenance compacts {@code main} of a change log only, never of a mirror (whose deletion
 * vectors that compaction would not apply).
 */
public final class ChangeLogTables {

  /** Set on every change log: the table ({@code namespace.name}) whose changes it holds. */
  public static final String LOG_OF = "lakestream.changelog-of";

  public static final String SUFFIX = "_changelog";

  /** A change log's columns. */
  public static final Schema SCHEMA = new Schema(
      Types.NestedField.required(1, "op", Types.StringType.get(), "c, u, d or r (snapshot read)"),
      Types.NestedField.required(2, "key", Types.StringType.get(), "the primary key, JSON"),
      Types.NestedField.optional(
          3, "before", Types.StringType.get(), "the row before the change, Debezium JSON"),
      Types.NestedField.optional(
          4, "after", Types.StringType.get(), "the row after the change, Debezium JSON"),
      Types.NestedField.optional(
          5,
          "source_position",
          Types.StringType.get(),
          "where in the source: lsn or binlog position"),
      Types.NestedField.optional(
          6, "source_ts_ms", Types.LongType.get(), "source commit time, ms since epoch"),
      Types.NestedField.required(
          7, "snapshot", Types.BooleanType.get(), "read by a connector snapshot"),
      Types.NestedField.required(8, "kafka_topic", Types.StringType.get()),
      Types.NestedField.required(9, "kafka_partition", Types.IntegerType.get()),
      Types.NestedField.required(10, "kafka_offset", Types.LongType.get()));

  private ChangeLogTables() {}

  /** The name of {@code table}'s change log: {@code namespace.<table>_changelog}. */
  public static TableIdentifier of(TableIdentifier table) {
    return TableIdentifier.of(table.namespace(), table.name() + SUFFIX);
  }

  /**
   * Whether {@code table} is the change log of {@code source}: marked so, or unmarked and made by an
   * earlier version ({@link #unmarkedLog}).
   */
  public static boolean isLogOf(Table table, TableIdentifier source) {
    String of = table.properties().get(LOG_OF);
    return of != null ? of.equals(source.toString()) : unmarkedLog(table);
  }

  /** Whether {@code table} is some table's change log, marked or made by an earlier version. */
  public static boolean isLog(Table table) {
    return table.properties().containsKey(LOG_OF) || unmarkedLog(table);
  }

  /**
   * A change log of a version before {@link #LOG_OF}: not marked as a mirror, no realtime branch,
   * and exactly a change log's columns (a log's schema never changes).
   */
  public static boolean unmarkedLog(Table table) {
    if (table.properties().containsKey(LOG_OF)
        || table.properties().containsKey(TableManager.MANAGED)
        || table.refs().containsKey(Branches.REALTIME)) {
      return false;
    }
    return columns(table.schema()).equals(columns(SCHEMA));
  }

  private static List<String> columns(Schema schema) {
    return schema.columns().stream()
        .map(f -> f.name() + " " + f.type() + (f.isOptional() ? "" : " required"))
        .toList();
  }
}
