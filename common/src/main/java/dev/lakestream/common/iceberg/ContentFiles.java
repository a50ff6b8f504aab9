package dev.lakestream.common.iceberg;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ContentFileParser;
import org.apache.iceberg.PartitionSpec;

/**
 * Data and delete files in Iceberg's own content-file JSON (the REST catalog's form): path, format,
 * partition, sizes, column metrics and equality field ids, everything a commit needs.
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
}
