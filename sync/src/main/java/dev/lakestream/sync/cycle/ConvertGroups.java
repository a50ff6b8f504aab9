package dev.lakestream.sync.cycle;

import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertTask;
import java.util.ArrayList;
import java.util.List;

/**
 * Packs a cycle's convert tasks into {@link ConvertGroup}s, in the order given: a group takes tasks
 * until the data files it must read pass {@code groupBytes}, it holds {@code maxFiles} tasks, or its
 * record would pass {@link #MAX_RECORD_BYTES} (positions the key index resolved, equality-delete
 * files listed). A task the key index resolved reads no data file. Each group's deletion vectors go
 * into one Puffin file.
 *
 * <p>Why groups stay small: a stream thread converts one group of each of its convert tasks within
 * one Kafka transaction, which must end within {@code producer.transaction.timeout.ms}; a group's
 * time is about its files times the object store's latency per file read.
 */
final class ConvertGroups {

  /** About what a group's JSON may take; larger records are spilled to a file anyway. */
  static final long MAX_RECORD_BYTES = 2L << 20;

  private ConvertGroups() {}

  static List<ConvertGroup> pack(List<ConvertTask> tasks, long groupBytes, int maxFiles) {
    List<ConvertGroup> groups = new ArrayList<>();
    List<ConvertTask> group = new ArrayList<>();
    long bytes = 0;
    long recordBytes = 0;
    for (ConvertTask task : tasks) {
      long cost = task.positions() == null ? Math.max(0, task.dataFile().sizeInBytes()) : 0;
      long size = recordBytes(task);
      if (!group.isEmpty()
          && (group.size() >= maxFiles
              || bytes + cost > groupBytes
              || recordBytes + size > MAX_RECORD_BYTES)) {
        groups.add(new ConvertGroup(task.table(), task.cycleId(), group));
        group = new ArrayList<>();
        bytes = 0;
        recordBytes = 0;
      }
      group.add(task);
      bytes += cost;
      recordBytes += size;
    }
    if (!group.isEmpty()) {
      groups.add(new ConvertGroup(group.get(0).table(), group.get(0).cycleId(), group));
    }
    return groups;
  }

  /** A task's share of its group's JSON, roughly: its files' metadata and its positions. */
  static long recordBytes(ConvertTask task) {
    return 2_000L
        + 1_000L * task.deleteFiles().size()
        + 8L * (task.positions() == null ? 0 : task.positions().size());
  }
}
