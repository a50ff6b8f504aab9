package dev.lakestream.sync.commit;

import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.iceberg.StoreLocations;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;

/**
 * What a cycle may commit to {@code main}, checked before it does: results come from the convert
 * topics, which anyone allowed to write to them could forge, so a result is only taken when it is
 * for a data file its plan sent out, and its vectors are deletion vectors (Puffin, position
 * deletes) of that very data file, stored where the table keeps its files, in a file main does not
 * have yet; the vector a result replaces is exactly the file's current one on main (deletion
 * vectors share Puffin files, so the entry counts, not the path). Every data file the
 * plan adds is there too. Where the table keeps its files: under its {@code location}, or under the
 * data location its properties name ({@code write.data.path}, and the older {@code
 * write.object-storage.path} and {@code write.folder-storage.path}), which is where Iceberg's
 * writers put them. A refused cycle is not committed; the coordinator parks the table and plans
 * again.
 */
public final class CycleChecks {

  /** A cycle that must not be committed, and why. */
  public static final class Refused extends IllegalStateException {
    public Refused(String message) {
      super(message);
    }
  }

  private CycleChecks() {}

  /**
   * @param mainDvs the deletion vectors of the main snapshot the cycle commits on top of, by data
   *     file ({@link dev.lakestream.common.iceberg.BranchFiles#deletionVectors}); read only when a
   *     result adds or replaces a vector
   */
  public static void check(
      Table table,
      CyclePlan plan,
      List<ConvertResult> results,
      Supplier<Map<String, DeleteFile>> mainDvs) {
    String where = "cycle " + plan.cycleId() + " of " + plan.table();
    List<String> roots = roots(table);
    Map<Integer, PartitionSpec> specs = table.specs();
    Map<String, DeleteFile> currentDvs = null;
    Set<String> puffinsOnMain = null;
    for (CyclePlan.SequencedFile f : plan.addDataFiles()) {
      under(roots, f.file().decode(specs), where, "data file to add");
    }
    Set<String> tasks = new HashSet<>(plan.taskFiles());
    for (ConvertResult result : results) {
      if (!plan.cycleId().equals(result.cycleId()) || !tasks.contains(result.dataFilePath())) {
        throw new Refused(where + ": a convert result for " + result.dataFilePath() + " of cycle "
            + result.cycleId() + " that the cycle did not ask for");
      }
      DeleteFile dv = result.newDv(specs);
      if (dv == null && result.rewrittenDvs().isEmpty()) {
        continue;
      }
      if (currentDvs == null) {
        currentDvs = mainDvs.get();
        puffinsOnMain = new HashSet<>();
        for (DeleteFile d : currentDvs.values()) {
          puffinsOnMain.add(d.location());
        }
      }
      if (dv != null) {
        vectorOf(dv, result.dataFilePath(), where);
        under(roots, dv, where, "deletion vector");
        if (puffinsOnMain.contains(dv.location())) {
          throw new Refused(where + ": the new deletion vector of " + result.dataFilePath()
              + " is in " + dv.location() + ", a file main already has");
        }
      }
      List<DeleteFile> rewritten = result.rewrittenDvs(specs);
      for (DeleteFile old : rewritten) {
        vectorOf(old, result.dataFilePath(), where);
      }
      replaces(result.dataFilePath(), dv, rewritten, currentDvs.get(result.dataFilePath()), where);
    }
  }

  /**
   * A new vector replaces exactly the data file's current one on main (the same entry: Puffin path,
   * offset and length), or none when the file has none; no new vector replaces nothing. Otherwise
   * the commit would leave two vectors for the file, or remove another file's vector.
   */
  private static void replaces(
      String dataFile,
      DeleteFile dv,
      List<DeleteFile> rewritten,
      DeleteFile current,
      String where) {
    boolean ok = dv == null || current == null
        ? rewritten.isEmpty()
        : rewritten.size() == 1 && sameEntry(rewritten.get(0), current);
    if (!ok) {
      throw new Refused(where + ": the result for " + dataFile + " replaces "
          + rewritten.stream().map(CycleChecks::entry).toList() + " but its vector on main is "
          + (current == null ? "none" : entry(current))
          + (dv == null ? " and the result adds no vector" : ""));
    }
  }

  private static boolean sameEntry(DeleteFile a, DeleteFile b) {
    return a.location().equals(b.location())
        && Objects.equals(a.contentOffset(), b.contentOffset())
        && Objects.equals(a.contentSizeInBytes(), b.contentSizeInBytes());
  }

  private static String entry(DeleteFile d) {
    return d.location() + "@" + d.contentOffset() + "+" + d.contentSizeInBytes();
  }

  private static void vectorOf(DeleteFile dv, String dataFile, String where) {
    if (dv.content() != FileContent.POSITION_DELETES
        || dv.format() != FileFormat.PUFFIN
        || !dataFile.equals(dv.referencedDataFile())) {
      throw new Refused(where + ": the result for " + dataFile + " names " + dv.location() + " ("
          + dv.content() + ", " + dv.format() + ", of " + dv.referencedDataFile()
          + "), not a deletion vector of that data file");
    }
  }

  private static List<String> roots(Table table) {
    List<String> roots = new ArrayList<>();
    roots.add(StoreLocations.folder(StoreLocations.normalize(table.location())));
    for (String key : List.of(
        TableProperties.WRITE_DATA_LOCATION,
        "write.object-storage.path",
        "write.folder-storage.path")) {
      String location = table.properties().get(key);
      if (location != null && !location.isBlank()) {
        roots.add(StoreLocations.folder(StoreLocations.normalize(location)));
      }
    }
    return roots;
  }

  private static void under(List<String> roots, ContentFile<?> file, String where, String what) {
    String location = StoreLocations.normalize(file.location());
    if (location.contains("/../") || roots.stream().noneMatch(location::startsWith)) {
      throw new Refused(where + ": " + what + " " + location
          + " is not where the table keeps its files " + roots);
    }
  }
}
