package dev.lakestream.common.iceberg;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;

/**
 * A data file as the pipeline's events carry it: Iceberg's own content-file JSON (the REST
 * catalog's form), typed so that a record field says which kind of file it holds and decoding
 * checks it. Serialized as the JSON itself.
 */
public record DataFileJson(@JsonValue JsonNode json) {

  public DataFileJson {
    if (json == null || !json.isObject()) {
      throw new IllegalArgumentException("a data file's JSON must be an object, not " + json);
    }
  }

  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public static DataFileJson fromJson(JsonNode json) {
    return new DataFileJson(json);
  }

  public static DataFileJson of(DataFile file, PartitionSpec spec) {
    return new DataFileJson(ContentFiles.toJson(file, spec));
  }

  /** With the spec it was written with, from the table's specs. */
  public static DataFileJson of(DataFile file, Map<Integer, PartitionSpec> specs) {
    return of(file, specs.get(file.specId()));
  }

  /** The file's location, without decoding it. */
  public String path() {
    return json.path("file-path").asText();
  }

  /** The file's size in bytes, as its JSON gives it (0 when absent). */
  public long sizeInBytes() {
    return json.path("file-size-in-bytes").asLong(0);
  }

  /** The file, with the table's partition specs. */
  public DataFile decode(Map<Integer, PartitionSpec> specs) {
    ContentFile<?> file = ContentFiles.fromJson(json, specs);
    if (file instanceof DataFile typed) {
      return typed;
    }
    throw new IllegalArgumentException(
        "expected a data file, found " + file.content() + " " + file.location());
  }
}
