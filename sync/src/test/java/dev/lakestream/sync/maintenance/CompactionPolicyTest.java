package dev.lakestream.sync.maintenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.config.PipelineConfig;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.junit.jupiter.api.Test;

class CompactionPolicyTest {

  @Test
  void binsAreFilledInOrderUpToTheTargetAndNeverEmpty() {
    List<DataFile> files =
        List.of(file("a", 40), file("b", 50), file("c", 30), file("d", 200), file("e", 10));
    List<List<DataFile>> bins = RealtimeCompaction.bins(files, 100);
    assertThat(bins)
        .extracting(bin -> bin.stream().map(f -> f.location()).toList())
        .containsExactly(List.of("a", "b"), List.of("c"), List.of("d"), List.of("e"));
  }

  @Test
  void settingsUseTheirDefaultsAndDeriveFromTheTarget() {
    CompactionPolicy defaults = CompactionPolicy.from(new PipelineConfig(Map.of()));
    assertThat(defaults).isEqualTo(CompactionPolicy.defaults());
    CompactionPolicy small = CompactionPolicy.from(
        new PipelineConfig(Map.of(CompactionPolicy.TARGET_FILE_BYTES, "1000")));
    assertThat(small.smallFileBytes()).isEqualTo(750);
    assertThat(small.minSmallBytes()).isEqualTo(1000);
    assertThatThrownBy(() -> CompactionPolicy.from(
            new PipelineConfig(Map.of(CompactionPolicy.MIN_SMALL_FILES, "1"))))
        .hasMessageContaining(CompactionPolicy.MIN_SMALL_FILES);
  }

  private static DataFile file(String path, long bytes) {
    return DataFiles.builder(PartitionSpec.unpartitioned())
        .withPath(path)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(bytes)
        .withRecordCount(1)
        .build();
  }
}
