package dev.lakestream.sync.verify;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SnapshotRows;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;

/**
 * Checks the invariants of a pipeline table (DESIGN.md): main holds no equality delete; at most
 * one deletion vector per data file, and its data file is live on main; every data file on main is a
 * data file of realtime at the watermark with the same data sequence number; main's rows equal
 * realtime's rows at the watermark. Reads metadata, then both branches in full for the last check.
 */
public final class Verifier {

  /** One invariant: what was checked, whether it holds, and the counts or the first violations. */
  public record Check(String name, boolean passed, String detail) {}

  /** All checks of one table. */
  public record Report(String table, List<Check> checks) {
    public boolean passed() {
      return checks.stream().allMatch(Check::passed);
    }

    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder(table)
          .append(passed() ? ": all invariants hold" : ": INVARIANTS VIOLATED");
      for (Check c : checks) {
        sb.append("\n  [")
            .append(c.passed() ? "ok" : "FAIL")
            .append("] ")
            .append(c.name())
            .append(": ")
            .append(c.detail());
      }
      return sb.toString();
    }
  }

  private static final int SHOWN = 5;

  private Verifier() {}

  public static Report verify(Table table, String name) {
    table.refresh();
    List<Check> checks = new ArrayList<>();
    Snapshot main = table.snapshot(Branches.MAIN);
    Optional<Long> watermark = BranchFiles.watermark(table);
    Map<String, DataFile> mainData = BranchFiles.liveDataFiles(table, main);
    List<DeleteFile> mainDeletes = BranchFiles.liveDeleteFiles(table, main);

    List<String> equality = new ArrayList<>();
    Map<String, List<String>> dvsByFile = new HashMap<>();
    List<String> dangling = new ArrayList<>();
    for (DeleteFile d : mainDeletes) {
      if (d.content() == FileContent.EQUALITY_DELETES) {
        equality.add(d.location());
      } else if (d.referencedDataFile() != null) {
        dvsByFile
            .computeIfAbsent(d.referencedDataFile(), k -> new ArrayList<>())
            .add(d.location());
        if (!mainData.containsKey(d.referencedDataFile())) {
          dangling.add(d.location() + " -> " + d.referencedDataFile());
        }
      }
    }
    checks.add(new Check(
        "no equality deletes on main",
        equality.isEmpty(),
        equality.isEmpty()
            ? mainDeletes.size() + " delete-file entries, none of them equality deletes"
            : equality.size() + " found " + first(equality)));
    List<String> multiple = dvsByFile.entrySet().stream()
        .filter(e -> e.getValue().size() > 1)
        .map(e -> e.getKey() + " " + e.getValue())
        .toList();
    checks.add(new Check(
        "at most one deletion vector per data file",
        multiple.isEmpty(),
        multiple.isEmpty()
            ? dvsByFile.size() + " data files with a deletion vector"
            : multiple.size() + " data files with several " + first(multiple)));
    checks.add(new Check(
        "every deletion vector's data file is live on main",
        dangling.isEmpty(),
        dangling.isEmpty()
            ? dvsByFile.size() + " deletion vectors checked"
            : dangling.size() + " dangling " + first(dangling)));

    if (watermark.isEmpty()) {
      boolean empty = mainData.isEmpty();
      checks.add(new Check(
          "main data files are realtime's",
          empty,
          empty ? "main never synced and empty" : "main has data but no watermark"));
      return new Report(name, checks);
    }
    Snapshot mirrored = table.snapshot(watermark.get());
    if (mirrored == null) {
      checks.add(new Check(
          "main data files are realtime's at the watermark",
          true,
          "realtime snapshot " + watermark.get() + " has expired; not comparable"));
      return new Report(name, checks);
    }
    Map<String, DataFile> realtimeData = BranchFiles.liveDataFiles(table, mirrored);
    List<String> notShared = new ArrayList<>();
    for (DataFile f : mainData.values()) {
      DataFile r = realtimeData.get(f.location());
      if (r == null) {
        notShared.add(f.location() + " (not on realtime)");
      } else if (!r.dataSequenceNumber().equals(f.dataSequenceNumber())) {
        notShared.add(f.location() + " (sequence " + f.dataSequenceNumber() + " on main, "
            + r.dataSequenceNumber() + " on realtime)");
      }
    }
    List<String> missing =
        realtimeData.keySet().stream().filter(p -> !mainData.containsKey(p)).toList();
    boolean sameFiles = notShared.isEmpty() && missing.isEmpty();
    checks.add(new Check(
        "main data files are realtime's at the watermark, same data sequence numbers",
        sameFiles,
        sameFiles
            ? mainData.size() + " data files shared by reference"
            : notShared.size() + " only on main " + first(notShared) + "; " + missing.size()
                + " missing " + first(missing)));

    Map<List<Object>, Integer> mainRows = rows(table, main.snapshotId());
    Map<List<Object>, Integer> realtimeRows = rows(table, watermark.get());
    List<String> diff = new ArrayList<>();
    mainRows.forEach((row, n) -> {
      if (!n.equals(realtimeRows.getOrDefault(row, 0))) {
        diff.add("main has " + n + "x " + row + ", realtime " + realtimeRows.getOrDefault(row, 0));
      }
    });
    realtimeRows.forEach((row, n) -> {
      if (!mainRows.containsKey(row)) {
        diff.add("realtime has " + n + "x " + row + ", main 0");
      }
    });
    long count = mainRows.values().stream().mapToLong(Integer::longValue).sum();
    checks.add(new Check(
        "main rows equal realtime rows at the watermark " + watermark.get(),
        diff.isEmpty(),
        diff.isEmpty() ? count + " rows" : diff.size() + " rows differ " + first(diff)));
    checks.add(oneRowPerKey(table, mainRows));
    return new Report(name, checks);
  }

  /** The primary key is a key on main: no two live rows share one. */
  private static Check oneRowPerKey(Table table, Map<List<Object>, Integer> rows) {
    List<Integer> keyPositions = new ArrayList<>();
    List<Types.NestedField> columns = table.schema().columns();
    for (int i = 0; i < columns.size(); i++) {
      if (table.schema().identifierFieldIds().contains(columns.get(i).fieldId())) {
        keyPositions.add(i);
      }
    }
    Map<List<Object>, Integer> perKey = new HashMap<>();
    rows.forEach((row, n) -> {
      List<Object> key = new ArrayList<>();
      keyPositions.forEach(i -> key.add(row.get(i)));
      perKey.merge(key, n, Integer::sum);
    });
    List<String> duplicated = new ArrayList<>();
    perKey.forEach((key, n) -> {
      if (n > 1) {
        duplicated.add(key + " x" + n);
      }
    });
    return new Check(
        "one live row per primary key on main",
        duplicated.isEmpty(),
        duplicated.isEmpty()
            ? perKey.size() + " keys"
            : duplicated.size() + " keys with several rows " + first(duplicated));
  }

  private static Map<List<Object>, Integer> rows(Table table, long snapshotId) {
    Map<List<Object>, Integer> rows = new HashMap<>();
    SnapshotRows.forEach(table, snapshotId, r -> rows.merge(values(r), 1, Integer::sum));
    return rows;
  }

  private static List<Object> values(StructLike r) {
    List<Object> values = new ArrayList<>(r.size());
    for (int i = 0; i < r.size(); i++) {
      Object v = r.get(i, Object.class);
      values.add(v instanceof StructLike nested ? values(nested) : v);
    }
    return values;
  }

  private static String first(List<String> items) {
    return items.stream().limit(SHOWN).toList().toString();
  }
}
