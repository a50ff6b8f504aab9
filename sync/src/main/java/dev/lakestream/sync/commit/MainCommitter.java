package dev.lakestream.sync.commit;

import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SummaryKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.ValidationException;

/**
 * Commits a cycle to {@code main} as ONE snapshot: the new data files by reference with their
 * realtime data sequence numbers, the new deletion vectors, the vectors they replace removed, the
 * data files compacted away on realtime removed with their vectors, and the watermark and counts in
 * the summary. The snapshot is made only on top of the main snapshot the cycle was planned from,
 * and only of what {@link CycleChecks} accepts.
 */
public final class MainCommitter {

  /** How a commit attempt ended. */
  public sealed interface Outcome permits Committed, AlreadyCommitted, MainMoved, FilesGone {}

  /** The cycle is on main now. */
  public record Committed(MainCommitted event) implements Outcome {}

  /**
   * An earlier attempt of the same cycle committed (the acknowledgement was lost in a crash, or a
   * zombie of the task committed it and its announcement was aborted with its transaction): {@code
   * event} announces that commit, read back from its snapshot.
   */
  public record AlreadyCommitted(MainCommitted event) implements Outcome {}

  /** Main is not where the cycle was planned from: plan again. */
  public record MainMoved(long expected, long found) implements Outcome {}

  /**
   * Deletion-vector files the cycle's converters wrote are gone (orphan-file removal took them
   * while the cycle waited longer than their age): committed, main would reference missing files.
   * Not committed; the coordinator parks the table and plans it again after the backoff.
   */
  public record FilesGone(List<String> missing) implements Outcome {}

  /**
   * A cycle planned this long ago or longer has its deletion-vector files checked before it
   * commits. Its converters write them after it is planned, and orphan-file removal takes only
   * files older than its age (days; Spark's procedure refuses less than a day), so a younger
   * cycle's files cannot be gone, and a cycle takes seconds: the check costs a request per file only
   * for a cycle resumed after a long stop.
   */
  static final long CHECK_FILES_AFTER_MS = 10 * 60_000L;

  private MainCommitter() {}

  public static Outcome commit(
      Table table, CyclePlan plan, List<ConvertResult> results, long nowMs) {
    table.refresh();
    Snapshot main = table.snapshot(Branches.MAIN);
    Optional<Long> watermark = BranchFiles.watermark(table);
    if (watermark.isPresent() && watermark.get() == plan.targetRealtimeSnapshotId()) {
      return new AlreadyCommitted(announcement(table, plan));
    }
    if (main.snapshotId() != plan.baseMainSnapshotId()) {
      return new MainMoved(plan.baseMainSnapshotId(), main.snapshotId());
    }
    CycleChecks.check(table, plan, results, () -> BranchFiles.deletionVectors(table, main));
    Map<Integer, PartitionSpec> specs = table.specs();
    List<DeleteFile> addDvs = new ArrayList<>();
    List<DeleteFile> removeDvs = new ArrayList<>();
    long keys = 0;
    int filesScanned = 0;
    long rowsScanned = 0;
    long bytesRead = 0;
    for (ConvertResult result : results) {
      DeleteFile dv = result.newDv(specs);
      if (dv != null) {
        addDvs.add(dv);
        removeDvs.addAll(result.rewrittenDvs(specs));
      }
      keys += result.keysMatched();
      rowsScanned += result.rowsScanned();
      bytesRead += result.bytesRead();
      if (result.bytesRead() > 0) {
        filesScanned++; // a file the key index resolved was not read
      }
    }
    plan.removeDvs().forEach(f -> removeDvs.add(f.decode(specs)));
    if (nowMs - plan.plannedAtMs() >= CHECK_FILES_AFTER_MS) {
      List<String> missing = missing(table, addDvs);
      if (!missing.isEmpty()) {
        return new FilesGone(missing);
      }
    }

    boolean addsData = !plan.addDataFiles().isEmpty();
    boolean deletes = !addDvs.isEmpty() || !plan.removeDataFiles().isEmpty();
    String operation = deletes
        ? (addsData ? DataOperations.OVERWRITE : DataOperations.DELETE)
        : DataOperations.APPEND;
    MirrorRowDelta delta = new MirrorRowDelta(table, main.snapshotId(), operation);
    // From the planned base: Iceberg's check for concurrently added vectors would otherwise take
    // the vectors this cycle replaces for concurrent ones.
    delta.toBranch(Branches.MAIN).validateFromSnapshot(main.snapshotId());
    writeDataManifests(table, plan).forEach(delta::addDataManifest);
    addDvs.forEach(delta::addDeletes);
    removeDvs.forEach(delta::removeDeletes);
    plan.removeDataFiles().forEach(f -> delta.removeRows(f.decode(specs)));
    delta.set(SummaryKeys.REALTIME_SNAPSHOT_ID, Long.toString(plan.targetRealtimeSnapshotId()));
    delta.set(SummaryKeys.CYCLE_ID, plan.cycleId());
    // Main holds everything before it too: a cycle that brings no source change (a compaction's
    // mirror) keeps the newest source time main already covers.
    delta.set(
        SummaryKeys.MAX_SOURCE_TS_MS,
        Long.toString(Math.max(plan.maxSourceTsMs(), maxSourceTsMs(main))));
    delta.set(SummaryKeys.REALTIME_SNAPSHOTS, Integer.toString(plan.realtimeSnapshots()));
    delta.set(SummaryKeys.DATA_FILES_ADDED, Integer.toString(plan.addDataFiles().size()));
    delta.set(
        SummaryKeys.DATA_FILES_REMOVED, Integer.toString(plan.removeDataFiles().size()));
    delta.set(SummaryKeys.DVS_ADDED, Integer.toString(addDvs.size()));
    delta.set(SummaryKeys.DVS_REMOVED, Integer.toString(removeDvs.size()));
    delta.set(
        SummaryKeys.DV_FILES_ADDED,
        Long.toString(addDvs.stream().map(DeleteFile::location).distinct().count()));
    delta.set(SummaryKeys.KEYS_CONVERTED, Long.toString(keys));
    delta.set(SummaryKeys.FILES_SCANNED, Integer.toString(filesScanned));
    delta.set(SummaryKeys.BYTES_READ, Long.toString(bytesRead));
    delta.set(SummaryKeys.RECONVERTED_DELETES, Integer.toString(plan.reconvertedDeletes()));
    if (plan.liveSetDiff()) {
      delta.set(SummaryKeys.LIVE_SET_DIFF, "true");
    }
    try {
      delta.commit();
    } catch (ValidationException e) {
      table.refresh();
      long head = table.snapshot(Branches.MAIN).snapshotId();
      if (head == plan.baseMainSnapshotId()) {
        throw new IllegalStateException(
            "commit of cycle " + plan.cycleId() + " to " + plan.table()
                + " main failed validation: " + e.getMessage(),
            e);
      }
      return new MainMoved(plan.baseMainSnapshotId(), head);
    }
    Snapshot committed = table.snapshot(Branches.MAIN);
    return new Committed(new MainCommitted(
        plan.table(),
        committed.snapshotId(),
        plan.targetRealtimeSnapshotId(),
        plan.maxSourceTsMs(),
        plan.addDataFiles().size(),
        plan.removeDataFiles().size(),
        addDvs.size(),
        removeDvs.size(),
        keys,
        nowMs));
  }

