package dev.lakestream.sync.convert;

import dev.lakestream.common.event.ConvertTask;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.deletes.PositionDeleteIndex;

/**
 * Finds the positions of a data file that a convert task's equality deletes remove, skipping those
 * its current deletion vector already deletes. {@link ScanResolver} reads the file's key column;
 * {@link IndexedPositions} takes what the key index resolved. Both give the same positions.
 */
public interface PositionResolver {

  /** The positions to delete, and what finding them cost. */
  record Resolution(List<Long> positions, long rowsScanned, long bytesRead) {}

  Resolution resolve(Table table, ConvertTask task, DataFile file, PositionDeleteIndex current);

  /** The positions the key index resolved, minus those already deleted: nothing is read. */
  final class IndexedPositions implements PositionResolver {
    @Override
    public Resolution resolve(
        Table table, ConvertTask task, DataFile file, PositionDeleteIndex current) {
      List<Long> out = new ArrayList<>();
      for (long p : new TreeSet<>(task.positions())) {
        if (p < 0 || p >= file.recordCount()) {
          throw new IllegalStateException(
              "the key index gave position " + p + " beyond the " + file.recordCount() + " rows of "
                  + file.location() + " (table " + task.table() + ")");
        }
        if (current == null || !current.isDeleted(p)) {
          out.add(p);
        }
      }
      return new Resolution(out, 0, 0);
    }
  }
}
