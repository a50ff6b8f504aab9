package dev.lakestream.benchmarks;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;

/**
 * Benchmark 8, the cost of a commit against the snapshots a table keeps. Every Iceberg commit
 * writes the table's whole {@code metadata.json}, which lists every snapshot the retention keeps,
 * and every reader that refreshes parses it. The pipeline commits on two branches every second or
 * so and keeps realtime's snapshots for 10 minutes and main's for an hour by default. This commits
 * snapshots with summaries the size of the pipeline's on both branches of a table made as ingest
 * makes them, and at each step measures a commit, a load of the table, and the file's size.
 * Snapshots carry no files, so only the metadata file grows.
 */
public final class MetadataGrowthBenchmark {

  static final String COMMAND = "mvn -B -q clean install -DskipTests\n"
      + "MAVEN_OPTS=-Xmx4g mvn -q -pl benchmarks exec:java -Dexec.mainClass=dev.lakestream.benchmarks.MetadataGrowthBenchmark"
      + " [-Dexec.args=\"SNAPSHOTS STEP\"]";

  private static final int TIMED = 20;

  private MetadataGrowthBenchmark() {}

  public static void main(String[] args) throws Exception {
    int snapshots = args.length > 0 ? Integer.parseInt(args[0]) : 4_000;
    int step = args.length > 1 ? Integer.parseInt(args[1]) : 500;
    Report report = new Report(
        "8. Commit cost against the snapshots a table keeps",
        COMMAND,
        "snapshots kept",
        "metadata.json (kB)",
        "commit (ms, mean of " + TIMED + ")",
        "load the table (ms, mean of " + TIMED + ")");
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Catalog catalog = warehouse.catalog();
      ((SupportsNamespaces) catalog).createNamespace(Namespace.of("bench"));
      TableIdentifier id = TableIdentifier.of("bench", "growth");
      Schema schema = new Schema(
          List.of(
              Types.NestedField.required(1, "id", Types.LongType.get()),
              Types.NestedField.optional(2, "v", Types.StringType.get())),
          Set.of(1));
      Table table = catalog
          .buildTable(id, schema)
          .withPartitionSpec(PartitionSpec.unpartitioned())
          .withProperty(TableProperties.FORMAT_VERSION, "3")
          .withProperty(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
          .withProperty(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "50")
          .create();
      table.newFastAppend().commit();
      table
          .manageSnapshots()
          .createBranch(Branches.REALTIME, table.currentSnapshot().snapshotId())
          .commit();
      int made = 0;
      int next = 0;
      while (next <= snapshots) {
        while (made < next) {
          commit(table, made++);
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < TIMED; i++) {
          commit(table, made++);
        }
        double commitMs = (System.nanoTime() - t0) / 1e6 / TIMED;
        long t1 = System.nanoTime();
        for (int i = 0; i < TIMED; i++) {
          catalog.loadTable(id).currentSnapshot();
        }
        double loadMs = (System.nanoTime() - t1) / 1e6 / TIMED;
        String location = ((BaseTable) table).operations().current().metadataFileLocation();
        long bytes = Files.size(Path.of(location.replaceFirst("^file:", "")));
        report.row(
            String.format("%,d", countSnapshots(table)),
            String.format("%,d", bytes / 1024),
            String.format("%.1f", commitMs),
            String.format("%.1f", loadMs));
        System.out.printf(
            "%,d snapshots: metadata.json %,d kB, commit %.1f ms, load %.1f ms%n",
            countSnapshots(table), bytes / 1024, commitMs, loadMs);
        next += step;
      }
    }
    report.note(
        "Local file system and the JDBC catalog on SQLite, one thread, nothing else running."
            + " Each snapshot is an empty append with the summary a sync cycle writes on main (about"
            + " 1.4 kB in metadata.json), alternating between the branches realtime and main; no"
            + " expiry. The table is made with the properties ingest gives its tables (format 3, the"
            + " last 50 metadata files kept).");
    report.publish();
    System.exit(0);
  }

  private static int countSnapshots(Table table) {
    int n = 0;
    for (var ignored : table.snapshots()) {
      n++;
    }
    return n;
  }

  /** One snapshot with a summary like a sync cycle's, on realtime or main by turn. */
  private static void commit(Table table, int n) {
    AppendFiles append = table.newFastAppend();
    append.toBranch(n % 2 == 0 ? Branches.REALTIME : Branches.MAIN);
    append.set(SummaryKeys.REALTIME_SNAPSHOT_ID, Long.toString(1_000_000_000_000L + n));
    append.set(
        "lakestream.source-offsets",
        "{\"dbserver1.inventory.customers:0\":" + (n * 7)
            + ",\"dbserver1.inventory.customers:1\":" + (n * 7 + 1)
            + ",\"dbserver1.inventory.customers:2\":" + (n * 7 + 2) + "}");
    for (String key : List.of(
        "lakestream.cycle-id",
        "lakestream.data-files-removed",
        "lakestream.keys-converted",
        "lakestream.files-scanned",
        "lakestream.max-source-ts-ms",
        "lakestream.dv-files-added",
        "lakestream.bytes-read",
        "lakestream.dvs-removed",
        "lakestream.dvs-added",
        "lakestream.data-files-added",
        "lakestream.reconverted-deletes",
        "lakestream.realtime-snapshots")) {
      append.set(key, Long.toString(1_796_099_914_018L + n));
    }
    append.commit();
  }
}
