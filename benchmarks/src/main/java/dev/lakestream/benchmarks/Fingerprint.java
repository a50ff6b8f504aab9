package dev.lakestream.benchmarks;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.launcher.PipelineDriver;
import dev.lakestream.testkit.TestTable;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

/**
 * Main against the model without holding either in memory twice (tables of ten million rows): the
 * row count and an order-independent sum of per-row hashes of every column, streamed.
 */
final class Fingerprint {

  private Fingerprint() {}

  static void check(PipelineDriver pipeline, TestTable table) throws Exception {
    Table t = pipeline.table(table);
    List<String> columns =
        t.schema().columns().stream().map(Types.NestedField::name).toList();
    long mainRows = 0;
    long mainSum = 0;
    try (CloseableIterable<Record> rows = IcebergGenerics.read(t)
        .useSnapshot(t.snapshot(Branches.MAIN).snapshotId())
        .build()) {
      for (Record r : rows) {
        mainRows++;
        mainSum += hash(columns, r::getField);
      }
    }
    long modelRows = 0;
    long modelSum = 0;
    for (Map<String, Object> row : pipeline.model(table).rows().values()) {
      modelRows++;
      modelSum += hash(columns, row::get);
    }
    if (mainRows != modelRows || mainSum != modelSum) {
      throw new IllegalStateException("main differs from the model: " + mainRows + " rows vs "
          + modelRows + (mainSum != modelSum ? ", and the row fingerprints differ" : ""));
    }
  }

  private static long hash(List<String> columns, Function<String, Object> value) {
    long h = 1;
    for (String c : columns) {
      Object v = value.apply(c);
      h = h * 1_000_003L
          + (v instanceof CharSequence s ? s.toString().hashCode() : Objects.hashCode(v));
    }
    // spread (splitmix64) so that sums of many rows do not cancel out
    h += 0x9E3779B97F4A7C15L;
    h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
    h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
    return h ^ (h >>> 31);
  }
}