  /**
   * The files of {@code dvs} that are not in storage: one existence check per file (a cycle's
   * vectors share a few files), the last read before main references them.
   */
  private static List<String> missing(Table table, List<DeleteFile> dvs) {
    return dvs.stream()
        .map(DeleteFile::location)
        .distinct()
        .filter(location -> !table.io().newInputFile(location).exists())
        .toList();
  }

  /**
   * The announcement of the commit on main that carries the watermark {@code plan} targets, read
   * from its snapshot's summary (counts this pipeline did not record read as 0).
   */
  private static MainCommitted announcement(Table table, CyclePlan plan) {
    Snapshot s = table.snapshot(Branches.MAIN);
    while (s != null && s.summary().get(SummaryKeys.REALTIME_SNAPSHOT_ID) == null) {
      s = BranchFiles.parent(table, s);
    }
    Map<String, String> summary = s == null ? Map.of() : s.summary();
    return new MainCommitted(
        plan.table(),
        s == null ? table.snapshot(Branches.MAIN).snapshotId() : s.snapshotId(),
        plan.targetRealtimeSnapshotId(),
        plan.maxSourceTsMs(),
        (int) count(summary, SummaryKeys.DATA_FILES_ADDED),
        (int) count(summary, SummaryKeys.DATA_FILES_REMOVED),
        (int) count(summary, SummaryKeys.DVS_ADDED),
        (int) count(summary, SummaryKeys.DVS_REMOVED),
        count(summary, SummaryKeys.KEYS_CONVERTED),
        s == null ? table.snapshot(Branches.MAIN).timestampMillis() : s.timestampMillis());
  }

  private static long count(Map<String, String> summary, String key) {
    try {
      return Long.parseLong(summary.getOrDefault(key, "0"));
    } catch (NumberFormatException e) {
      return 0; // not this pipeline's value
    }
  }

  /** The newest source commit time {@code snapshot} records, -1 when none. */
  private static long maxSourceTsMs(Snapshot snapshot) {
    String text = snapshot.summary().get(SummaryKeys.MAX_SOURCE_TS_MS);
    if (text == null) {
      return -1;
    }
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      return -1; // not this pipeline's value: not carried
    }
  }

  private static List<ManifestFile> writeDataManifests(Table table, CyclePlan plan) {
    if (plan.addDataFiles().isEmpty()) {
      return List.of();
    }
    TableOperations ops = ((HasTableOperations) table).operations();
    Map<Integer, PartitionSpec> specs = table.specs();
    Map<Integer, List<CyclePlan.SequencedFile>> bySpec = new LinkedHashMap<>();
    for (CyclePlan.SequencedFile f : plan.addDataFiles()) {
      DataFile file = f.file().decode(specs);
      bySpec.computeIfAbsent(file.specId(), id -> new ArrayList<>()).add(f);
    }
    List<ManifestFile> manifests = new ArrayList<>();
    for (var entry : bySpec.entrySet()) {
      var output = ops.io()
          .newOutputFile(ops.metadataFileLocation("sync-" + UUID.randomUUID() + "-m0.avro"));
      ManifestWriter<DataFile> writer = ManifestFiles.write(
          ops.current().formatVersion(), specs.get(entry.getKey()), output, null);
      try (writer) {
        for (CyclePlan.SequencedFile f : entry.getValue()) {
          writer.add(f.file().decode(specs), f.dataSequenceNumber());
        }
      } catch (IOException e) {
        throw new UncheckedIOException("writing a data manifest for " + plan.table(), e);
      }
      manifests.add(writer.toManifestFile());
    }
    return manifests;
  }
}
