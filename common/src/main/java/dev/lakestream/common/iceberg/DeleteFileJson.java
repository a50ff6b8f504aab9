package dev.lakestream.common.iceberg;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.PartitionSpec;

/**
 * A delete file (equality deletes, position deletes or a deletion vector) as the pipeline's events carry it: Iceberg's own content-file JSON (the REST
 * catalog's form), typed so that a record field says which kind of file it holds and decoding
 * checks it. Serialized as the JSON itself.
 */
public record DeleteFileJson(@JsonValue JsonNode json) {

  public DeleteFileJson {
    if (json == null || !json.isObject()) {
      throw new IllegalArgumentException("a delete file's JSON must be an object, not " + json);
    }
  }

  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public static DeleteFileJson fromJson(JsonNode json) {
    return new DeleteFileJson(json);
  }

  public static DeleteFileJson of(DeleteFile file, PartitionSpec spec) {
    return new DeleteFileJson(ContentFiles.toJson(file, spec));
  }

  /** With the spec it was written with, from the table's specs. */
  public static DeleteFileJson of(DeleteFile file, Map<Integer, PartitionSpec> specs) {
    return of(file, specs.get(file.specId()));
  }

  /** The file's location, without decoding it. */
  public String path() {
    return json.path("file-path").asText();
  }

  /** The file, with the table's partition specs. */
  public DeleteFile decode(Map<Integer, PartitionSpec> specs) {
    ContentFile<?> file = ContentFiles.fromJson(json, specs);
    if (file instanceof DeleteFile typed) {
      return typed;
    }
    throw new IllegalArgumentException(
        "expected a delete file, found " + file.content() + " " + file.location());
  }
}
