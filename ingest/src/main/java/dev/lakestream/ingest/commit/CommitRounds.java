package dev.lakestream.ingest.commit;

import dev.lakestream.common.event.FilesWritten;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Splits pending batches of one table into rounds, one snapshot each, so that a snapshot never
 * holds two batches of the same source partition. Round k holds the k-th oldest batch of every
 * source partition. (An equality delete only removes rows of strictly lower data sequence number,
 * so a second batch of a partition in the same snapshot would fail to delete the first batch's row
 * of the same key. Batches of different partitions touch disjoint keys and may share a snapshot.)
 */
final class CommitRounds {

  private CommitRounds() {}

  static List<List<FilesWritten>> of(List<FilesWritten> batches) {
    Map<String, List<FilesWritten>> byPartition = new TreeMap<>();
    for (FilesWritten batch : batches) {
      byPartition
          .computeIfAbsent(batch.sourcePartitionName(), p -> new ArrayList<>())
          .add(batch);
    }
    List<List<FilesWritten>> rounds = new ArrayList<>();
    for (List<FilesWritten> ofPartition : byPartition.values()) {
      ofPartition.sort(Comparator.comparingLong(FilesWritten::firstOffset));
      for (int i = 0; i < ofPartition.size(); i++) {
        if (rounds.size() <= i) {
          rounds.add(new ArrayList<>());
        }
        rounds.get(i).add(ofPartition.get(i));
      }
    }
    return rounds;
  }
}
