package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.junit.jupiter.api.Test;

/** Locations compared in one spelling, and folders ending in one slash. */
class StoreLocationsTest {

  @Test
  void aFileIsComparedInOneSpelling() {
    assertThat(StoreLocations.normalize("file:/w/t/data/a.parquet"))
        .isEqualTo("/w/t/data/a.parquet");
    assertThat(StoreLocations.normalize("file:///w/t/data/a.parquet"))
        .isEqualTo("/w/t/data/a.parquet");
    assertThat(StoreLocations.normalize("s3a://bucket/t/a.parquet"))
        .isEqualTo("s3://bucket/t/a.parquet");
    assertThat(StoreLocations.normalize("s3://bucket/t/a.parquet"))
        .isEqualTo("s3://bucket/t/a.parquet");
  }

  @Test
  void aFolderEndsInOneSlash() {
    assertThat(StoreLocations.folder("s3://bucket/t")).isEqualTo("s3://bucket/t/");
    assertThat(StoreLocations.folder("s3://bucket/t/")).isEqualTo("s3://bucket/t/");
  }

  @Test
  void aListingLeavesFolderMarkersOut() {
    List<FileInfo> keys = List.of(
        new FileInfo("s3://bucket/t/", 0, 1),
        new FileInfo("s3://bucket/t/data/", 0, 1),
        new FileInfo("s3://bucket/t/data/a.parquet", 10, 1),
        new FileInfo("s3://bucket/t/metadata/v1.metadata.json", 20, 1));
    List<String> listed = new ArrayList<>();
    StoreLocations.files(new Listing(keys), "s3://bucket/t/")
        .forEach(f -> listed.add(f.location()));
    assertThat(listed)
        .containsExactly("s3://bucket/t/data/a.parquet", "s3://bucket/t/metadata/v1.metadata.json");
  }

  /** A store that lists the keys it is given (S3-compatible stores list folder markers so). */
  private record Listing(List<FileInfo> keys) implements SupportsPrefixOperations {
    @Override
    public Iterable<FileInfo> listPrefix(String prefix) {
      return keys.stream().filter(k -> k.location().startsWith(prefix)).toList();
    }

    @Override
    public void deletePrefix(String prefix) {
      throw new UnsupportedOperationException();
    }

    @Override
    public InputFile newInputFile(String path) {
      throw new UnsupportedOperationException();
    }

    @Override
    public OutputFile newOutputFile(String path) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void deleteFile(String path) {
      throw new UnsupportedOperationException();
    }
  }
}
