package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Table;

/**
 * The live entries of committed manifests, decoded once per process. Sync lists every live file
 * of main and realtime in each cycle, and most of their manifests did not change since the last
 * one; decoding them again (Avro) was a quarter of sync's CPU at 1,000 changes/s
 * (docs/benchmarks.md, "Sync's threads at 1,000 changes/s").
 *
 * <p>A committed manifest never changes: a commit writes new manifests, it does not rewrite one.
 * What an entry inherits from the manifest list (its data sequence number, snapshot and first row
 * id) is in the key too, so a manifest listed again with other values (a commit retried with the
 * same new manifest) is decoded again, not taken from here. The files returned are shared: callers
 * read them and never change them. The cache is bounded in file entries (least recently used
 * manifests go first), and a manifest larger than half the bound is not kept. A process whose
 * tables hold more live files than the bound gains little (each cycle reads the manifests in the
 * same order, so the least recently used is the next one needed), but reads them right. It is a
 * cache of this process only: each instance of a scaled-out sync keeps its own.
 */
public final class ManifestCache {

  /**
   * The cache BranchFiles reads through: 20,000 file entries. An entry keeps its column statistics,
   * about half a kilobyte per column: some 200 MB for a table of twenty columns at the bound.
   */
  static final ManifestCache SHARED = new ManifestCache(20_000);

  private record Key(
      ManifestContent content,
      String path,
      long sequenceNumber,
      Long snapshotId,
      Long firstRowId,
      int specId) {
    static Key of(ManifestFile manifest) {
      return new Key(
          manifest.content(),
          manifest.path(),
          manifest.sequenceNumber(),
          manifest.snapshotId(),
          manifest.firstRowId(),
          manifest.partitionSpecId());
    }
  }

  private final long maxEntries;
  private final LinkedHashMap<Key, List<? extends ContentFile<?>>> manifests =
      new LinkedHashMap<>(64, 0.75f, true);
  private long entries;
  private final AtomicLong decoded = new AtomicLong();

  ManifestCache(long maxEntries) {
    this.maxEntries = maxEntries;
  }

  /** The live data files of a committed data manifest of {@code table}. */
  List<DataFile> dataFiles(Table table, ManifestFile manifest) {
    return files(table, manifest, () -> ManifestFiles.read(manifest, table.io(), table.specs()));
  }

  /** The live delete files of a committed delete manifest of {@code table}. */
  List<DeleteFile> deleteFiles(Table table, ManifestFile manifest) {
    return files(
        table,
        manifest,
        () -> ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs()));
  }

  /** The manifest's live files: kept ones, or decoded by {@code open}'s reader and kept. */
  @SuppressWarnings("unchecked")
  private <F extends ContentFile<F>> List<F> files(
      Table table, ManifestFile manifest, Supplier<ManifestReader<F>> open) {
    Key key = Key.of(manifest);
    List<F> cached = (List<F>) get(key);
    if (cached != null) {
      return cached;
    }
    List<F> files = new ArrayList<>();
    try (ManifestReader<F> reader = open.get()) {
      for (F file : reader) {
        files.add(file.copy());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "reading " + (manifest.content() == ManifestContent.DELETES ? "delete " : "")
              + "manifest " + manifest.path() + " of " + table.name(),
          e);
    }
    return put(key, files);
  }

  /** How many manifests this cache has decoded (read from storage) so far. */
  long decoded() {
    return decoded.get();
  }

  private synchronized List<? extends ContentFile<?>> get(Key key) {
    return manifests.get(key);
  }

  private synchronized <F extends ContentFile<?>> List<F> put(Key key, List<F> files) {
    decoded.incrementAndGet();
    List<F> kept = List.copyOf(files);
    if (kept.size() * 2L > maxEntries) {
      return kept;
    }
    List<? extends ContentFile<?>> previous = manifests.put(key, kept);
    entries += kept.size() - (previous == null ? 0 : previous.size());
    Iterator<Map.Entry<Key, List<? extends ContentFile<?>>>> oldest =
        manifests.entrySet().iterator();
    while (entries > maxEntries && oldest.hasNext()) {
      entries -= oldest.next().getValue().size();
      oldest.remove();
    }
    return kept;
  }
}
