package dev.lakestream.sync.diff;

import dev.lakestream.common.iceberg.KeyBounds;
import com.fasterxml.jackson.databind.JsonNode;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.ContentFiles;
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
 * <p>The pairing rule: an equality delete applies to a data file when the file's data sequence
 * number on realtime is lower than the delete's, and the key columns' bounds do not rule it out.
 * Files already on main are paired with the new deletes only (older ones are in their deletion
 * vectors). A new file with a sequence number at or below the watermark's (the output of a
 * compaction, which keeps the starting sequence number) is paired with every live equality delete
 * newer than it: the bounded reconversion.
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
  public record Planned(CyclePlan plan, List<ConvertTask> tasks, Map<String, Long> deleteSequences) {}

  private Differ() {}

  /** Empty when main already mirrors realtime's head. {@code table} must be fresh. */
  public static Optional<Planned> plan(Table table, String tableName, String cycleId, long nowMs) {
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
    List<Snapshot> range = new ArrayList<>();
    Snapshot stop = realtime;
    while (stop != null
        && !(watermark.isPresent() ? stop.snapshotId() == watermark.get() : mainAncestors.contains(stop.snapshotId()))) {
      range.add(stop);
      stop = BranchFiles.parent(table, stop);
    }
    if (stop != null && range.isEmpty()) {
      return Optional.empty();
    }
    Collections.reverse(range);

    Map<String, DataFile> mainData = BranchFiles.liveDataFiles(table, main);
    Map<String, DataFile> added = new LinkedHashMap<>();
    Set<String> removedBefore = new HashSet<>();
    Map<String, DeleteFile> newDeletes = new LinkedHashMap<>();
    long maxSourceTs = -1;
    for (Snapshot s : range) {
      String ts = s.summary().get(SummaryKeys.MAX_SOURCE_TS_MS);
      if (ts != null) {
        maxSourceTs = Math.max(maxSourceTs, Long.parseLong(ts));
      }
    }
    // Realtime's sequence numbers up to which main holds every delete converted; -1: none known.
    long watermarkSequence;
    boolean liveSets = stop == null;
    if (liveSets) {
      // The realtime snapshots after the watermark have expired: compare the live file sets of
      // both branches (metadata only) and convert every live equality delete against every data
      // file it may apply to. Converting a delete twice is harmless: positions already deleted are
      // skipped.
      LOG.warn("Table {}: the realtime snapshots after main's watermark {} have expired; diffing the live file sets",
          tableName, watermark.orElse(null));
      Map<String, DataFile> realtimeData = BranchFiles.liveDataFiles(table, realtime);
      realtimeData.forEach((path, f) -> {
        if (!mainData.containsKey(path)) {
          added.put(path, f);
        }
      });
      for (String path : mainData.keySet()) {
        if (!realtimeData.containsKey(path)) {
          removedBefore.add(path);
        }
      }
      newDeletes.putAll(equalityDeletes(BranchFiles.liveDeleteFiles(table, realtime)));
      watermarkSequence = -1;
    } else {
      for (Snapshot s : range) {
        SnapshotChanges changes = SnapshotChanges.builderFor(table).snapshot(s).build();
        for (DataFile f : changes.addedDataFiles()) {
          added.put(f.location(), f.copy());
        }
        for (DataFile f : changes.removedDataFiles()) {
          if (added.remove(f.location()) == null) {
            removedBefore.add(f.location());
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
      watermarkSequence = stop.sequenceNumber();
    }

    Map<String, DeleteFile> mainDvs = BranchFiles.deletionVectors(table, main);
    List<JsonNode> removeData = new ArrayList<>();
    List<JsonNode> removeDvs = new ArrayList<>();
    for (String path : removedBefore) {
      DataFile gone = mainData.remove(path);
      if (gone != null) {
        removeData.add(json(table, gone));
        DeleteFile dv = mainDvs.get(path);
        if (dv != null) {
          removeDvs.add(json(table, dv));
        }
      }
    }

    // A new file at or below the watermark's sequence number is the output of a compaction (it
    // keeps the starting sequence number): every live delete newer than it applies, including the
    // ones main already holds converted against the files it replaced. Those are reconversions.
    boolean compactedFiles = added.values().stream().anyMatch(f -> f.dataSequenceNumber() <= watermarkSequence);
    Map<String, DeleteFile> liveDeletes =
        compactedFiles ? equalityDeletes(BranchFiles.liveDeleteFiles(table, realtime)) : newDeletes;

    List<ConvertTask> tasks = new ArrayList<>();
    Set<String> reconverted = new HashSet<>();
    for (DataFile file : mainData.values()) {
      task(table, tableName, cycleId, file, mainDvs.get(file.location()), newDeletes, tasks);
    }
    for (DataFile file : added.values()) {
      boolean compacted = file.dataSequenceNumber() <= watermarkSequence;
      List<String> paired = task(table, tableName, cycleId, file, null, compacted ? liveDeletes : newDeletes, tasks);
      if (compacted) {
        paired.stream().filter(path -> !newDeletes.containsKey(path)).forEach(reconverted::add);
      }
    }

    List<CyclePlan.SequencedFile> addData = new ArrayList<>();
    for (DataFile f : added.values()) {
      addData.add(new CyclePlan.SequencedFile(json(table, f), f.dataSequenceNumber()));
    }
    CyclePlan plan =
        new CyclePlan(
            tableName,
            cycleId,
            main.snapshotId(),
            realtime.snapshotId(),
            maxSourceTs,
            addData,
            removeData,
            removeDvs,
            tasks.stream().map(ConvertTask::dataFilePath).toList(),
            range.size(),
            reconverted.size(),
            liveSets,
            nowMs);
    Map<String, Long> deleteSequences = new HashMap<>();
    liveDeletes.values().forEach(d -> deleteSequences.put(d.location(), d.dataSequenceNumber()));
    newDeletes.values().forEach(d -> deleteSequences.put(d.location(), d.dataSequenceNumber()));
    return Optional.of(new Planned(plan, tasks, deleteSequences));
  }

  /** Adds the task of {@code file} if any of {@code deletes} may apply to it; returns their paths. */
  private static List<String> task(
      Table table, String tableName, String cycleId, DataFile file, DeleteFile currentDv,
      Map<String, DeleteFile> deletes, List<ConvertTask> tasks) {
    List<JsonNode> applying = new ArrayList<>();
    List<String> paths = new ArrayList<>();
    for (DeleteFile d : deletes.values()) {
      if (d.dataSequenceNumber() > file.dataSequenceNumber() && KeyBounds.mayOverlap(table.schema(), file, d)) {
        applying.add(json(table, d));
        paths.add(d.location());
      }
    }
    if (!applying.isEmpty()) {
      tasks.add(new ConvertTask(tableName, cycleId, json(table, file), currentDv == null ? null : json(table, currentDv), applying));
    }
    return paths;
  }

  private static Map<String, DeleteFile> equalityDeletes(Map<String, DeleteFile> files) {
    Map<String, DeleteFile> out = new LinkedHashMap<>();
    files.forEach((path, f) -> {
      if (f.content() == FileContent.EQUALITY_DELETES) {
        out.put(path, f);
      }
    });
    return out;
  }

  private static JsonNode json(Table table, org.apache.iceberg.ContentFile<?> file) {
    return ContentFiles.toJson(file, table.specs().get(file.specId()));
  }
}
