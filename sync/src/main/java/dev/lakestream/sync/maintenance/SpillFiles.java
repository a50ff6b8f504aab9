package dev.lakestream.sync.maintenance;

import dev.lakestream.common.event.SpillingSerde;
import dev.lakestream.common.iceberg.StoreLocations;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the spill files of a table ({@link SpillingSerde}: plans, tasks and results too large for
 * a Kafka record) once they are older than the longest stall the pipeline tolerates, by when no
 * record and no state store refers to them. Lists only the table's spill folder.
 */
final class SpillFiles {

  private static final Logger LOG = LoggerFactory.getLogger(SpillFiles.class);

  private SpillFiles() {}

  static int removeOlderThan(Table table, long olderThanMs) {
    if (!(table.io() instanceof SupportsPrefixOperations listing)) {
      return 0;
    }
    String folder = StoreLocations.folder(table.location()) + SpillingSerde.FOLDER;
    int removed = 0;
    try {
      for (FileInfo f : StoreLocations.files(listing, folder)) {
        if (f.createdAtMillis() < olderThanMs
            && SpillingSerde.isSpillPath(
                StoreLocations.normalize(table.location()),
                StoreLocations.normalize(f.location()))) {
          table.io().deleteFile(f.location());
          removed++;
        }
      }
    } catch (RuntimeException e) {
      // A folder never written is absent: some FileIOs say so by throwing.
      LOG.debug("Listing spill files of {}: {}", table.name(), e.toString());
    }
    if (removed > 0) {
      LOG.info("Removed {} spill files of {} older than the longest stall", removed, table.name());
    }
    return removed;
  }
}
