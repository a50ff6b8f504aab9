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
    void accept(Iterable<Entry> entries);
  }

  private final Schema spill;
  private final Path dir;
  private final List<Path> files = new ArrayList<>();
  private final List<FileAppender<Record>> writers = new ArrayList<>();
  private long bytesWritten;

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
    } catch (IOException e) {
      close();
      throw new UncheckedIOException("spilling a delta to local files", e);
    }
  }

  void add(int bucket, int weight, String identity, Record row) {
    GenericRecord entry = GenericRecord.create(spill);
    entry.set(0, weight);
    entry.set(1, identity);
    entry.set(2, row);
    writers.get(bucket).add(entry);
  }

  /** Ends the writing, then gives each bucket's entries in turn; a bucket's file goes after it. */
  void forEachBucket(BucketConsumer action) {
    closeWriters();
    for (Path file : files) {
      try (CloseableIterable<Record> read = Avro.read(
              org.apache.iceberg.Files.localInput(file.toFile())) // name clash
          .project(spill)
          .createResolvingReader(PlannedDataReader::create)
          .build()) {
        action.accept(() -> {
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
    IOException failed = null;
    for (int b = 0; b < writers.size(); b++) {
      try {
        writers.get(b).close();
        bytesWritten += Files.size(files.get(b));
      } catch (IOException e) {
        failed = e;
      }
    }
    writers.clear();
    if (failed != null) {
      throw new UncheckedIOException("writing a delta's spill files in " + dir, failed);
    }
  }

  @Override
  public void close() {
    try {
      closeWriters();
    } catch (UncheckedIOException e) {
      // the files go below whatever failed
    }
    if (dir == null) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("removing a delta's spill files in " + dir, e);
    }
  }
}
