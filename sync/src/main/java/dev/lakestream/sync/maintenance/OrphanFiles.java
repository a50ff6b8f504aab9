package dev.lakestream.sync.maintenance;

import dev.lakestream.common.iceberg.StoreLocations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StatisticsFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * Removes the files under a table's location that no snapshot, metadata file or statistics file
 * of the table references and that are older than a safety age: files of flushes and sync cycles
 * that never committed (a crash between writing and committing), and of commits whose retries
 * wrote new manifests. A referenced file is never removed.
 *
 * <p>The listing comes first and the references are read after it, so a file committed while the
 * listing runs counts as referenced. The safety age covers the files written for a commit that has
 * not happened yet (a batch waiting in ingest's commit queue, a cycle gathering its results): it
 * must be longer than any such wait: {@code lakestream.max.stall.ms} plus a day by default.
 *
 * <p>Only the table's own location ({@code location}) is listed, never {@code write.data.path} or
 * {@code write.metadata.path}: a table property pointing those at a shared prefix would otherwise
 * get other tables' files deleted. Files a table writes elsewhere are never removed here.
 */
public final class OrphanFiles {

  /** What a removal found and did. */
  public record Result(
      int listed,
      int referenced,
      int removed,
      long bytesRemoved,
      List<String> removedFiles,
      long durationMs) {}

  private OrphanFiles() {}

  public static Result remove(Table table, long olderThanMs) {
    long started = System.nanoTime();
    FileIO io = table.io();
    if (!(io instanceof SupportsPrefixOperations listing)) {
      throw new IllegalStateException(
          "table " + table.name() + ": removing orphan files needs a FileIO that can list files ("
              + io.getClass().getName()
              + " cannot); use the object store's FileIO (S3FileIO, GCSFileIO, ADLSFileIO) or HadoopFileIO");
    }
    List<FileInfo> listed = new ArrayList<>();
    StoreLocations.files(listing, StoreLocations.folder(table.location())).forEach(listed::add);
    table.refresh();
    Set<String> referenced = referenced(table);
    List<String> removed = new ArrayList<>();
    long bytes = 0;
    for (FileInfo f : listed) {
      String name = f.location().substring(f.location().lastIndexOf('/') + 1);
      if (f.createdAtMillis() >= olderThanMs
          || referenced.contains(StoreLocations.normalize(f.location()))
          || "version-hint.text".equals(name)) {
        continue;
      }
      io.deleteFile(f.location());
      removed.add(f.location());
      bytes += f.size();
    }
    return new Result(
        listed.size(),
        referenced.size(),
        removed.size(),
        bytes,
        removed,
        (System.nanoTime() - started) / 1_000_000);
  }

  /** Every file the table's current metadata reaches: metadata files, manifest lists, manifests, content files. */
  public static Set<String> referenced(Table table) {
    TableMetadata metadata = ((HasTableOperations) table).operations().current();
    Set<String> files = new HashSet<>();
    files.add(StoreLocations.normalize(metadata.metadataFileLocation()));
    metadata.previousFiles().forEach(e -> files.add(StoreLocations.normalize(e.file())));
    for (StatisticsFile s : metadata.statisticsFiles()) {
      files.add(StoreLocations.normalize(s.path()));
    }
    metadata.partitionStatisticsFiles().forEach(s -> files.add(StoreLocations.normalize(s.path())));
    Set<String> manifestsRead = new HashSet<>();
    for (Snapshot snapshot : metadata.snapshots()) {
      if (snapshot.manifestListLocation() != null) {
        files.add(StoreLocations.normalize(snapshot.manifestListLocation()));
      }
      for (ManifestFile manifest : snapshot.allManifests(table.io())) {
        files.add(StoreLocations.normalize(manifest.path()));
        if (manifestsRead.add(manifest.path())) {
          addContentFiles(table, manifest, files);
        }
      }
    }
    return files;
  }

  private static void addContentFiles(Table table, ManifestFile manifest, Set<String> files) {
    try {
      if (manifest.content() == ManifestContent.DATA) {
        try (ManifestReader<DataFile> reader =
            ManifestFiles.read(manifest, table.io(), table.specs())) {
          for (ContentFile<?> f : reader) {
            files.add(StoreLocations.normalize(f.location()));
          }
        }
      } else {
        try (ManifestReader<DeleteFile> reader =
            ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
          for (ContentFile<?> f : reader) {
            files.add(StoreLocations.normalize(f.location()));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "reading manifest " + manifest.path() + " of " + table.name(), e);
    }
  }
}
