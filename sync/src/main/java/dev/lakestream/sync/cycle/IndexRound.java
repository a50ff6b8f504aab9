package dev.lakestream.sync.cycle;

import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.iceberg.DataFileJson;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key index's round of a cycle ({@code sync.resolver=index}): the lookups the coordinator
 * sends, one per index partition, and what it makes of their answers. A file every partition has
 * indexed gets the positions they found (or no task when none); a file one has not indexed, or with
 * too many positions for one record, is scanned.
 */
final class IndexRound {

  private static final Logger LOG = LoggerFactory.getLogger(IndexRound.class);
  /** A lookup larger than this is not sent: the cycle scans (Kafka's default record limit is 1 MiB). */
  private static final int MAX_LOOKUP_BYTES = 700_000;
  /** A file with more positions to delete than this is scanned instead (as cheap, and a smaller record). */
  private static final int MAX_TASK_POSITIONS = 60_000;

  private final int partitions;
  private final CycleMetrics metrics;

  IndexRound(int partitions, CycleMetrics metrics) {
    this.partitions = partitions;
    this.metrics = metrics;
  }

  /**
   * The cycle's lookups, one per index partition; empty when one would be too large for a record
   * (a reconversion of very many deletes, a live-set diff): the cycle then scans, and the files it
   * adds are indexed later by the bootstrap.
   */
  Optional<List<IndexLookup>> lookups(
      CyclePlan plan,
      List<ConvertTask> tasks,
      Map<String, Long> deleteSequences,
      String tableUuid) {
    Map<String, List<String>> taskDeletes = new HashMap<>();
    Map<String, CyclePlan.SequencedDelete> deletes = new LinkedHashMap<>();
    for (ConvertTask task : tasks) {
      taskDeletes.put(task.dataFilePath(), task.deleteFilePaths());
      task.deleteFiles().forEach(d -> {
        String path = d.path();
        Long sequence = deleteSequences.get(path);
        if (sequence == null) {
          throw new IllegalStateException("cycle " + plan.cycleId() + " of " + plan.table()
              + ": no sequence number for " + path);
        }
        deletes.putIfAbsent(path, new CyclePlan.SequencedDelete(d, sequence));
      });
    }
    List<String> removed =
        plan.removeDataFiles().stream().map(DataFileJson::path).toList();
    List<IndexLookup> lookups = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      lookups.add(new IndexLookup(
          plan.table(),
          plan.cycleId(),
          p,
          partitions,
          plan.addDataFiles(),
          removed,
          new ArrayList<>(deletes.values()),
          taskDeletes,
          tableUuid));
    }
    int size = lookups.get(0).toJson().length;
    if (size > MAX_LOOKUP_BYTES) {
      LOG.info(
          "Cycle {} of {}: a key-index lookup would take {} bytes (more than {}); scanning {} files this cycle",
          plan.cycleId(),
          plan.table(),
          size,
          MAX_LOOKUP_BYTES,
          tasks.size());
      metrics.lookupsTooLarge.increment();
      return Optional.empty();
    }
    return Optional.of(lookups);
  }

  /** Whether every partition has answered. */
  boolean complete(List<IndexResult> answers) {
    return answers.size() >= partitions;
  }

  /** The tasks to send once every partition has answered: resolved, scanning, or none for a file. */
  List<ConvertTask> resolve(CyclePlan plan, List<IndexResult> answers, List<ConvertTask> waiting) {
    Map<String, Set<Long>> positions = new HashMap<>();
    Set<String> unresolved = new HashSet<>();
    for (IndexResult answer : answers) {
      answer.positions().forEach((path, list) -> positions
          .computeIfAbsent(path, k -> new HashSet<>())
          .addAll(list));
      unresolved.addAll(answer.unresolvedFiles());
    }
    List<ConvertTask> tasks = new ArrayList<>();
    int skipped = 0;
    for (ConvertTask task : waiting) {
      Set<Long> found = positions.get(task.dataFilePath());
      if (unresolved.contains(task.dataFilePath())
          || (found != null && found.size() > MAX_TASK_POSITIONS)) {
        tasks.add(task);
        metrics.filesScanned.increment();
      } else if (found != null) {
        tasks.add(task.withPositions(new ArrayList<>(found)));
        metrics.filesByIndex.increment();
      } else {
        skipped++;
      }
    }
    metrics.filesSkippedByIndex.increment(skipped);
    LOG.debug(
        "Cycle {} of {}: the key index resolved {} files, {} need a scan, {} need nothing",
        plan.cycleId(),
        plan.table(),
        tasks.size() - unresolved.size(),
        unresolved.size(),
        skipped);
    return tasks;
  }
}
