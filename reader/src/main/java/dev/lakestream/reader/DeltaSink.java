package dev.lakestream.reader;

import org.apache.iceberg.data.Record;

/** Receives the rows of a delta: {@code weight} +1 for a row that appeared, -1 for one that went away. */
@FunctionalInterface
public interface DeltaSink {
  void accept(Record row, int weight);
}
