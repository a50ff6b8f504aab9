package dev.lakestream.sync.maintenance;

import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.SummaryKeys;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Expires the snapshots of both branches by their {@link RetentionPolicy}, deleting the files that
 * no remaining snapshot of any branch references (Iceberg's reachability cleanup; main shares
 * realtime's data files, so a file stays while either branch needs it).
 *
 * <p>Besides the policy, a few snapshots are always kept because the pipeline reads them: on
 * realtime, main's watermark and every snapshot after it (sync has not mirrored them yet) and the
 * newest snapshot carrying ingest's committed source offsets; on main, the newest snapshot carrying
 * the watermark, and (for a change log, which ingest appends to main) the newest carrying offsets. Sync survives the expiry of unmirrored snapshots done by other tools too (it then
 * diffs the live file sets), but this expiry does not cause it.
 */
public final class SnapshotExpiry {

  /** What an expiry did. */
  public record Result(int realtimeExpired, int mainExpired, int otherExpired, long durationMs) {
    public int total() {
      return realtimeExpired + mainExpired + otherExpired;
    }
  }

  private SnapshotExpiry() {}

  public static Result run(
      Table table, RetentionPolicy realtime, RetentionPolicy main, long nowMs) {
    long started = System.nanoTime();
    table.refresh();
    Set<Long> keep = new HashSet<>();
    Set<Long> onRealtime = new HashSet<>();
    Set<Long> onMain = new HashSet<>();
    for (SnapshotRef ref : table.refs().values()) {
      keep.add(ref.snapshotId());
    }
    Optional<Long> watermark = BranchFiles.watermark(table);
    List<Snapshot> realtimeChain = ancestry(table, Branches.REALTIME);
    // Until sync has mirrored the table once (no watermark), every realtime snapshot is unmirrored:
    // its first cycle may be under way, adding files a snapshot after the fork still holds.
    boolean unmirrored = true;
    boolean offsetsKept = false;
    for (int i = 0; i < realtimeChain.size(); i++) {
      Snapshot s = realtimeChain.get(i);
      onRealtime.add(s.snapshotId());
      boolean offsets = !offsetsKept && s.summary().containsKey(SummaryKeys.SOURCE_OFFSETS);
      offsetsKept |= offsets;
      if (unmirrored || offsets || retained(realtime, i, s, nowMs)) {
        keep.add(s.snapshotId());
      }
      if (unmirrored && watermark.isPresent() && watermark.get() == s.snapshotId()) {
        unmirrored = false;
      }
    }
    if (unmirrored) {
      // No watermark yet, or it is not among realtime's ancestors (expired by another tool):
      // nothing
      // is known to be mirrored.
      realtimeChain.forEach(s -> keep.add(s.snapshotId()));
    }
    List<Snapshot> mainChain = ancestry(table, Branches.MAIN);
    boolean watermarkKept = false;
    boolean mainOffsetsKept = false;
    for (int i = 0; i < mainChain.size(); i++) {
      Snapshot s = mainChain.get(i);
      onMain.add(s.snapshotId());
      boolean carries = !watermarkKept && s.summary().containsKey(SummaryKeys.REALTIME_SNAPSHOT_ID);
      watermarkKept |= carries;
      // A change log keeps its committed source offsets on main.
      boolean offsets = !mainOffsetsKept && s.summary().containsKey(SummaryKeys.SOURCE_OFFSETS);
      mainOffsetsKept |= offsets;
      if (carries || offsets || retained(main, i, s, nowMs)) {
        keep.add(s.snapshotId());
      }
    }
    long oldest = nowMs - Math.max(realtime.maxSnapshotAgeMs(), main.maxSnapshotAgeMs());
    int realtimeExpired = 0;
    int mainExpired = 0;
    int otherExpired = 0;
    List<Long> expire = new ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      long id = s.snapshotId();
      if (keep.contains(id)) {
        continue;
      }
      if (onRealtime.contains(id) || onMain.contains(id)) {
        expire.add(id);
        if (onRealtime.contains(id)) {
          realtimeExpired++;
        } else {
          mainExpired++;
        }
      } else if (s.timestampMillis() < oldest) {
        expire.add(id);
        otherExpired++;
      }
    }
    if (!expire.isEmpty()) {
      // Only the listed snapshots: the age-based defaults of Iceberg's expiry are switched off.
      // Listing them also makes Iceberg clean up by reachability (a file goes only when no kept
      // snapshot references its path). Its incremental cleanup would delete a Puffin file whose
      // removed vector shares it with live ones: main's converters pack a cycle's vectors in one.
      ExpireSnapshots expiry =
          table.expireSnapshots().expireOlderThan(Long.MIN_VALUE).cleanExpiredFiles(true);
      expire.forEach(expiry::expireSnapshotId);
      expiry.commit();
    }
    return new Result(
        realtimeExpired, mainExpired, otherExpired, (System.nanoTime() - started) / 1_000_000);
  }

  private static boolean retained(RetentionPolicy policy, int index, Snapshot s, long nowMs) {
    return index < policy.minSnapshotsToKeep()
        || s.timestampMillis() >= nowMs - policy.maxSnapshotAgeMs();
  }

  /** The branch's head and its ancestors, newest first. */
  private static List<Snapshot> ancestry(Table table, String branch) {
    List<Snapshot> chain = new ArrayList<>();
    Snapshot head = table.snapshot(branch);
    if (head != null) {
      SnapshotUtil.ancestorsOf(head.snapshotId(), table::snapshot).forEach(chain::add);
    }
    return chain;
  }
}
