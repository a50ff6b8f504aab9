package dev.lakestream.common.iceberg;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ContentFileParser;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;

/**
 * Data and delete files in Iceberg's own content-file JSON (the REST catalog's form): path, format,
 * partition, sizes, column metrics and equality field ids, everything a commit needs; and opened
 * for reading ({@link #input}, {@link #deleteLoader}).
 */
public final class ContentFiles {

  private static final ObjectMapper JSON = new ObjectMapper();

  private ContentFiles() {}

  public static JsonNode toJson(ContentFile<?> file, PartitionSpec spec) {
    try {
      return JSON.readTree(ContentFileParser.toJson(file, spec));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static ContentFile<?> fromJson(JsonNode node, Map<Integer, PartitionSpec> specs) {
    return ContentFileParser.fromJson(node, specs);
  }

  /**
   * The file, opened as Iceberg's own readers open it: with the length the table's metadata records.
   * A file opened by its location alone has to ask the store for its length before a Parquet reader
   * can find its footer: on an object store, one more request ({@code HEAD}) per file read, and its
   * round trip. Not through {@code FileIO.newInputFile(DataFile)}: that refuses a file whose
   * manifest entry carries key metadata, which a table written by another engine may have without
   * being encrypted (Iceberg's plaintext reads log it and read the file), and the pipeline read such
   * files before.
   */
  public static InputFile input(FileIO io, ContentFile<?> file) {
    return io.newInputFile(file.location(), file.fileSizeInBytes());
  }

  /**
   * Iceberg's delete loader, reading on the caller's thread. Iceberg's default hands the files of
   * each call to its delete worker pool and waits for them by polling every 10 ms: a call whose
   * files are not read by the first poll waits at least 10 ms, however little it reads. Every call
   * this project makes with this loader reads one delete file or one deletion vector (which Iceberg
   * reads on the caller's thread anyway), so the pool would run nothing in parallel.
   */
  public static BaseDeleteLoader deleteLoader(FileIO io) {
    return new BaseDeleteLoader(f -> input(io, f), null);
  }
}
