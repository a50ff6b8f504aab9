package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

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
}
