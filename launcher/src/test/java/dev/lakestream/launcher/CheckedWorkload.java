package dev.lakestream.launcher;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.maintenance.CompactionPolicy;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TestTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * The workload of the tests that run ingest, sync and the maintenance against another catalog or
 * store: a snapshot and 30 rounds of changes, with the invariants checked on main while it runs.
 */
final class CheckedWorkload {

  /** The Verifier's reports while the workload ran: how many, and those that failed. */
  record Checks(int count, List<String> failures) {}

  private CheckedWorkload() {}

  /** Maintenance that runs often: checks every 500 ms, compaction every 6 small files, 5 snapshots kept. */
  static void maintainOften(Map<String, String> shared) {
    shared.put(SyncConfig.BACKSTOP_MS, "500");
    shared.put(MaintenanceConfig.CHECK_INTERVAL_MS, "500");
    shared.put(CompactionPolicy.MIN_SMALL_FILES, "6");
    shared.put("sync.maintenance.expire.realtime.max-snapshot-age-ms", "0");
    shared.put("sync.maintenance.expire.realtime.min-snapshots-to-keep", "5");
    shared.put("sync.maintenance.expire.main.max-snapshot-age-ms", "0");
    shared.put("sync.maintenance.expire.main.min-snapshots-to-keep", "5");
  }

  /**
   * Sends a snapshot of 1,000 rows and 30 rounds of 200 changes 300 ms apart, and verifies main
   * through {@code reader} after every fifth round once main has a cycle's snapshot.
   */
  static Checks run(
      KafkaChangeFeed feed, ChangeStreamGenerator gen, Catalog reader, TableIdentifier id)
      throws Exception {
    List<String> failures = new ArrayList<>();
    int checks = 0;
    feed.send(gen.snapshot(1000));
    for (int i = 0; i < 30; i++) {
      feed.send(gen.next(200));
      Thread.sleep(300);
      if (i % 5 == 4 && reader.tableExists(id)) {
        Table t = reader.loadTable(id);
        if (t.snapshot(Branches.MAIN) != null && t.snapshot(Branches.MAIN).parentId() != null) {
          Verifier.Report report = Verifier.verify(t, id.toString());
          checks++;
          if (!report.passed()) {
            failures.add(report.toString());
          }
        }
      }
    }
    return new Checks(checks, failures);
  }

  /** How main differs from the model, or null. */
  static String mainDiffers(
      Catalog reader, TableIdentifier id, TestTable table, SourceTableModel model) {
    if (!reader.tableExists(id)) {
      return "table " + id + " does not exist yet";
    }
    Table t = reader.loadTable(id);
    return TableComparison.differences(
        model.rows(), TableRows.byKey(TableRows.read(t, Branches.MAIN), table.key()));
  }

  /** A counter of the app's, summed over its tags. */
  static double count(StreamsApp app, String name) {
    return app.meters().find(name).counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }
}
