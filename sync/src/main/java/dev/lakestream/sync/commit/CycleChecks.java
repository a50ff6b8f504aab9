package dev.lakestream.sync.commit;

import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.iceberg.ContentFiles;
import dev.lakestream.sync.maintenance.OrphanFiles;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;

/**
 * What a cycle may commit to {@code main}, checked before it does: results come from the convert
 * topics, which anyone allowed to write to them could forge, so a result is only taken when it is
 * for a data file its plan sent out, and its vectors are deletion vectors (Puffin, position
 * deletes) of that very data file, stored under the table's location. Every data file the plan adds
 * is under the table's location too. A refused cycle is not committed; the coordinator parks the
 * table and plans again.
 */
public final class CycleChecks {

  /** A cycle that must not be committed, and why. */
  public static final class Refused extends IllegalStateException {
    public Refused(String message) {
      super(message);
    }
  }

  private CycleChecks() {}

  public static void check(Table table, CyclePlan plan, List<ConvertResult> results) {
    String where = "cycle " + plan.cycleId() + " of " + plan.table();
    String root = folder(OrphanFiles.normalize(table.location()));
    Map<Integer, PartitionSpec> specs = table.specs();
    for (CyclePlan.SequencedFile f : plan.addDataFiles()) {
      under(root, ContentFiles.fromJson(f.file(), specs), where, "data file to add");
    }
    Set<String> tasks = new HashSet<>(plan.taskFiles());
    for (ConvertResult result : results) {
      if (!plan.cycleId().equals(result.cycleId()) || !tasks.contains(result.dataFilePath())) {
        throw new Refused(where + ": a convert result for " + result.dataFilePath() + " of cycle " + result.cycleId()
            + " that the cycle did not ask for");
      }
      DeleteFile dv = result.newDv(specs);
      if (dv != null) {
        vectorOf(dv, result.dataFilePath(), where);
        under(root, dv, where, "deletion vector");
      }
      for (DeleteFile old : result.rewrittenDvs(specs)) {
        vectorOf(old, result.dataFilePath(), where);
      }
    }
  }

  private static void vectorOf(DeleteFile dv, String dataFile, String where) {
    if (dv.content() != FileContent.POSITION_DELETES || dv.format() != FileFormat.PUFFIN
        || !dataFile.equals(dv.referencedDataFile())) {
      throw new Refused(where + ": the result for " + dataFile + " names " + dv.location() + " (" + dv.content() + ", "
          + dv.format() + ", of " + dv.referencedDataFile() + "), not a deletion vector of that data file");
    }
  }

  private static void under(String root, ContentFile<?> file, String where, String what) {
    String location = OrphanFiles.normalize(file.location());
    if (!location.startsWith(root) || location.contains("/../")) {
      throw new Refused(where + ": " + what + " " + location + " is not under the table's location " + root);
    }
  }

  private static String folder(String location) {
    return location.endsWith("/") ? location : location + "/";
  }
}
