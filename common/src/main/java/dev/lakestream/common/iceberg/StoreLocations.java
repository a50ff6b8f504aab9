package dev.lakestream.common.iceberg;

import java.util.stream.StreamSupport;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;

/**
 * A table's locations as its store names them: one spelling per file, folders ending in {@code /},
 * and the files listed under a folder. Orphan removal, spill cleanup and the checks of a cycle's
 * files compare and list locations through these, so each spells them the same way.
 */
public final class StoreLocations {

  private StoreLocations() {}

  /**
   * One spelling of a location: {@code file:} and {@code file://} prefixes dropped, {@code s3a://}
   * and {@code s3n://} written {@code s3://}. The same file is named one way in metadata a writer
   * made and another in a listing of its folder.
   */
  public static String normalize(String location) {
    if (location.startsWith("file://")) {
      return location.substring("file://".length());
    }
    if (location.startsWith("file:")) {
      return location.substring("file:".length());
    }
    if (location.startsWith("s3a://") || location.startsWith("s3n://")) {
      return "s3://" + location.substring(6);
    }
    return location;
  }

  /** {@code location} as a folder: ending in one {@code /}. */
  public static String folder(String location) {
    return location.endsWith("/") ? location : location + "/";
  }

  /**
   * The files listed under {@code prefix}, page by page as the store lists them. A key ending in
   * {@code /} is a folder marker (made by a console or a tool; S3-compatible stores on a file
   * system list every folder so), never a file: it is left out, so that nothing counts it or
   * deletes it (on such a store deleting it deletes the folder).
   */
  public static Iterable<FileInfo> files(SupportsPrefixOperations io, String prefix) {
    return () -> StreamSupport.stream(io.listPrefix(prefix).spliterator(), false)
        .filter(f -> !f.location().endsWith("/"))
        .iterator();
  }
}
