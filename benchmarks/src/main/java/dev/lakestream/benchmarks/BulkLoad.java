package dev.lakestream.benchmarks;

import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.launcher.PipelineDriver;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.TestTable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;

/**
 * Loads a large initial table fast: the first rows go through ingest (which creates the table),
 * the rest are written as Parquet data files straight onto {@code realtime} (what a connector
 * snapshot turns into, without the per-record cost of the test driver), and sync mirrors them to
 * {@code main} with its own cycle (so the key index, when on, indexes them as usual). The
 * pipeline's model gets every row. Set-up only: no benchmark times it.
 */
final class BulkLoad {

  private BulkLoad() {}

  static void load(
      PipelineDriver pipeline, TestTable table, ChangeStreamGenerator gen, int rows, int fileRows)
      throws Exception {
    pipeline.send(gen.snapshot(1));
    pipeline.ingestCommit();
    pipeline.sync();
    long started = System.nanoTime();
    for (int loaded = 1; loaded < rows; ) {
      int n = Math.min(fileRows, rows - loaded);
      List<Change> changes = gen.snapshot(n);
      pipeline.model(table).applyAll(changes);
      Table t = pipeline.table(table);
      DataFile file = write(t, changes);
      AppendFiles append = t.newAppend().appendFile(file).toBranch(Branches.REALTIME);
      append.commit();
      loaded += n;
      if ((loaded / fileRows) % 10 == 0 || loaded == rows) {
        System.out.printf(
            "  written %,d of %,d rows (%.0f rows/s)%n",
            loaded, rows, loaded / ((System.nanoTime() - started) / 1e9));
      }
    }
    pipeline.syncBackstop();
  }

  private static DataFile write(Table t, List<Change> changes) {
    String path = t.locationProvider().newDataLocation("bulk-" + UUID.randomUUID() + ".parquet");
    try {
      DataWriter<Record> writer = Parquet.writeData(t.io().newOutputFile(path))
          .schema(t.schema())
          .createWriterFunc(GenericParquetWriter::create)
          .withSpec(t.spec())
          .overwrite()
          .build();
      try (writer) {
        GenericRecord record = GenericRecord.create(t.schema());
        for (Change c : changes) {
          Record r = record.copy();
          c.after().forEach(r::setField);
          writer.write(r);
        }
      }
      return writer.toDataFile();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
