package dev.lakestream.sync.diff;

import dev.lakestream.common.iceberg.KeyBounds;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;

/**
 * The pairing rule of a sync cycle, on files alone: which equality deletes apply to which data
 * files, so that each pair becomes part of one convert task.
 *
 * <ul>
 *   <li>An equality delete applies to a data file when the file's data sequence number on realtime
 *       is <em>strictly lower</em> than the delete's (a delete never removes a row committed in its
 *       own snapshot), and the key columns' bounds do not show they share no key.
 *   <li>A data file already on main is paired with the cycle's new deletes only: the older ones are
 *       in its deletion vector.
 *   <li>A data file the cycle adds with a sequence number at or below the watermark's is the output
 *       of a compaction (it keeps the compaction's starting sequence number): it is paired with
 *       every live delete newer than it, the ones main already holds converted against the files it
 *       replaced included. Those are the cycle's <em>reconversions</em>.
 *   <li>Any other added file is paired with the new deletes.
 * </ul>
 */
public final class Pairing {

  /**
   * The deletes paired with each data file that has any (by data file path, in the order given:
   * main's files first), and the paths of the deletes converted again against compacted files.
   */
  public record Pairs(Map<String, List<DeleteFile>> byDataFile, Set<String> reconverted) {}

  private Pairing() {}

  /**
   * @param schema the table's schema (its identifier fields are the key)
   * @param onMain the data files live on main that stay
   * @param added the data files the cycle adds
   * @param newDeletes the equality deletes the cycle's realtime snapshots added
   * @param liveDeletes every equality delete live on realtime's head (used for compacted files)
   * @param watermarkSequence realtime's sequence number at main's watermark; -1 when unknown (then
   *     no added file counts as compacted, and {@code newDeletes} must hold every live delete)
   * @param sequence a content file's data sequence number (from its manifest entry)
   */
  public static Pairs pair(
      Schema schema,
      Collection<DataFile> onMain,
      Collection<DataFile> added,
      Collection<DeleteFile> newDeletes,
      Collection<DeleteFile> liveDeletes,
      long watermarkSequence,
      ToLongFunction<ContentFile<?>> sequence) {
    Map<String, List<DeleteFile>> byDataFile = new LinkedHashMap<>();
    Set<String> reconverted = new LinkedHashSet<>();
    Set<String> newPaths = new LinkedHashSet<>();
    newDeletes.forEach(d -> newPaths.add(d.location()));
    for (DataFile file : onMain) {
      put(byDataFile, file, applying(schema, file, newDeletes, sequence));
    }
    for (DataFile file : added) {
      boolean compacted = isCompacted(file, watermarkSequence, sequence);
      List<DeleteFile> paired =
          applying(schema, file, compacted ? liveDeletes : newDeletes, sequence);
      put(byDataFile, file, paired);
      if (compacted) {
        paired.stream()
            .map(ContentFile::location)
            .filter(p -> !newPaths.contains(p))
            .forEach(reconverted::add);
      }
    }
    return new Pairs(byDataFile, reconverted);
  }

  /** Whether {@code file}, added by a cycle, is the output of a compaction. */
  public static boolean isCompacted(
      DataFile file, long watermarkSequence, ToLongFunction<ContentFile<?>> sequence) {
    return watermarkSequence >= 0 && sequence.applyAsLong(file) <= watermarkSequence;
  }

  /** The deletes of {@code deletes} that apply to {@code file}. */
  public static List<DeleteFile> applying(
      Schema schema,
      DataFile file,
      Collection<DeleteFile> deletes,
      ToLongFunction<ContentFile<?>> sequence) {
    long fileSequence = sequence.applyAsLong(file);
    List<DeleteFile> out = new ArrayList<>();
    for (DeleteFile d : deletes) {
      if (sequence.applyAsLong(d) > fileSequence && KeyBounds.mayOverlap(schema, file, d)) {
        out.add(d);
      }
    }
    return out;
  }

  private static void put(
      Map<String, List<DeleteFile>> byDataFile, DataFile file, List<DeleteFile> deletes) {
    if (!deletes.isEmpty()) {
      byDataFile.put(file.location(), deletes);
    }
  }
}
