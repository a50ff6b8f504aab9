package dev.lakestream.sync.diff;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class PairingTest {

  private static final Schema SCHEMA = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get())),
      Set.of(1));
  private static final PartitionSpec SPEC = PartitionSpec.unpartitioned();

  private final Map<String, Long> sequences = new HashMap<>();
  private final ToLongFunction<ContentFile<?>> sequence = f -> sequences.get(f.location());

  @Test
  void aDeleteAppliesOnlyToFilesOfAStrictlyLowerSequenceNumber() {
    DataFile older = data("older", 4, 1, 100);
    DataFile same = data("same", 5, 1, 100);
    DataFile newer = data("newer", 6, 1, 100);
    DeleteFile delete = delete("d5", 5, 1, 100);

    var pairs = Pairing.pair(
        SCHEMA,
        List.of(),
        List.of(older, same, newer),
        List.of(delete),
        List.of(delete),
        -1,
        sequence);

    assertThat(pairs.byDataFile()).containsOnlyKeys("older");
    assertThat(pairs.byDataFile().get("older")).containsExactly(delete);
  }

  @Test
  void keyBoundsThatDoNotOverlapRuleAPairOut() {
    DataFile low = data("low", 1, 1, 50);
    DataFile high = data("high", 1, 300, 400);
    DataFile straddling = data("straddling", 1, 150, 250);
    DeleteFile delete = delete("d", 2, 100, 200);

    var pairs = Pairing.pair(
        SCHEMA,
        List.of(low, high, straddling),
        List.of(),
        List.of(delete),
        List.of(delete),
        1,
        sequence);

    assertThat(pairs.byDataFile()).containsOnlyKeys("straddling");
  }

  @Test
  void filesOnMainArePairedWithTheNewDeletesOnly() {
    DataFile onMain = data("main", 1, 1, 100);
    DeleteFile old = delete("old", 2, 1, 100); // converted into main's vectors by an earlier cycle
    DeleteFile fresh = delete("fresh", 4, 1, 100);

    var pairs = Pairing.pair(
        SCHEMA, List.of(onMain), List.of(), List.of(fresh), List.of(old, fresh), 3, sequence);

    assertThat(pairs.byDataFile().get("main")).containsExactly(fresh);
    assertThat(pairs.reconverted()).isEmpty();
  }

  @Test
  void aCompactedFileIsPairedWithEveryLiveDeleteNewerThanItAndThoseAreReconversions() {
    // A compaction started at sequence 2 (its output keeps 2); deletes at 3 landed while it ran and
    // were converted on main against the files it replaced; main's watermark is at sequence 4.
    DataFile compacted = data("compacted", 2, 1, 100);
    DeleteFile duringCompaction = delete("during", 3, 1, 100);
    DeleteFile beforeCompaction = delete("before", 1, 1, 100);
    DeleteFile fresh = delete("fresh", 5, 1, 100);
    DataFile appended = data("appended", 5, 1, 100);

    var pairs = Pairing.pair(
        SCHEMA,
        List.of(),
        List.of(compacted, appended),
        List.of(fresh),
        List.of(beforeCompaction, duringCompaction, fresh),
        4,
        sequence);

    assertThat(pairs.byDataFile().get("compacted"))
        .containsExactlyInAnyOrder(duringCompaction, fresh);
    assertThat(pairs.reconverted()).containsExactly("during");
    assertThat(pairs.byDataFile())
        .doesNotContainKey("appended"); // same sequence as the fresh delete
  }

  @Test
  void withoutAWatermarkNoAddedFileCountsAsCompacted() {
    DataFile file = data("f", 1, 1, 100);
    assertThat(Pairing.isCompacted(file, -1, sequence)).isFalse();
    assertThat(Pairing.isCompacted(file, 1, sequence)).isTrue();
    assertThat(Pairing.isCompacted(file, 0, sequence)).isFalse();
  }

  private DataFile data(String path, long seq, long lower, long upper) {
    sequences.put(path, seq);
    return DataFiles.builder(SPEC)
        .withPath(path)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(10)
        .withMetrics(metrics(lower, upper))
        .build();
  }

  private DeleteFile delete(String path, long seq, long lower, long upper) {
    sequences.put(path, seq);
    return FileMetadata.deleteFileBuilder(SPEC)
        .ofEqualityDeletes(1)
        .withPath(path)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(10)
        .withMetrics(metrics(lower, upper))
        .build();
  }

  private static Metrics metrics(long lower, long upper) {
    Map<Integer, ByteBuffer> lowers =
        Map.of(1, Conversions.toByteBuffer(Types.LongType.get(), lower));
    Map<Integer, ByteBuffer> uppers =
        Map.of(1, Conversions.toByteBuffer(Types.LongType.get(), upper));
    return new Metrics(10L, null, null, null, null, lowers, uppers);
  }
}
