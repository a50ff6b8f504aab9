package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.PartitionSpec;
import org.junit.jupiter.api.Test;

/** Files in events: Iceberg's content-file JSON on the wire, decoded to the kind the field says. */
class FileJsonTest {

  private static final PartitionSpec SPEC = PartitionSpec.unpartitioned();
  private static final Map<Integer, PartitionSpec> SPECS = Map.of(SPEC.specId(), SPEC);
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final DataFile DATA = DataFiles.builder(SPEC)
      .withPath("/wh/db/t/data/a.parquet")
      .withFormat(FileFormat.PARQUET)
      .withFileSizeInBytes(100)
      .withRecordCount(10)
      .build();

  private static final DeleteFile DV = FileMetadata.deleteFileBuilder(SPEC)
      .ofPositionDeletes()
      .withFormat(FileFormat.PUFFIN)
      .withPath("/wh/db/t/data/a-dv.puffin")
      .withFileSizeInBytes(50)
      .withRecordCount(1)
      .withReferencedDataFile("/wh/db/t/data/a.parquet")
      .withContentOffset(4)
      .withContentSizeInBytes(40)
      .build();

  @Test
  void aFileIsWrittenAsIcebergsJsonAndReadBackWhole() throws Exception {
    DataFileJson data = DataFileJson.of(DATA, SPECS);
    String wire = JSON.writeValueAsString(data);
    assertThat(JSON.readTree(wire)).isEqualTo(ContentFiles.toJson(DATA, SPEC));
    DataFileJson back = JSON.readValue(wire, DataFileJson.class);
    assertThat(back.path()).isEqualTo("/wh/db/t/data/a.parquet");
    assertThat(back.decode(SPECS).recordCount()).isEqualTo(10);

    DeleteFile dv = JSON.readValue(
            JSON.writeValueAsString(DeleteFileJson.of(DV, SPECS)), DeleteFileJson.class)
        .decode(SPECS);
    assertThat(dv.referencedDataFile()).isEqualTo("/wh/db/t/data/a.parquet");
    assertThat(dv.contentOffset()).isEqualTo(4);
    assertThat(dv.contentSizeInBytes()).isEqualTo(40);
  }

  @Test
  void aFileOfTheOtherKindIsAClearError() {
    DataFileJson notData = new DataFileJson(DeleteFileJson.of(DV, SPECS).json());
    assertThatThrownBy(() -> notData.decode(SPECS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected a data file")
        .hasMessageContaining("a-dv.puffin");
    DeleteFileJson notDelete = new DeleteFileJson(DataFileJson.of(DATA, SPECS).json());
    assertThatThrownBy(() -> notDelete.decode(SPECS))
        .hasMessageContaining("expected a delete file");
  }
}
