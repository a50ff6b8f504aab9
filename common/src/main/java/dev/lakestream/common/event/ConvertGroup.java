package dev.lakestream.common.event;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The convert tasks of one cycle that one converter takes together: it resolves each task's rows,
 * writes the group's deletion vectors into ONE Puffin file, and answers with one {@link
 * ConvertResult} per task. Keyed by its first task's data file, so a cycle's groups spread over the
 * converters.
 *
 * <p>The convert-tasks topic carried single {@link ConvertTask}s before groups existed; {@link
 * #fromJson} reads one of those as a group of one.
 *
 * @param table the table, {@code namespace.name}
 * @param cycleId the cycle of every task in the group
 * @param tasks the tasks, one per data file, at least one
 */
public record ConvertGroup(String table, String cycleId, List<ConvertTask> tasks) {

  public static final String TYPE = "convert-group";
  public static final int VERSION = 1;

  public ConvertGroup {
    EventJson.required("table", table);
    EventJson.required("cycleId", cycleId);
    EventJson.required("tasks", tasks);
    tasks = List.copyOf(tasks);
    if (tasks.isEmpty()) {
      throw new IllegalArgumentException("a convert group has no task");
    }
    Set<String> files = new HashSet<>();
    for (ConvertTask task : tasks) {
      if (!table.equals(task.table()) || !cycleId.equals(task.cycleId())) {
        throw new IllegalArgumentException("a convert group of cycle " + cycleId + " of " + table
            + " holds a task of cycle " + task.cycleId() + " of " + task.table());
      }
      if (!files.add(task.dataFilePath())) {
        throw new IllegalArgumentException("a convert group of cycle " + cycleId + " of " + table
            + " holds two tasks for " + task.dataFilePath());
      }
    }
  }

  /** The group of one task. */
  public static ConvertGroup of(ConvertTask task) {
    return new ConvertGroup(task.table(), task.cycleId(), List.of(task));
  }

  /** The record key: the first task's data file. */
  public String key() {
    return tasks.get(0).dataFilePath();
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  /** A group, or a single task written before groups existed. */
  public static ConvertGroup fromJson(byte[] bytes) {
    String type;
    try {
      JsonNode node = EventJson.MAPPER.readTree(bytes);
      type = node == null ? null : node.path("type").asText(null);
    } catch (IOException e) {
      throw new IllegalArgumentException("unreadable \"" + TYPE + "\" event: " + e.getMessage(), e);
    }
    if (ConvertTask.TYPE.equals(type)) {
      return of(ConvertTask.fromJson(bytes));
    }
    return EventJson.read(bytes, TYPE, VERSION, ConvertGroup.class);
  }
}
