package dev.lakestream.sync.maintenance;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CommitRetry;
import dev.lakestream.common.iceberg.FileColumns;
import dev.lakestream.common.iceberg.FileRows;
import dev.lakestream.common.iceberg.KeyBounds;
import dev.lakestream.common.iceberg.SharedDeletes;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.common.iceberg.WithoutHadoopDefaults;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotAncestryValidator;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.CleanableFailure;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileWriterFactory;
import org.apache.iceberg.io.OutputFileFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A compaction of a table's {@code realtime} branch, in two steps so ingest keeps committing in
 * between. {@link #prepare} selects data files by a {@link CompactionPolicy} (or all of them), packs
 * them into bins of the target size, and writes each bin's live rows at the branch's head
 * (the deletes visible there applied) into one new file. {@link #commit} replaces the selected files
 * with the new ones, keeping the starting snapshot's data sequence number and validating from it:
 * equality deletes that land meanwhile have a higher sequence number, so they still apply to the
 * new files, and ingest never conflicts with the rewrite. An equality delete live at the start that
 * can apply to no data file left afterwards (none older than it whose key bounds overlap) is dropped
 * in the same commit. Sync mirrors the rewrite on main like any other change.
 *
 * <p>A compaction never rewrites every live data file: it leaves one in place. Iceberg's
 * commit drops the delete files older than the oldest data file it leaves live, and it counts the
 * files it keeps but not the files it adds with an explicit data sequence number
 * (apache/iceberg#10312). A rewrite of every file would therefore drop the equality deletes that
 * ingest committed while the compaction ran, and the rows they deleted would come back. A file
 * committed at or before the start keeps that minimum at or below the start's sequence number, so
 * only deletes that can apply to nothing live are dropped. The commit is refused when a snapshot
 * since the start removed data files (the file left may be among them), and {@link #commit} checks
 * afterwards that every equality delete it did not mean to drop is still live, failing loudly if
 * one is not.
 */
public final class RealtimeCompaction {

  private static final Logger LOG = LoggerFactory.getLogger(RealtimeCompaction.class);

  /** What a committed compaction did. */
  public record Result(
      String reason,
      long snapshotId,
      int dataFilesIn,
      int dataFilesOut,
      long bytesIn,
      long bytesOut,
      long rows,
      int equalityDeletesDropped,
      long durationMs) {}

  private static final String ONE_LEFT = "one file left in place";

  private final Table table;
  private final String branch;
  private final Snapshot start;
  private final String reason;
  private final List<DataFile> rewritten;
  private final Set<DeleteFile> dropped;
  private final List<DataFile> written;
  private final long rows;
  private final long startedNanos;
  private final String id = UUID.randomUUID().toString();

  private RealtimeCompaction(
      Table table,
      String branch,
      Snapshot start,
      String reason,
      List<DataFile> rewritten,
      Set<DeleteFile> dropped,
      List<DataFile> written,
      long rows,
      long startedNanos) {
    this.table = table;
    this.branch = branch;
    this.start = start;
    this.reason = reason;
    this.rewritten = rewritten;
    this.dropped = dropped;
    this.written = written;
    this.rows = rows;
    this.startedNanos = startedNanos;
  }

  /** Compacts every live data file of realtime (bins of the default target size); commits nothing. */
  public static RealtimeCompaction prepare(Table table) {
    return prepareAll(table, CompactionPolicy.defaults().targetFileBytes());
  }

  /** Compacts every live data file of realtime into bins of {@code targetFileBytes}; commits nothing. */
  public static RealtimeCompaction prepareAll(Table table, long targetFileBytes) {
    long started = System.nanoTime();
    table.refresh();
    Snapshot start = table.snapshot(Branches.REALTIME);
    Map<String, DataFile> live = BranchFiles.liveDataFiles(table, start);
    List<DeleteFile> deletes = equalityDeletes(table, start);
    List<DataFile> all = leavingOneInPlace(table, deletes, live, live.values());
    String reason = all.size() < live.size() ? "requested, " + ONE_LEFT : "requested";
    return write(
        table, Branches.REALTIME, start, live, deletes, reason, all, targetFileBytes, started);
  }

  /** Compacts what {@code policy} selects at realtime's head; empty when it selects nothing. */
  public static Optional<RealtimeCompaction> prepare(
      Table table, CompactionPolicy policy, long nowMs) {
    return prepare(table, Branches.REALTIME, policy, nowMs);
  }

  /**
   * Compacts what {@code policy} selects on {@code branch}; for append-only tables (the change
   * logs) on {@code main}, where there are no deletes to apply or drop.
   */
  public static Optional<RealtimeCompaction> prepare(
      Table table, String branch, CompactionPolicy policy, long nowMs) {
    long started = System.nanoTime();
    table.refresh();
    Snapshot start = table.snapshot(branch);
    if (start == null) {
      return Optional.empty();
    }
    Map<String, DataFile> live = BranchFiles.liveDataFiles(table, start);
    List<DeleteFile> deletes = equalityDeletes(table, start);
    Set<DataFile> selected = new LinkedHashSet<>();
    List<String> reasons = new ArrayList<>();

    boolean manyDeletes = deletes.size() >= policy.maxDeleteFiles();
    if (manyDeletes) {
      for (DataFile f : live.values()) {
        if (deletes.stream().anyMatch(d -> applies(table, d, f))) {
          selected.add(f);
        }
      }
      reasons.add(deletes.size() + " equality-delete files");
    }
    List<DataFile> small = live.values().stream()
        .filter(f -> f.fileSizeInBytes() < policy.smallFileBytes())
        .sorted(Comparator.comparingLong(DataFile::dataSequenceNumber))
        .toList();
    if (small.size() >= 2) {
      long smallBytes = small.stream().mapToLong(DataFile::fileSizeInBytes).sum();
      long oldestAgeMs = nowMs - committedAtMs(table, small.get(0).dataSequenceNumber());
      String why = small.size() >= policy.minSmallFiles()
          ? small.size() + " small files"
          : smallBytes >= policy.minSmallBytes()
              ? smallBytes + " bytes in " + small.size() + " small files"
              : oldestAgeMs >= policy.maxSmallFileAgeMs()
                  ? small.size() + " small files, the oldest " + oldestAgeMs / 1000 + " s old"
                  : null;
      if (why != null) {
        reasons.add(why);
        selected.addAll(small);
      }
    }
    List<DataFile> chosen = leavingOneInPlace(table, deletes, live, selected);
    if (reasons.isEmpty() || chosen.isEmpty()) {
      return Optional.empty();
    }
    // Files of different columns are rewritten apart (write). A set of them that makes as many
    // files out as in is rewritten only for deletes: with many delete files, when one applies to
    // it; else when one applies that the rewrite lets go (it applies to no file left). A small file
    // alone in its columns, rewritten for each new batch's delete that may apply to it, would be
    // rewritten at every check.
    Set<DeleteFile> letGo = droppable(table, live, deletes, chosen);
    List<DataFile> rewrite = new ArrayList<>();
    for (List<DataFile> group : byColumns(table, chosen).values()) {
      boolean merges = bins(newestFirst(group), policy.targetFileBytes()).size() < group.size();
      boolean forDeletes = group.stream()
          .anyMatch(f -> manyDeletes
              ? deletesApplying(table, deletes, f) > 0
              : letGo.stream().anyMatch(d -> applies(table, d, f)));
      if (merges || forDeletes) {
        rewrite.addAll(group);
      }
    }
    if (rewrite.isEmpty()) {
      return Optional.empty();
    }
    if (chosen.size() < selected.size()) {
      reasons.add(ONE_LEFT);
    }
    return Optional.of(write(
        table,
        branch,
        start,
        live,
        deletes,
        String.join(", ", reasons),
        rewrite,
        policy.targetFileBytes(),
        started));
  }

  private static RealtimeCompaction write(
      Table table,
      String branch,
      Snapshot start,
      Map<String, DataFile> live,
      List<DeleteFile> deletes,
      String reason,
      List<DataFile> selected,
      long targetBytes,
      long startedNanos) {
    selected = newestFirst(selected);
    Map<String, FileScanTask> tasks = new HashMap<>();
    try (CloseableIterable<FileScanTask> planned =
        table.newScan().useSnapshot(start.snapshotId()).planFiles()) {
      planned.forEach(t -> tasks.put(t.file().location(), t));
    } catch (IOException e) {
      throw new UncheckedIOException("planning the compaction of " + table.name(), e);
    }
    // Files are rewritten with the columns they hold: a file written before the table had a column
    // holds no value of it, which is not a null (FileColumns), and a rewrite with the column would
    // give each of its rows one.
    Map<Set<Integer>, List<DataFile>> byColumns = byColumns(table, selected);
    OutputFileFactory files = OutputFileFactory.builderFor(table, 0, start.snapshotId())
        .format(FileFormat.PARQUET)
        .operationId("compaction-" + UUID.randomUUID())
        .build();
    List<DataFile> written = new ArrayList<>();
    long rows = 0;
    // Each small file's batch left an equality-delete file that applies to every older file: read
    // each once for the whole compaction, not once per data file it applies to, and merge its keys
    // into the deleted set once.
    SharedDeletes shared = new SharedDeletes(table.io(), SharedDeletes.defaultBudgetBytes());
    try {
      for (Map.Entry<Set<Integer>, List<DataFile>> group : byColumns.entrySet()) {
        Schema schema = FileColumns.rewriteSchema(table, group.getKey());
        FileWriterFactory<Record> writers = WithoutHadoopDefaults.dataWriters(table, schema);
        rows += writeBins(
            table,
            start,
            tasks,
            group.getValue(),
            targetBytes,
            schema,
            writers,
            files,
            shared,
            written);
      }
    } catch (RuntimeException e) {
      written.forEach(f -> table.io().deleteFile(f.location()));
      throw e;
    }
    Set<DeleteFile> dropped = droppable(table, live, deletes, selected);
    return new RealtimeCompaction(
        table, branch, start, reason, selected, dropped, written, rows, startedNanos);
  }

  /** {@code files} by the table's columns they hold ({@link FileColumns}), in their order. */
  private static Map<Set<Integer>, List<DataFile>> byColumns(Table table, List<DataFile> files) {
    Map<Set<Integer>, List<DataFile>> groups = new LinkedHashMap<>();
    for (DataFile f : files) {
      groups
          .computeIfAbsent(FileColumns.held(table.io(), f, table.schema()), k -> new ArrayList<>())
          .add(f);
    }
    return groups;
  }

  /** Writes {@code selected} (files of the same columns) in bins of about {@code targetBytes}; the rows written. */
  private static long writeBins(
      Table table,
      Snapshot start,
      Map<String, FileScanTask> tasks,
      List<DataFile> selected,
      long targetBytes,
      Schema schema,
      FileWriterFactory<Record> writers,
      OutputFileFactory files,
      SharedDeletes shared,
      List<DataFile> written) {
    long rows = 0;
    for (List<DataFile> bin : bins(selected, targetBytes)) {
      DataWriter<Record> writer = writers.newDataWriter(files.newOutputFile(), table.spec(), null);
      try (writer) {
        for (DataFile f : bin) {
          FileScanTask task = tasks.get(f.location());
          if (task == null) {
            throw new IllegalStateException("table " + table.name() + ": data file " + f.location()
                + " is not in the scan of realtime snapshot " + start.snapshotId());
          }
          shared.nextDataFile(f.dataSequenceNumber());
          FileRows.forEach(table, task, schema, shared, writer::write);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("compacting " + table.name(), e);
      }
      DataFile out = writer.toDataFile();
      rows += out.recordCount();
      if (out.recordCount() > 0) {
        written.add(out);
      } else {
        table.io().deleteFile(out.location());
      }
    }
    return rows;
  }

  /**
   * The selected files, less one live file when they are all of them (the class comment says
   * why). Any file live at the start would do; the one left is the one the fewest {@code deletes}
   * apply to (the rewrite has less to gain from it), the largest of those (the most to rewrite).
   * A later compaction takes it in.
   */
  static List<DataFile> leavingOneInPlace(
      Table table,
      List<DeleteFile> deletes,
      Map<String, DataFile> live,
      Collection<DataFile> selected) {
    List<DataFile> rewrite = new ArrayList<>(selected);
    Set<String> chosen = new HashSet<>();
    selected.forEach(f -> chosen.add(f.location()));
    if (!live.isEmpty() && chosen.containsAll(live.keySet())) {
      DataFile left = live.values().stream()
          .min(Comparator.comparingLong((DataFile f) -> deletesApplying(table, deletes, f))
              .thenComparing(Comparator.comparingLong(DataFile::fileSizeInBytes).reversed()))
          .orElseThrow();
      rewrite.removeIf(f -> f.location().equals(left.location()));
    }
    return rewrite;
  }

  private static long deletesApplying(Table table, List<DeleteFile> deletes, DataFile data) {
    return deletes.stream().filter(d -> applies(table, d, data)).count();
  }

  /**
   * {@code files} newest first, the order a compaction reads and packs them in: each older file's
   * equality deletes are the newer file's and more, so the set of deleted keys grows from file to
   * file rather than being merged again for each (SharedDeletes).
   */
  static List<DataFile> newestFirst(Collection<DataFile> files) {
    List<DataFile> ordered = new ArrayList<>(files);
    ordered.sort(Comparator.comparingLong(DataFile::dataSequenceNumber).reversed());
    return ordered;
  }

  /** Greedy in the order given: a bin is closed when the next file would take it past the target. */
  static List<List<DataFile>> bins(List<DataFile> files, long targetBytes) {
    List<List<DataFile>> bins = new ArrayList<>();
    List<DataFile> bin = new ArrayList<>();
    long bytes = 0;
    for (DataFile f : files) {
      if (!bin.isEmpty() && bytes + f.fileSizeInBytes() > targetBytes) {
        bins.add(bin);
        bin = new ArrayList<>();
        bytes = 0;
      }
      bin.add(f);
      bytes += f.fileSizeInBytes();
    }
    if (!bin.isEmpty()) {
      bins.add(bin);
    }
    return bins;
  }

  /**
   * The equality deletes live at the start ({@code deletes}) that apply to no data file left after
   * the rewrite; {@code live} is the start's live data files.
   */
  private static Set<DeleteFile> droppable(
      Table table, Map<String, DataFile> live, List<DeleteFile> deletes, List<DataFile> rewritten) {
    Set<String> gone = new HashSet<>();
    rewritten.forEach(f -> gone.add(f.location()));
    List<DataFile> remaining =
        live.values().stream().filter(f -> !gone.contains(f.location())).toList();
    Set<DeleteFile> dropped = new HashSet<>();
    for (DeleteFile d : deletes) {
      if (remaining.stream().noneMatch(f -> applies(table, d, f))) {
        dropped.add(d);
      }
    }
    return dropped;
  }

  private static boolean applies(Table table, DeleteFile delete, DataFile data) {
    return data.dataSequenceNumber() < delete.dataSequenceNumber()
        && KeyBounds.mayOverlap(table.schema(), data, delete);
  }

  private static List<DeleteFile> equalityDeletes(Table table, Snapshot snapshot) {
    return BranchFiles.liveDeleteFiles(table, snapshot).stream()
        .filter(f -> f.content() == FileContent.EQUALITY_DELETES)
        .toList();
  }

  /** When the snapshot with {@code sequenceNumber} was committed; 0 when it has expired. */
  private static long committedAtMs(Table table, long sequenceNumber) {
    for (Snapshot s : table.snapshots()) {
      if (s.sequenceNumber() == sequenceNumber) {
        return s.timestampMillis();
      }
    }
    return 0;
  }

  /**
   * Commits the rewrite on realtime. After an error the branch is read again: a rewrite on it is
   * committed; one refused (Iceberg's {@link CleanableFailure}: another compaction took the files)
   * and not on it has its new files deleted and the exception thrown; after any other error (the
   * outcome not known) they are kept.
   *
   * <p>A commit that only lost the race for the table's metadata, on every one of the attempts the
   * table's {@code commit.retry.*} properties allow, is made again from a new operation ({@link
   * CommitRetry}), keeping the files written: ingest commits to realtime every second or so, and an
   * attempt of a compaction (which validates against every snapshot since its start) takes longer
   * than one of ingest's, so on object storage it lost all of them in most runs and the whole
   * compaction, its reads and writes, was thrown away and done again at the next check.
   */
  public Result commit() {
    try {
      CommitRetry.onConflict(CommitFailedException.class, attempt -> {
        if (attempt > 1) {
          LOG.info(
              "Compaction {} of {} {}: its commit lost the race for the table's metadata"
                  + " {} times in a row; committing it again (round {} of {})",
              id,
              table.name(),
              branch,
              attempt - 1,
              attempt,
              CommitRetry.ATTEMPTS);
        }
        table
            .newRewrite()
            .toBranch(branch)
            .validateFromSnapshot(validationStart())
            .dataSequenceNumber(start.sequenceNumber())
            .rewriteFiles(new HashSet<>(rewritten), dropped, new HashSet<>(written), Set.of())
            .set(SummaryKeys.MAINTENANCE, "compaction")
            .set(SummaryKeys.COMPACTION_ID, id)
            .validateWith(new NoDataFileRemovedSince(start))
            .commit();
        return null;
      });
    } catch (CommitStateUnknownException e) {
      throw e; // the files may be committed: leave them to the orphan-file removal
    } catch (RuntimeException e) {
      Optional<Optional<Snapshot>> read = landed();
      if (read.isPresent() && read.get().isPresent()) {
        Snapshot landed = read.get().get();
        if (e instanceof CleanableFailure
            && !table.io().newInputFile(landed.manifestListLocation()).exists()) {
          // Reported refused, yet on the branch (a JDBC catalog whose pool ran the update again
          // after a lost connection: 0 rows, so CommitFailedException; the apps' JDBC catalog takes
          // that for committed, JdbcCatalogWithLandedCommits, but another catalog may not); Iceberg
          // then cleaned up after the operation it took for failed, the landed snapshot's manifest
          // list with it.
          // The data files are kept: the branch's head references them.
          throw new IllegalStateException(
              "table " + table.name() + ": compaction " + id
                  + " was reported refused (" + e + ") but is on " + branch + " as snapshot "
                  + landed.snapshotId()
                  + ", and Iceberg deleted that snapshot's manifest list after"
                  + " the reported failure, so " + branch
                  + " cannot be read; no commit can follow it:"
                  + " set " + branch + " back to its parent " + landed.parentId()
                  + " (Iceberg's manageSnapshots().replaceBranch), then ingest and sync go on",
              e);
        }
        // Reported failed, yet on the branch and readable (a REST call whose reply was lost after
        // the server applied it): committed.
        LOG.warn(
            "Compaction {} of {} {}: its commit ended in {}, but it is on the branch as snapshot"
                + " {}; taken as committed",
            id,
            table.name(),
            branch,
            e.toString(),
            landed.snapshotId());
      } else if (e instanceof CleanableFailure && read.isPresent()) {
        // Refused (a conflict, a validation), and not on the branch: deleted.
        written.forEach(f -> table.io().deleteFile(f.location()));
        throw e;
      } else {
        // Not refused and not on the branch (a REST call that timed out may still be applied), or
        // the branch could not be read: deleting the files could leave the branch referencing
        // missing files. Orphan-file removal takes them if the commit did not land.
        LOG.warn(
            "Compaction {} of {} {}: its commit ended in an error that does not say whether it"
                + " landed ({}); its {} new files are kept (orphan-file removal deletes them if"
                + " the commit did not land)",
            id,
            table.name(),
            branch,
            e.toString(),
            written.size());
        throw e;
      }
    }
    Optional<Snapshot> own = own();
    own.ifPresent(this::checkNoDeleteLost); // absent only when its parent expired meanwhile
    Snapshot committed = own.orElse(table.snapshot(branch));
    long bytesIn = rewritten.stream().mapToLong(DataFile::fileSizeInBytes).sum();
    long bytesOut = written.stream().mapToLong(DataFile::fileSizeInBytes).sum();
    return new Result(
        reason,
        committed.snapshotId(),
        rewritten.size(),
        written.size(),
        bytesIn,
        bytesOut,
        rows,
        dropped.size(),
        (System.nanoTime() - startedNanos) / 1_000_000);
  }

  /**
   * Where Iceberg's own check of the commit starts. It looks, on every attempt, for position deletes
   * and deletion vectors added since that snapshot for the files rewritten (equality deletes apply
   * by sequence number, which the rewrite keeps), and it reads the manifest list of every snapshot
   * since to find them: on object storage, a request each, again on every attempt, while ingest
   * adds a snapshot every second. The snapshots since the start that say in their summary that the
   * only delete files they added are equality deletes (ingest's, the truncates') need no such read:
   * the check starts at the branch's head when all of them say so, and at the start otherwise (a
   * summary without Iceberg's counts, a position delete or a vector added), as before. The
   * snapshots committed after the head are checked by Iceberg in full. This trusts the summaries'
   * counts, which the spec leaves optional: Iceberg's Java library writes them on every commit
   * (ingest's, the truncates', Spark's, Flink's), and a writer that keeps the totals but leaves out
   * the added delete files is the one case it would miss (realtime is written by the pipeline).
   */
  private long validationStart() {
    table.refresh();
    Snapshot head = table.snapshot(branch);
    Snapshot s = head;
    while (s != null && s.snapshotId() != start.snapshotId()) {
      if (!onlyEqualityDeletesAdded(s)) {
        return start.snapshotId();
      }
      s = s.parentId() == null ? null : table.snapshot(s.parentId());
    }
    // The start no longer an ancestor (or expired): Iceberg's check from it refuses the commit.
    return s == null ? start.snapshotId() : head.snapshotId();
  }

  /** Whether {@code s}'s summary has Iceberg's counts and says it added no delete files but equality deletes. */
  static boolean onlyEqualityDeletesAdded(Snapshot s) {
    Map<String, String> summary = s.summary();
    if (summary == null || !summary.containsKey(SnapshotSummary.TOTAL_DELETE_FILES_PROP)) {
      return false;
    }
    try {
      long added =
          Long.parseLong(summary.getOrDefault(SnapshotSummary.ADDED_DELETE_FILES_PROP, "0"));
      long equality =
          Long.parseLong(summary.getOrDefault(SnapshotSummary.ADD_EQ_DELETE_FILES_PROP, "0"));
      return added == equality
          && "0".equals(summary.getOrDefault(SnapshotSummary.ADD_POS_DELETE_FILES_PROP, "0"))
          && "0".equals(summary.getOrDefault(SnapshotSummary.ADDED_DVS_PROP, "0"));
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /**
   * This compaction's snapshot on the branch, read again (whether or not its parent is still
   * there); empty inside when it is not on the branch, empty outside when the branch cannot be read.
   */
  private Optional<Optional<Snapshot>> landed() {
    try {
      return Optional.of(onBranch());
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * This compaction's snapshot with its parent: the branch's head, or an ancestor when ingest
   * committed since. Empty when the parent is no longer there to compare with.
   */
  private Optional<Snapshot> own() {
    return onBranch().filter(s -> s.parentId() != null && table.snapshot(s.parentId()) != null);
  }

  /** This compaction's snapshot on the branch, read again, or empty. */
  private Optional<Snapshot> onBranch() {
    table.refresh();
    for (Snapshot s = table.snapshot(branch);
        s != null && s.snapshotId() != start.snapshotId();
        s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      if (id.equals(s.summary().get(SummaryKeys.COMPACTION_ID))) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /**
   * Fails when an equality delete live before the commit, and not one this compaction meant to
   * drop, is not live after it: the rows it deleted would be live again on the branch.
   */
  private void checkNoDeleteLost(Snapshot committed) {
    Set<String> meant = new HashSet<>();
    dropped.forEach(d -> meant.add(d.location()));
    List<String> lost = lostDeletes(table, committed, meant);
    if (!lost.isEmpty()) {
      throw new IllegalStateException("table " + table.name() + ": compaction snapshot "
          + committed.snapshotId() + " on " + branch + " dropped " + lost.size()
          + " equality-delete files it did not mean to drop, so rows they deleted are live again"
          + " there (a bug; report it): " + lost);
    }
  }

  /**
   * The equality-delete files live in {@code committed}'s parent, not in {@code meantToDrop}, that
   * are not live in {@code committed}.
   */
  static List<String> lostDeletes(Table table, Snapshot committed, Set<String> meantToDrop) {
    Set<String> after = new HashSet<>();
    equalityDeletes(table, committed).forEach(d -> after.add(d.location()));
    return equalityDeletes(table, table.snapshot(committed.parentId())).stream()
        .map(DeleteFile::location)
        .filter(l -> !meantToDrop.contains(l) && !after.contains(l))
        .toList();
  }

  /**
   * Refuses the commit when a snapshot after the start removed data files (a TRUNCATE, another
   * compaction): it may have removed the file left in place, and Iceberg would then drop the
   * equality deletes committed meanwhile. Run by Iceberg on every attempt, against the branch as it
   * is then.
   */
  private static final class NoDataFileRemovedSince implements SnapshotAncestryValidator {
    private final Snapshot start;
    private String found = "";

    NoDataFileRemovedSince(Snapshot start) {
      this.start = start;
    }

    @Override
    public boolean validate(Iterable<Snapshot> ancestors) {
      for (Snapshot s : ancestors) {
        if (s.snapshotId() == start.snapshotId()) {
          return true;
        }
        String removed = s.summary().get(SnapshotSummary.DELETED_FILES_PROP);
        if (removed != null && Long.parseLong(removed) > 0) {
          found = "snapshot " + s.snapshotId() + " removed " + removed + " data files since "
              + start.snapshotId() + ", where the compaction started";
          return false;
        }
      }
      found = "the compaction's start " + start.snapshotId() + " is no longer an ancestor";
      return false;
    }

    @Override
    public String errorMessage() {
      return found;
    }
  }

  /** Deletes the files written; for a compaction that will not be committed. */
  public void abort() {
    written.forEach(f -> table.io().deleteFile(f.location()));
  }

  public String reason() {
    return reason;
  }

  public int dataFilesIn() {
    return rewritten.size();
  }

  /** The locations of the data files it rewrites. */
  Set<String> rewrittenLocations() {
    Set<String> locations = new HashSet<>();
    rewritten.forEach(f -> locations.add(f.location()));
    return locations;
  }

  /** The locations of the data files it wrote. */
  Set<String> writtenLocations() {
    Set<String> locations = new HashSet<>();
    written.forEach(f -> locations.add(f.location()));
    return locations;
  }

  public int dataFilesOut() {
    return written.size();
  }

  public int equalityDeletesDropped() {
    return dropped.size();
  }

  public long rows() {
    return rows;
  }

  public Snapshot start() {
    return start;
  }
}
