package dev.lakestream.sync.cycle;

import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertTask;
import java.util.ArrayList;
import java.util.List;

/**
 * Packs a cycle's convert tasks into {@link ConvertGroup}s, in the order given: a group takes tasks
 * until the data files it must read pass {@code groupBytes} or it holds {@code maxFiles} tasks.
 * A task the key index resolved reads nothing, so a cycle resolved by the index is one group (up
 * to {@code maxFiles}), while a cycle that scans many large files is spread over several
 * converters. Each group's deletion vectors go into one Puffin file.
 */
final class ConvertGroups {

  private ConvertGroups() {}

  static List<ConvertGroup> pack(List<ConvertTask> tasks, long groupBytes, int maxFiles) {
    List<ConvertGroup> groups = new ArrayList<>();
    List<ConvertTask> group = new ArrayList<>();
    long bytes = 0;
    for (ConvertTask task : tasks) {
      long cost = task.positions() == null ? Math.max(0, task.dataFile().sizeInBytes()) : 0;
      if (!group.isEmpty() && (group.size() >= maxFiles || bytes + cost > groupBytes)) {
        groups.add(new ConvertGroup(task.table(), task.cycleId(), group));
        group = new ArrayList<>();
        bytes = 0;
      }
      group.add(task);
      bytes += cost;
    }
    if (!group.isEmpty()) {
      groups.add(new ConvertGroup(group.get(0).table(), group.get(0).cycleId(), group));
    }
    return groups;
  }
}
