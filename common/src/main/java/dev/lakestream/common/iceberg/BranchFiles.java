package dev.lakestream.common.iceberg;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * What a snapshot holds, read from its manifests (no data file is opened), and where main stands:
 * its watermark, the last realtime snapshot it mirrors, found in the summaries of main's ancestors
 * (maintenance commits do not carry it, so the search goes on past them).
 */
public final class BranchFiles {

  private BranchFiles() {}

  /** The realtime snapshot main mirrors, or empty when main has never been synced. */
  public static Optional<Long> watermark(Table table) {
    for (Snapshot s = table.snapshot(Branches.MAIN); s != null; s = parent(table, s)) {
      String id = s.summary().get(SummaryKeys.REALTIME_SNAPSHOT_ID);
      if (id != null) {
        return Optional.of(Long.parseLong(id));
      }
    }
    return Optional.empty();
  }

  /**
   * The live data files of {@code snapshot} by path, each with its data sequence number (decoded
   * once per manifest in this process: {@link ManifestCache}; the files are shared, never change
   * them).
   */
  public static Map<String, DataFile> liveDataFiles(Table table, Snapshot snapshot) {
    Map<String, DataFile> files = new LinkedHashMap<>();
    for (ManifestFile manifest : snapshot.dataManifests(table.io())) {
      for (DataFile file : ManifestCache.SHARED.dataFiles(table, manifest)) {
        files.put(file.location(), file);
      }
    }
    return files;
  }

  /**
   * The live delete files of {@code snapshot}, one per manifest entry. Not keyed by path: several
   * deletion vectors share one Puffin file, each its own entry (its blob's offset and length).
   */
  public static List<DeleteFile> liveDeleteFiles(Table table, Snapshot snapshot) {
    List<DeleteFile> files = new ArrayList<>();
    for (ManifestFile manifest : snapshot.deleteManifests(table.io())) {
      files.addAll(ManifestCache.SHARED.deleteFiles(table, manifest));
    }
    return files;
  }

  /** The deletion vectors of {@code snapshot} by the path of the data file each one deletes from. */
  public static Map<String, DeleteFile> deletionVectors(Table table, Snapshot snapshot) {
    Map<String, DeleteFile> dvs = new LinkedHashMap<>();
    for (DeleteFile file : liveDeleteFiles(table, snapshot)) {
      if (file.content() == FileContent.POSITION_DELETES && file.referencedDataFile() != null) {
        DeleteFile previous = dvs.put(file.referencedDataFile(), file);
        if (previous != null) {
          throw new IllegalStateException("table " + table.name() + " snapshot "
              + snapshot.snapshotId() + " has two deletion vectors for " + file.referencedDataFile()
              + ": " + previous.location() + " and " + file.location());
        }
      }
    }
    return dvs;
  }

  public static Snapshot parent(Table table, Snapshot snapshot) {
    Long parent = snapshot.parentId();
    return parent == null ? null : table.snapshot(parent);
  }
}
