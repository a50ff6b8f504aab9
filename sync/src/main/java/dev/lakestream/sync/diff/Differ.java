package dev.lakestream.sync.diff;

import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.common.iceberg.FrozenTable;
import dev.lakestream.common.iceberg.SummaryKeys;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotChanges;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plans a sync cycle of one table from metadata alone: the realtime snapshots after main's
 * watermark combined into one diff (data files added and removed, equality deletes added), and one
 * convert task per data file that a delete may apply to.
 *
 * <p>Its steps: the {@code range} of realtime snapshots after main's watermark; their combined
 * {@code snapshotDiff} (or, when they have expired, the {@code liveSetDiff} of both branches); the
 * data files and deletion vectors to remove from main; the {@link Pairing} of data files with the
 * deletes that apply to them (the rule, with its unit tests, is there); the tasks and the plan.
 *
 * <p>A cycle mirrors at most {@code sync.cycle.max.snapshots} realtime snapshots (the oldest after
 * the watermark): a backlog is mirrored in several cycles, each as small as the stream thread's
 * time limits need, and each leaves {@code main} equal to realtime at its target.
 *
 * <p>When the realtime snapshots after the watermark have expired, the diff falls back to the live
 * file sets of both branches, still from metadata: slower to convert, same result.
 */
public final class Differ {

  private static final Logger LOG = LoggerFactory.getLogger(Differ.class);

  /**
   * The plan and the tasks to send; the plan lists the tasks' data files. {@code deleteSequences}:
   * the data sequence number of each equality-delete file the tasks name (their JSON lacks it).
   */
  public record Planned(
      CyclePlan plan, List<ConvertTask> tasks, Map<String, Long> deleteSequences) {}

  private Differ() {}

  /** The realtime snapshots a cycle mirrors: after main's watermark, up to realtime's head. */
  private record Range(
      Snapshot main,
      Snapshot realtime,
      Optional<Long> watermark,
      List<Snapshot> snapshots,
      Snapshot stop) {
    /** The snapshots after the watermark have expired: the live file sets are compared instead. */
    boolean expired() {
      return stop == null;
    }

    long maxSourceTsMs() {
      long max = -1;
      for (Snapshot s : snapshots) {
        String ts = s.summary().get(SummaryKeys.MAX_SOURCE_TS_MS);
        if (ts != null) {
          max = Math.max(max, Long.parseLong(ts));
        }
      }
      return max;
    }
  }

  /**
   * What changed on realtime over a range: data files added (by path), data files that were on main
   * before and are gone, equality deletes added; and realtime's sequence number at the watermark,
   * -1 when unknown.
   */
  private record FileDiff(
      Map<String, DataFile> added,
      Set<String> removed,
      Map<String, DeleteFile> newDeletes,
      long watermarkSequence) {}

  /** Empty when main already mirrors realtime's head. {@code table} must be fresh. */
  public static Optional<Planned> plan(
      Table shared, String tableName, String cycleId, long nowMs, int maxSnapshots) {
    // One version of the table for every read of the plan: main's head, its watermark and
    // realtime's head read from two versions (another thread's refresh in between set the shared
    // table back) would plan files main holds already as added to it.
    Table table = FrozenTable.of(shared);
    Optional<Range> found = range(table, tableName, maxSnapshots);
    if (found.isEmpty()) {
      return Optional.empty();
    }
    Range range = found.get();
    Map<String, DataFile> mainData = BranchFiles.liveDataFiles(table, range.main());
    FileDiff diff = range.expired()
        ? liveSetDiff(table, tableName, range, mainData)
        : snapshotDiff(table, range);

    Map<String, DeleteFile> mainDvs = BranchFiles.deletionVectors(table, range.main());
    List<DataFileJson> removeData = new ArrayList<>();
    List<DeleteFileJson> removeDvs = new ArrayList<>();
    for (String path : diff.removed()) {
      DataFile gone = mainData.remove(path);
      if (gone != null) {
        removeData.add(DataFileJson.of(gone, table.specs()));
        DeleteFile dv = mainDvs.get(path);
        if (dv != null) {
          removeDvs.add(DeleteFileJson.of(dv, table.specs()));
        }
      }
    }

    // Compacted files are paired with every live delete newer than them: read those only if needed.
    boolean compactedFiles = diff.added().values().stream()
        .anyMatch(
            f -> Pairing.isCompacted(f, diff.watermarkSequence(), ContentFile::dataSequenceNumber));
    Map<String, DeleteFile> liveDeletes = compactedFiles
        ? equalityDeletes(BranchFiles.liveDeleteFiles(table, range.realtime()))
        : diff.newDeletes();
    Pairing.Pairs pairs = Pairing.pair(
        table.schema(),
        mainData.values(),
        diff.added().values(),
        diff.newDeletes().values(),
        liveDeletes.values(),
        diff.watermarkSequence(),
        ContentFile::dataSequenceNumber);

    List<ConvertTask> tasks = new ArrayList<>();
    pairs.byDataFile().forEach((path, deletes) -> {
      DataFile file =
          mainData.containsKey(path) ? mainData.get(path) : diff.added().get(path);
      DeleteFile currentDv = mainData.containsKey(path) ? mainDvs.get(path) : null;
      tasks.add(new ConvertTask(
          tableName,
          cycleId,
          DataFileJson.of(file, table.specs()),
          currentDv == null ? null : DeleteFileJson.of(currentDv, table.specs()),
          deletes.stream().map(d -> DeleteFileJson.of(d, table.specs())).toList()));
    });
    List<CyclePlan.SequencedFile> addData = new ArrayList<>();
    for (DataFile f : diff.added().values()) {
      addData.add(
          new CyclePlan.SequencedFile(DataFileJson.of(f, table.specs()), f.dataSequenceNumber()));
    }
    CyclePlan plan = new CyclePlan(
        tableName,
        cycleId,
        range.main().snapshotId(),
        range.realtime().snapshotId(),
        range.maxSourceTsMs(),
        addData,
        removeData,
        removeDvs,
        tasks.stream().map(ConvertTask::dataFilePath).toList(),
        range.snapshots().size(),
        pairs.reconverted().size(),
        range.expired(),
        nowMs);
    Map<String, Long> deleteSequences = new HashMap<>();
    liveDeletes.values().forEach(d -> deleteSequences.put(d.location(), d.dataSequenceNumber()));
    diff.newDeletes()
        .values()
        .forEach(d -> deleteSequences.put(d.location(), d.dataSequenceNumber()));
    return Optional.of(new Planned(plan, tasks, deleteSequences));
  }

