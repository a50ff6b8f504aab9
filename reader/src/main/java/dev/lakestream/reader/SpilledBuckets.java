package dev.lakestream.reader;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.iceberg.Schema;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.avro.Avro;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.avro.DataWriter;
import org.apache.iceberg.data.avro.PlannedDataReader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rows of a delta spilled by hash bucket to local Avro files, so that a delta larger than the
 * memory budget is consolidated one bucket at a time after reading its data files once (reading
 * them again for each bucket costs as many reads as there are buckets). Each spilled entry is a row
 * in the delta's schema, with its weight and its identity (the text rows are compared by). The
 * files live in a directory of their own under {@code java.io.tmpdir}, removed on {@link #close}.
 */
final class SpilledBuckets implements Closeable {

  /** One spilled row: its weight, its identity and the row. */
  record Entry(int weight, String identity, Record row) {}

  interface BucketConsumer {
    void accept(int bucket, Iterable<Entry> entries);
  }

  private static final Logger LOG = LoggerFactory.getLogger(SpilledBuckets.class);

  private final Schema spill;
  private final Path dir;
  private final List<Path> files = new ArrayList<>();
  private final List<FileAppender<Record>> writers = new ArrayList<>();
  private long bytesWritten;
  private long rowsWritten;

  SpilledBuckets(Schema rows, int buckets) {
    int id = rows.highestFieldId();
    this.spill = new Schema(
        Types.NestedField.required(id + 1, "weight", Types.IntegerType.get()),
        Types.NestedField.required(id + 2, "identity", Types.StringType.get()),
        Types.NestedField.required(id + 3, "row", rows.asStruct()));
    try {
      this.dir = Files.createTempDirectory("lakestream-delta-");
      for (int b = 0; b < buckets; b++) {
        Path file = dir.resolve("bucket-" + b + ".avro");
        files.add(file);
        writers.add(Avro.write(org.apache.iceberg.Files.localOutput(file.toFile())) // name clash
            .schema(spill)
            // Snappy: Avro's default here is gzip, which took most of a spilled delta's time.
            .set(TableProperties.AVRO_COMPRESSION, "snappy")
            .createWriterFunc(DataWriter::create)
            .build());
      }
    } catch (IOException | RuntimeException e) {
      close();
      throw new IllegalStateException("spilling a delta to local files", e);
    }
  }

  void add(int bucket, int weight, String identity, Record row) {
    GenericRecord entry = GenericRecord.create(spill);
    entry.set(0, weight);
    entry.set(1, identity);
    entry.set(2, row);
    writers.get(bucket).add(entry);
    rowsWritten++;
  }

  /** Ends the writing, then gives each bucket's entries in turn; a bucket's file goes after it. */
  void forEachBucket(BucketConsumer action) {
    closeWriters();
    LOG.info(
        "Spilled {} rows of a delta to {} local files ({} bytes) in {}",
        rowsWritten,
        files.size(),
        bytesWritten,
        dir);
    for (int b = 0; b < files.size(); b++) {
      Path file = files.get(b);
      try (CloseableIterable<Record> read = Avro.read(
              org.apache.iceberg.Files.localInput(file.toFile())) // name clash
          .project(spill)
          .createResolvingReader(PlannedDataReader::create)
          .build()) {
        action.accept(b, () -> {
          Iterator<Record> it = read.iterator();
          return new Iterator<Entry>() {
            @Override
            public boolean hasNext() {
              return it.hasNext();
            }

            @Override
            public Entry next() {
              Record r = it.next();
              return new Entry((Integer) r.get(0), (String) r.get(1), (Record) r.get(2));
            }
          };
        });
        Files.deleteIfExists(file);
      } catch (IOException e) {
        throw new UncheckedIOException("reading back " + file, e);
      }
    }
  }

  /** The directory the files are in (removed on {@link #close}). */
  Path directory() {
    return dir;
  }

  /** Bytes the buckets' files took, once written. */
  long bytesWritten() {
    return bytesWritten;
  }

  private void closeWriters() {
    RuntimeException failed = null;
    for (int b = 0; b < writers.size(); b++) {
      try {
        writers.get(b).close();
        bytesWritten += Files.size(files.get(b));
      } catch (IOException | RuntimeException e) {
        failed = new IllegalStateException("writing a delta's spill files in " + dir, e);
      }
    }
    writers.clear();
    if (failed != null) {
      throw failed;
    }
  }

  /** Closes what is open and removes the files; a file that cannot be removed is logged. */
  @Override
  public void close() {
    try {
      closeWriters();
    } catch (RuntimeException e) {
      LOG.debug("closing the spill files of a failed delta", e);
    }
    if (dir == null) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not remove a delta's spill files in {}: {}", dir, e.toString());
    }
  }
}
