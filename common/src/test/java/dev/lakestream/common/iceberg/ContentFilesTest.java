package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.Test;

/** Content files are opened with the length the table records, never by their location alone. */
class ContentFilesTest {

  private static final PartitionSpec SPEC = PartitionSpec.unpartitioned();

  @Test
  void dataAndDeleteFilesAreOpenedWithTheirRecordedLength() {
    DataFile data = DataFiles.builder(SPEC)
        .withPath("s3://lake/t/data/a.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(1234)
        .withRecordCount(10)
        .build();
    DeleteFile dv = FileMetadata.deleteFileBuilder(SPEC)
        .ofPositionDeletes()
        .withFormat(FileFormat.PUFFIN)
        .withPath("s3://lake/t/data/a-dv.puffin")
        .withFileSizeInBytes(567)
        .withRecordCount(1)
        .withReferencedDataFile("s3://lake/t/data/a.parquet")
        .withContentOffset(4)
        .withContentSizeInBytes(40)
        .build();
    DeleteFile equality = FileMetadata.deleteFileBuilder(SPEC)
        .ofEqualityDeletes(1)
        .withFormat(FileFormat.PARQUET)
        .withPath("s3://lake/t/data/a-eq.parquet")
        .withFileSizeInBytes(89)
        .withRecordCount(3)
        .build();
    Opens io = new Opens();
    assertThat(ContentFiles.input(io, data).getLength()).isEqualTo(1234);
    assertThat(ContentFiles.input(io, dv).getLength()).isEqualTo(567);
    assertThat(ContentFiles.input(io, equality).getLength()).isEqualTo(89);
    assertThat(io.opened)
        .containsExactly(
            "s3://lake/t/data/a.parquet 1234",
            "s3://lake/t/data/a-dv.puffin 567",
            "s3://lake/t/data/a-eq.parquet 89");
  }

  /**
   * Another engine's table may record key metadata for a file it did not encrypt; Iceberg's own
   * {@code FileIO.newInputFile(DataFile)} refuses such a file, its plaintext reads read it.
   */
  @Test
  void aFileWithKeyMetadataIsOpenedAsBefore() {
    DataFile data = DataFiles.builder(SPEC)
        .withPath("s3://lake/t/data/k.parquet")
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(42)
        .withRecordCount(1)
        .withEncryptionKeyMetadata(ByteBuffer.wrap(new byte[] {1, 2, 3}))
        .build();
    Opens io = new Opens();
    assertThat(ContentFiles.input(io, data).getLength()).isEqualTo(42);
    assertThat(io.opened).containsExactly("s3://lake/t/data/k.parquet 42");
  }

  /** Records how files are opened; opening one by its location alone would ask the store its length. */
  private static final class Opens implements FileIO {
    final List<String> opened = new ArrayList<>();

    @Override
    public InputFile newInputFile(String path) {
      throw new AssertionError("opened by its location alone: " + path);
    }

    @Override
    public InputFile newInputFile(String path, long length) {
      opened.add(path + " " + length);
      return new InputFile() {
        @Override
        public long getLength() {
          return length;
        }

        @Override
        public SeekableInputStream newStream() {
          throw new UnsupportedOperationException();
        }

        @Override
        public String location() {
          return path;
        }

        @Override
        public boolean exists() {
          return true;
        }
      };
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
