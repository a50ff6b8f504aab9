package dev.lakestream.common.iceberg;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.lakestream.common.config.PipelineConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * read them and never change them.
 *
 * <p>The cache is bounded in bytes of heap, estimated from what each file entry holds (its path
 * and its column statistics, which grow with the table's columns), and a manifest larger than half
 * the bound is not kept. Caffeine chooses what to evict by how often and how lately a manifest was
 * read, so a process whose tables hold more live files than the bound still keeps part of them
 * (each cycle reads the manifests in the same order, which a least-recently-used cache would evict
 * one by one just before each is needed). It is a cache of this process only: each instance of a
 * scaled-out app keeps its own.
 */
public final class ManifestCache {

  private static final Logger LOG = LoggerFactory.getLogger(ManifestCache.class);

  /** The setting that bounds the shared cache, in bytes of heap. */
  public static final String MAX_BYTES = "lakestream.manifest.cache.max.bytes";

  /**
   * The cache BranchFiles reads through, in every app of this process: a sixteenth of the heap
   * (64 MB of a 1 GB heap) unless {@link #configureShared} sets another bound.
   */
  static final ManifestCache SHARED = new ManifestCache(defaultBound());

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

  /** What a kept manifest takes besides its files and its path: its key and the cache's entry. */
  private static final long MANIFEST_BYTES = 300;

  /** The decoded files of one manifest, with the heap they and the entry are estimated to take. */
  private record Entries(List<? extends ContentFile<?>> files, long bytes) {}

  private final Cache<Key, Entries> manifests;
  private final AtomicLong decoded = new AtomicLong();

  ManifestCache(long maxBytes) {
    // Eviction runs on the callers' threads (a few map operations), not in a pool of its own.
    this.manifests = Caffeine.newBuilder()
        .maximumWeight(maxBytes)
        .<Key, Entries>weigher((key, entries) -> (int) Math.min(Integer.MAX_VALUE, entries.bytes()))
        .executor(Runnable::run)
        .recordStats()
        .build();
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
    if (!manifest.hasAddedFiles() && !manifest.hasExistingFiles()) {
      // Only deleted entries (a commit that removed files writes such a manifest): no live file,
      // nothing to decode or keep. The counts are unknown (null) only in old manifests, which
      // these methods count as having files.
      return List.of();
    }
    Key key = Key.of(manifest);
    Entries cached = manifests.getIfPresent(key);
    if (cached != null) {
      return (List<F>) cached.files();
    }
    List<F> files = new ArrayList<>();
    long bytes = MANIFEST_BYTES + 2L * manifest.path().length();
    try (ManifestReader<F> reader = open.get()) {
      for (F file : reader) {
        F copy = file.copy();
        files.add(copy);
        bytes += estimatedBytes(copy);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "reading " + (manifest.content() == ManifestContent.DELETES ? "delete " : "")
              + "manifest " + manifest.path() + " of " + table.name(),
          e);
    }
    decoded.incrementAndGet();
    List<F> kept = List.copyOf(files);
    if (bytes * 2 <= maxBytes()) {
      manifests.put(key, new Entries(kept, bytes));
    }
    return kept;
  }

  /** The bound, in bytes. */
  long maxBytes() {
    return manifests.policy().eviction().orElseThrow().getMaximum();
  }

  /** How many manifests this cache has decoded (read from storage) so far. */
  long decoded() {
    return decoded.get();
  }

  /** The estimated heap the kept manifests take, in bytes (at most the bound, once evicted). */
  long bytes() {
    manifests.cleanUp();
    return manifests.policy().eviction().orElseThrow().weightedSize().orElseThrow();
  }

  /**
   * Bounds the shared cache by {@value #MAX_BYTES} of {@code config} (a sixteenth of the heap unless
   * set; 0 keeps nothing) and reports its hits, misses, evictions and size on {@code registry}
   * (Micrometer's cache meters, tagged {@code cache=lakestream.manifests}). An app calls it when it
   * starts; in a process of two apps the last one's bound holds.
   */
  public static void configureShared(PipelineConfig config, MeterRegistry registry) {
    long bound = Math.max(0, config.getLong(MAX_BYTES, defaultBound()));
    SHARED.resize(bound);
    CaffeineCacheMetrics.monitor(registry, SHARED.manifests, "lakestream.manifests");
    LOG.info("Decoded manifests are kept up to {} MB of heap ({})", bound >> 20, MAX_BYTES);
  }

  /** Sets the bound; entries over it are evicted now. */
  void resize(long bytes) {
    manifests.policy().eviction().orElseThrow().setMaximum(bytes);
  }

  /**
   * The heap a decoded file entry takes, roughly: the object and its path, and per column of
   * statistics one map entry in each of four count maps and two bound maps (a boxed key and value,
   * a hash map node, and the bound's bytes). An estimate from the shapes of Java's collections;
   * ManifestCacheTest compares it with the heap a few thousand entries take.
   */
  static long estimatedBytes(ContentFile<?> file) {
    long bytes = 480 + 2L * file.location().length();
    bytes += countMapBytes(file.columnSizes());
    bytes += countMapBytes(file.valueCounts());
    bytes += countMapBytes(file.nullValueCounts());
    bytes += countMapBytes(file.nanValueCounts());
    bytes += boundMapBytes(file.lowerBounds());
    bytes += boundMapBytes(file.upperBounds());
    bytes += file.splitOffsets() == null ? 0 : 16 + 24L * file.splitOffsets().size();
    bytes +=
        file.equalityFieldIds() == null ? 0 : 16 + 20L * file.equalityFieldIds().size();
    ByteBuffer keyMetadata = file.keyMetadata();
    bytes += keyMetadata == null ? 0 : 64 + keyMetadata.remaining();
    String referenced = file instanceof DeleteFile d ? d.referencedDataFile() : null;
    bytes += referenced == null ? 0 : 40 + 2L * referenced.length();
    return bytes;
  }

  private static long countMapBytes(Map<Integer, Long> map) {
    return map == null ? 0 : 64 + 80L * map.size();
  }

  private static long boundMapBytes(Map<Integer, ByteBuffer> map) {
    if (map == null) {
      return 0;
    }
    long bytes = 64;
    for (ByteBuffer value : map.values()) {
      bytes += 100 + (value == null ? 0 : value.capacity());
    }
    return bytes;
  }

  private static long defaultBound() {
    return Runtime.getRuntime().maxMemory() / 16;
  }
}
