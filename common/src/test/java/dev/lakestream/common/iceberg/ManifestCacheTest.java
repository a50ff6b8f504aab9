package dev.lakestream.common.iceberg;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.testkit.Heap;
import dev.lakestream.testkit.TemporaryWarehouse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Live files listed through the manifest cache are the ones Iceberg's own scan plans, with the
 * same data sequence numbers, in every snapshot, after manifests are rewritten and when the cache
 * evicts; and a manifest is decoded once while it stays in the cache.
 */
class ManifestCacheTest {

  private static final Schema SCHEMA = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "v", Types.StringType.get())),
      Set.of(1));

  /**
   * Format 2 as well as 3: in 2 no manifest carries a first row id, so a commit's data and delete
   * manifests differ by their path (and content) alone; and a table of format 2 raised to 3 lists
   * its old manifests again with a first row id, which its files then inherit.
   */
  @ParameterizedTest
  @ValueSource(strings = {"2", "3"})
  void liveFilesThroughTheCacheAreIcebergsOwnAndEachManifestIsDecodedOnce(String format)
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = table(warehouse, format, "1");
      ManifestCache cache = new ManifestCache(64L << 20);
      Set<String> seen = new HashSet<>();
      for (int batch = 0; batch < 8; batch++) {
        table
            .newRowDelta()
            .addRows(dataFile(table, "b" + batch + "-a"))
            .addRows(dataFile(table, "b" + batch + "-b"))
            .addDeletes(equalityDelete(table, "b" + batch))
            .commit();
        if (batch == 5) {
          // Both files of a commit's manifest: the manifest the delete writes holds deleted
          // entries only.
          table
              .newDelete()
              .deleteFile(table.location() + "/data/b1-a.parquet")
              .deleteFile(table.location() + "/data/b1-b.parquet")
              .commit();
        }
        Snapshot snapshot = table.currentSnapshot();
        long before = cache.decoded();
        int unseen = 0;
        for (ManifestFile m : snapshot.allManifests(table.io())) {
          boolean live = m.hasAddedFiles() || m.hasExistingFiles();
          unseen += seen.add(m.path() + "@" + m.sequenceNumber()) && live ? 1 : 0;
        }
        assertThat(dataFiles(cache, table, snapshot)).isEqualTo(scanned(table, snapshot));
        assertThat(deleteFiles(cache, table, snapshot)).isEqualTo(readDeletes(table, snapshot));
        assertThat(cache.decoded() - before)
            .as("manifests decoded for snapshot %d: only those with files not seen before", batch)
            .isEqualTo(unseen);
        if (batch == 5) {
          assertThat(snapshot.dataManifests(table.io()))
              .as("the delete's commit wrote a manifest of deleted entries only")
              .anyMatch(m -> !m.hasAddedFiles() && !m.hasExistingFiles());
        }
        long again = cache.decoded();
        dataFiles(cache, table, snapshot);
        deleteFiles(cache, table, snapshot);
        assertThat(cache.decoded()).as("nothing decoded again").isEqualTo(again);
      }

      Snapshot earlier = table.snapshots().iterator().next();
      if (format.equals("2")) {
        table.updateProperties().set(TableProperties.FORMAT_VERSION, "3").commit();
        table.newRowDelta().addRows(dataFile(table, "after-upgrade")).commit();
        Snapshot upgraded = table.currentSnapshot();
        assertThat(dataFiles(cache, table, upgraded)).isEqualTo(scanned(table, upgraded));
        assertThat(dataFiles(cache, table, upgraded).values())
            .as("files listed after the upgrade carry a first row id")
            .allMatch(v -> !v.endsWith("/null"));
      }
      table.rewriteManifests().rewriteIf(m -> true).commit();
      for (Snapshot snapshot : List.of(table.currentSnapshot(), earlier)) {
        assertThat(dataFiles(cache, table, snapshot)).isEqualTo(scanned(table, snapshot));
        assertThat(deleteFiles(cache, table, snapshot)).isEqualTo(readDeletes(table, snapshot));
      }
    }
  }

  @Test
  void aBoundedCacheStaysUnderItsBytesKeepsPartOfALoopLargerThanItAndStillGivesEveryFile()
      throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = table(warehouse, "3", "8388608");
      // One manifest per append, one file each, and one manifest of six files.
      int manifests = 40;
      for (int i = 0; i < manifests; i++) {
        table.newFastAppend().appendFile(dataFile(table, "f" + i)).commit();
      }
      AppendFiles six = table.newFastAppend();
      for (int i = 0; i < 6; i++) {
        six.appendFile(dataFile(table, "g" + i));
      }
      six.commit();
      List<ManifestFile> ones = new ArrayList<>();
      ManifestFile sixFiles = null;
      for (ManifestFile m : table.currentSnapshot().dataManifests(table.io())) {
        if (m.addedFilesCount() == 6) {
          sixFiles = m;
        } else {
          ones.add(m);
        }
      }
      assertThat(ones).hasSize(manifests);
      // What one kept one-file manifest weighs (its file, its path and the entry).
      ManifestCache probe = new ManifestCache(1L << 20);
      probe.dataFiles(table, ones.get(0));
      long entry = probe.bytes();
      // Room for half of the one-file manifests.
      ManifestCache cache = new ManifestCache(entry * manifests / 2 + entry / 2);
      int loops = 20;
      for (int loop = 0; loop < loops; loop++) {
        for (ManifestFile m : ones) {
          assertThat(files(cache, table, m)).hasSize(1);
        }
        assertThat(cache.bytes())
            .as("bytes kept after loop %d", loop)
            .isLessThanOrEqualTo(entry * manifests / 2 + entry / 2);
      }
      assertThat(cache.decoded())
          .as("a loop over twice what the cache holds still finds some of it kept")
          .isLessThan((long) loops * manifests * 3 / 4);
      // A manifest over half the bound is not kept; at half, it is.
      ManifestCache sized = new ManifestCache(1L << 20);
      sized.dataFiles(table, sixFiles);
      long sixBytes = sized.bytes();
      ManifestCache under = new ManifestCache(2 * sixBytes - 1);
      assertThat(files(under, table, sixFiles)).hasSize(6);
      assertThat(files(under, table, sixFiles)).hasSize(6);
      assertThat(under.decoded())
          .as("a manifest over half the bound is not kept")
          .isEqualTo(2);
      ManifestCache twice = new ManifestCache(2 * sixBytes);
      assertThat(files(twice, table, sixFiles)).hasSize(6);
      assertThat(files(twice, table, sixFiles)).hasSize(6);
      assertThat(twice.decoded()).as("a manifest of half the bound is kept").isEqualTo(1);
      Snapshot snapshot = table.currentSnapshot();
      assertThat(dataFiles(cache, table, snapshot)).isEqualTo(scanned(table, snapshot));

      ManifestCache none = new ManifestCache(0);
      assertThat(dataFiles(none, table, snapshot)).isEqualTo(scanned(table, snapshot));
      assertThat(none.bytes()).isZero();
    }
  }

  /**
   * The bound is only as good as the estimate of each entry's heap: compared with what a manifest
   * of files with statistics on twenty columns takes once decoded.
   */
  @Test
  void theEstimatedBytesAreNearTheHeapDecodedEntriesTake() throws Exception {
    int columns = 20;
    int files = 3_000;
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      List<Types.NestedField> fields = new ArrayList<>();
      for (int c = 1; c <= columns; c++) {
        fields.add(Types.NestedField.optional(
            c, "c" + c, c % 2 == 0 ? Types.StringType.get() : Types.LongType.get()));
      }
      var catalog = warehouse.catalog();
      ((SupportsNamespaces) catalog).createNamespace(Namespace.of("t"));
      Table table = catalog
          .buildTable(TableIdentifier.of("t", "wide"), new Schema(fields))
          .withPartitionSpec(PartitionSpec.unpartitioned())
          .withProperty(TableProperties.FORMAT_VERSION, "3")
          .create();
      AppendFiles append = table.newFastAppend();
      for (int i = 0; i < files; i++) {
        Map<Integer, Long> counts = new HashMap<>();
        Map<Integer, ByteBuffer> lower = new HashMap<>();
        Map<Integer, ByteBuffer> upper = new HashMap<>();
        for (int c = 1; c <= columns; c++) {
          counts.put(c, 1_000L + i + c);
          lower.put(c, ByteBuffer.wrap(c % 2 == 0 ? ("a-" + i).getBytes(UTF_8) : new byte[8]));
          upper.put(c, ByteBuffer.wrap(c % 2 == 0 ? ("z-" + i).getBytes(UTF_8) : new byte[8]));
        }
        append.appendFile(DataFiles.builder(table.spec())
            .withPath(table.location() + "/data/00000-" + i + "-5f0c1e2a-7d4b.parquet")
            .withFormat(FileFormat.PARQUET)
            .withFileSizeInBytes(100_000)
            .withRecordCount(1_000)
            .withMetrics(new Metrics(1_000L, counts, counts, counts, null, lower, upper))
            .withSplitOffsets(List.of(4L))
            .build());
      }
      append.commit();
      ManifestFile manifest = table.currentSnapshot().dataManifests(table.io()).get(0);
      ManifestCache cache = new ManifestCache(1L << 30);
      long before = Heap.inUse();
      List<DataFile> decoded = cache.dataFiles(table, manifest);
      long measured = Heap.inUse() - before;
      assertThat(decoded).hasSize(files);
      assertThat((double) cache.bytes() / measured)
          .as("estimated %d bytes, measured %d", cache.bytes(), measured)
          .isBetween(0.8, 1.5);
    }
  }

  @Test
  void theSharedCacheTakesItsBoundFromTheSettingAndReportsItsMeters() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try {
      ManifestCache.configureShared(
          new PipelineConfig(Map.of(ManifestCache.MAX_BYTES, "12345")), registry);
      assertThat(ManifestCache.SHARED.maxBytes()).isEqualTo(12_345);
      assertThat(
              registry.find("cache.gets").tag("cache", "lakestream.manifests").meters())
          .isNotEmpty();
      ManifestCache.configureShared(new PipelineConfig(Map.of()), registry);
      assertThat(ManifestCache.SHARED.maxBytes()).isEqualTo(Runtime.getRuntime().maxMemory() / 16);
    } finally {
      ManifestCache.configureShared(new PipelineConfig(Map.of()), new SimpleMeterRegistry());
    }
  }

  private static Table table(TemporaryWarehouse warehouse, String format, String manifestBytes) {
    var catalog = warehouse.catalog();
    ((SupportsNamespaces) catalog).createNamespace(Namespace.of("t"));
    return catalog
        .buildTable(TableIdentifier.of("t", "files"), SCHEMA)
        .withPartitionSpec(PartitionSpec.unpartitioned())
        .withProperty(TableProperties.FORMAT_VERSION, format)
        .withProperty(TableProperties.MANIFEST_TARGET_SIZE_BYTES, manifestBytes)
        .create();
  }

  private static DataFile dataFile(Table table, String name) {
    return DataFiles.builder(table.spec())
        .withPath(table.location() + "/data/" + name + ".parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(100)
        .withRecordCount(2)
        .build();
  }

  private static DeleteFile equalityDelete(Table table, String name) {
    return FileMetadata.deleteFileBuilder(table.spec())
        .ofEqualityDeletes(1)
        .withPath(table.location() + "/data/" + name + "-deletes.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(50)
        .withRecordCount(2)
        .build();
  }

  /** Path to data sequence number of the snapshot's live data files, through {@code cache}. */
  private static Map<String, String> dataFiles(
      ManifestCache cache, Table table, Snapshot snapshot) {
    Map<String, String> files = new HashMap<>();
    for (ManifestFile m : snapshot.dataManifests(table.io())) {
      cache
          .dataFiles(table, m)
          .forEach(f -> files.put(f.location(), f.dataSequenceNumber() + "/" + f.firstRowId()));
    }
    return files;
  }

  private static Map<String, String> deleteFiles(
      ManifestCache cache, Table table, Snapshot snapshot) {
    Map<String, String> files = new HashMap<>();
    for (ManifestFile m : snapshot.deleteManifests(table.io())) {
      cache
          .deleteFiles(table, m)
          .forEach(f -> files.put(f.location(), String.valueOf(f.dataSequenceNumber())));
    }
    return files;
  }

  /** The same, as Iceberg's scan plans the snapshot. */
  private static Map<String, String> scanned(Table table, Snapshot snapshot) throws Exception {
    Map<String, String> files = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().useSnapshot(snapshot.snapshotId()).planFiles()) {
      tasks.forEach(t -> files.put(
          t.file().location(), t.file().dataSequenceNumber() + "/" + t.file().firstRowId()));
    }
    return files;
  }

  /** The same for delete files, each manifest read with Iceberg's reader, nothing cached. */
  private static Map<String, String> readDeletes(Table table, Snapshot snapshot) throws Exception {
    Map<String, String> files = new HashMap<>();
    for (ManifestFile m : snapshot.deleteManifests(table.io())) {
      try (ManifestReader<DeleteFile> reader =
          ManifestFiles.readDeleteManifest(m, table.io(), table.specs())) {
        reader.forEach(d -> files.put(d.location(), String.valueOf(d.dataSequenceNumber())));
      }
    }
    return files;
  }

  /** The files of one data manifest through {@code cache}, by path. */
  private static Map<String, String> files(ManifestCache cache, Table table, ManifestFile m)
      throws Exception {
    Map<String, String> files = new HashMap<>();
    cache
        .dataFiles(table, m)
        .forEach(f -> files.put(f.location(), f.dataSequenceNumber() + "/" + f.firstRowId()));
    Map<String, String> read = new HashMap<>();
    try (ManifestReader<DataFile> reader = ManifestFiles.read(m, table.io(), table.specs())) {
      reader.forEach(f -> read.put(f.location(), f.dataSequenceNumber() + "/" + f.firstRowId()));
    }
    assertThat(files).isEqualTo(read);
    return files;
  }
}
