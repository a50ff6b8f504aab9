package dev.lakestream.common.event;

import java.util.List;
import java.util.Map;

/**
 * One partition's share of a sync cycle for the key index: the index partition adds the keys of
 * the data files the cycle adds to main, forgets the files it removes, and resolves the keys of
 * the cycle's equality deletes to positions in the files the cycle's convert tasks name (a delete
 * applies to a file only where the planned task pairs them). Sent to topic partition {@code
 * partition} of the index-lookups topic.
 *
 * @param table the table, {@code namespace.name}
 * @param cycleId the cycle
 * @param partition the index partition (keys whose hash falls in it)
 * @param partitions the number of index partitions
 * @param addDataFiles data files the cycle adds to main, with their data sequence numbers
 * @param removeDataFiles paths of data files the cycle removes from main
 * @param deleteFiles the equality-delete files of the cycle's tasks, with their data sequence numbers
 * @param taskDeletes per data file of a convert task, the paths of the deletes paired with it
 * @param tableUuid the UUID of the table the cycle was planned on (null in lookups of versions that
 *     did not send it): a lookup of a table since dropped and made again under its name is not the
 *     new table's to index
 */
public record IndexLookup(
    String table,
    String cycleId,
    int partition,
    int partitions,
    List<CyclePlan.SequencedFile> addDataFiles,
    List<String> removeDataFiles,
    List<CyclePlan.SequencedDelete> deleteFiles,
    Map<String, List<String>> taskDeletes,
    String tableUuid) {

  public static final String TYPE = "index-lookup";
  public static final int VERSION = 1;

  public IndexLookup {
    EventJson.required("table", table);
    EventJson.required("cycleId", cycleId);
    // Every lookup carries these (empty when the cycle has none): one without them is unreadable
    // and dead-lettered, not a lookup that fails the index's thread.
    addDataFiles = List.copyOf(EventJson.required("addDataFiles", addDataFiles));
    removeDataFiles = List.copyOf(EventJson.required("removeDataFiles", removeDataFiles));
    deleteFiles = List.copyOf(EventJson.required("deleteFiles", deleteFiles));
    taskDeletes = Map.copyOf(EventJson.required("taskDeletes", taskDeletes));
  }

  public byte[] toJson() {
    return EventJson.write(TYPE, VERSION, this);
  }

  public static IndexLookup fromJson(byte[] bytes) {
    return EventJson.read(bytes, TYPE, VERSION, IndexLookup.class);
  }
}