  /**
   * The realtime snapshots after main's watermark (oldest first), the first {@code maxSnapshots} of
   * them when there are more (the last of those is the cycle's target; the next cycle goes on from
   * it); empty when there are none.
   */
  private static Optional<Range> range(Table table, String tableName, int maxSnapshots) {
    Snapshot main = table.snapshot(Branches.MAIN);
    Snapshot realtime = table.snapshot(Branches.REALTIME);
    if (main == null || realtime == null) {
      throw new IllegalStateException("table " + tableName + " lacks branch main or realtime");
    }
    Optional<Long> watermark = BranchFiles.watermark(table);
    if (watermark.isPresent() && watermark.get() == realtime.snapshotId()) {
      return Optional.empty();
    }
    Set<Long> mainAncestors = new HashSet<>();
    if (watermark.isEmpty()) {
      for (Snapshot s = main; s != null; s = BranchFiles.parent(table, s)) {
        mainAncestors.add(s.snapshotId());
      }
    }
    List<Snapshot> snapshots = new ArrayList<>();
    Snapshot stop = realtime;
    while (stop != null
        && !(watermark.isPresent()
            ? stop.snapshotId() == watermark.get()
            : mainAncestors.contains(stop.snapshotId()))) {
      snapshots.add(stop);
      stop = BranchFiles.parent(table, stop);
    }
    if (stop != null && snapshots.isEmpty()) {
      return Optional.empty();
    }
    Collections.reverse(snapshots);
    if (stop != null && snapshots.size() > maxSnapshots) {
      LOG.info(
          "Table {}: {} realtime snapshots after main's watermark; this cycle mirrors the first {}",
          tableName,
          snapshots.size(),
          maxSnapshots);
      snapshots = new ArrayList<>(snapshots.subList(0, maxSnapshots));
      realtime = snapshots.get(maxSnapshots - 1);
    }
    return Optional.of(new Range(main, realtime, watermark, snapshots, stop));
  }

  /** The changes of the range's snapshots, combined, from their manifests. */
  private static FileDiff snapshotDiff(Table table, Range range) {
    Map<String, DataFile> added = new LinkedHashMap<>();
    Set<String> removed = new HashSet<>();
    Map<String, DeleteFile> newDeletes = new LinkedHashMap<>();
    for (Snapshot s : range.snapshots()) {
      SnapshotChanges changes = SnapshotChanges.builderFor(table).snapshot(s).build();
      for (DataFile f : changes.addedDataFiles()) {
        added.put(f.location(), f.copy());
      }
      for (DataFile f : changes.removedDataFiles()) {
        if (added.remove(f.location()) == null) {
          removed.add(f.location());
        }
      }
      for (DeleteFile d : changes.addedDeleteFiles()) {
        if (d.content() == FileContent.EQUALITY_DELETES) {
          newDeletes.put(d.location(), d.copy());
        }
      }
      for (DeleteFile d : changes.removedDeleteFiles()) {
        newDeletes.remove(d.location());
      }
    }
    return new FileDiff(added, removed, newDeletes, range.stop().sequenceNumber());
  }

  /**
   * The realtime snapshots after the watermark have expired: the live file sets of both branches
   * compared (metadata only), every live equality delete converted against every data file it may
   * apply to. Converting a delete twice is harmless: positions already deleted are skipped.
   */
  private static FileDiff liveSetDiff(
      Table table, String tableName, Range range, Map<String, DataFile> mainData) {
    LOG.warn(
        "Table {}: the realtime snapshots after main's watermark {} have expired; diffing the live file sets",
        tableName,
        range.watermark().orElse(null));
    Map<String, DataFile> realtimeData = BranchFiles.liveDataFiles(table, range.realtime());
    Map<String, DataFile> added = new LinkedHashMap<>();
    realtimeData.forEach((path, f) -> {
      if (!mainData.containsKey(path)) {
        added.put(path, f);
      }
    });
    Set<String> removed = new HashSet<>();
    for (String path : mainData.keySet()) {
      if (!realtimeData.containsKey(path)) {
        removed.add(path);
      }
    }
    return new FileDiff(
        added, removed, equalityDeletes(BranchFiles.liveDeleteFiles(table, range.realtime())), -1);
  }

  /** The equality-delete files among {@code files}, by path (each is a file of its own). */
  private static Map<String, DeleteFile> equalityDeletes(List<DeleteFile> files) {
    Map<String, DeleteFile> out = new LinkedHashMap<>();
    for (DeleteFile f : files) {
      if (f.content() == FileContent.EQUALITY_DELETES) {
        out.put(f.location(), f);
      }
    }
    return out;
  }
}
