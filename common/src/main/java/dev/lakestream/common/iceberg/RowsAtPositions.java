package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PrimitiveIterator;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.parquet.ParquetSchemaUtil;
import org.apache.iceberg.parquet.ParquetValueReader;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.internal.column.columnindex.OffsetIndex;
import org.apache.parquet.internal.filter2.columnindex.RowRanges;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;

/**
 * Reads some columns of the rows at given positions of a Parquet data file, reading only the pages
 * that hold those rows: each column on its own, with the file's page index (its offset index says
 * which rows each page holds). A point read of a large text column costs a page, not the column.
 *
 * <p>A column made of several Parquet leaves (a struct, a map) is read whole instead: its leaves'
 * pages start at different rows. So is every column of a file written without a page index.
 */
public final class RowsAtPositions {

  /**
   * What a read returned, and the compressed bytes of the pages it read.
   *
   * @param absent the asked-for columns the file does not hold (written before the table had
   *     them): their values in {@code rows} are null because the file has none, not because the
   *     row's value was null
   */
  public record Read(Map<Long, Record> rows, long bytesRead, Set<String> absent) {}

  private RowsAtPositions() {}

  public static Read read(
      FileIO io, ContentFile<?> file, Schema projection, TreeSet<Long> positions) {
    Map<Long, Record> rows = new HashMap<>();
    for (long p : positions) {
      rows.put(p, GenericRecord.create(projection));
    }
    long bytes = 0;
    Set<String> absent = new LinkedHashSet<>();
    // name clash: Iceberg's InputFile, and Parquet's below
    org.apache.iceberg.io.InputFile input = ContentFiles.input(io, file);
    InputFile parquetFile = parquetFile(input);
    ParquetReadOptions options = ParquetReadOptions.builder().build();
    try {
      ParquetMetadata footer;
      try (ParquetFileReader reader = ParquetFileReader.open(parquetFile, options)) {
        footer = reader.getFooter();
      }
      MessageType fileSchema = footer.getFileMetaData().getSchema();
      List<Types.NestedField> columns = projection.columns();
      for (int c = 0; c < columns.size(); c++) {
        Schema one = new Schema(columns.get(c));
        MessageType pruned = ParquetSchemaUtil.pruneColumns(fileSchema, one);
        if (pruned.getColumns().isEmpty()) {
          absent.add(columns.get(c).name());
        } else if (pruned.getColumns().size() == 1) {
          // A reader per column: a reader keeps the page indexes of the columns first asked for.
          try (ParquetFileReader reader =
              ParquetFileReader.open(parquetFile, footer, options, parquetFile.newStream())) {
            bytes += readPages(reader, pruned, one, positions, rows, c);
          }
        } else {
          bytes += readWhole(input, one, positions, rows, c, file);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading rows of " + file.location(), e);
    }
    return new Read(rows, bytes, absent);
  }

  private static long readPages(
      ParquetFileReader reader,
      MessageType pruned,
      Schema one,
      TreeSet<Long> positions,
      Map<Long, Record> rows,
      int field)
      throws IOException {
    reader.setRequestedSchema(pruned);
    String[] path = pruned.getColumns().get(0).getPath();
    ParquetValueReader<Record> values =
        (ParquetValueReader<Record>) GenericParquetReaders.buildReader(one, pruned);
    long bytes = 0;
    long groupStart = 0;
    List<BlockMetaData> groups = reader.getRowGroups();
    for (int g = 0; g < groups.size(); g++) {
      BlockMetaData group = groups.get(g);
      long groupEnd = groupStart + group.getRowCount();
      SortedSet<Long> wanted = positions.subSet(groupStart, groupEnd);
      if (!wanted.isEmpty()) {
        ColumnChunkMetaData chunk = group.getColumns().stream()
            .filter(ch -> Arrays.equals(ch.getPath().toArray(), path))
            .findFirst()
            .orElseThrow();
        OffsetIndex pages = reader.readOffsetIndex(chunk);
        RowRanges ranges;
        if (pages == null) {
          ranges = RowRanges.createSingle(group.getRowCount());
          bytes += chunk.getTotalSize();
        } else {
          TreeSet<Integer> needed = new TreeSet<>();
          for (long p : wanted) {
            needed.add(pageOf(pages, p - groupStart));
          }
          for (int page : needed) {
            bytes += pages.getCompressedPageSize(page);
          }
          ranges = RowRanges.create(
              group.getRowCount(), needed.stream().mapToInt(Integer::intValue).iterator(), pages);
        }
        if (pages != null && flatText(pruned, one)) {
          // Exactly the wanted rows, a page at a time: the column reader skips the others without
          // decoding them (its skipping is reliable within a page, not across skipped pages).
          Map<Integer, SortedSet<Long>> byPage = new TreeMap<>();
          for (long p : wanted) {
            byPage
                .computeIfAbsent(pageOf(pages, p - groupStart), k -> new TreeSet<>())
                .add(p);
          }
          for (SortedSet<Long> ofPage : byPage.values()) {
            PageReadStore store =
                reader.readFilteredRowGroup(g, exactRows(group.getRowCount(), ofPage, groupStart));
            readText(store, pruned, one, ofPage, rows, field);
          }
        } else {
          PageReadStore store = reader.readFilteredRowGroup(g, ranges);
          values.setPageSource(store);
          // No row indexes: the pages cover the whole row group.
          PrimitiveIterator.OfLong rowIndexes = store
              .getRowIndexes()
              .orElseGet(() -> LongStream.range(0, group.getRowCount()).iterator());
          for (long n = 0; n < store.getRowCount(); n++) {
            long position = groupStart + rowIndexes.nextLong();
            Record value = values.read(null);
            if (wanted.contains(position)) {
              rows.get(position).set(field, value.get(0));
            }
          }
        }
      }
      groupStart = groupEnd;
    }
    return bytes;
  }

  /** A top-level string or binary column: one Parquet leaf of binary values, no repetition. */
  private static boolean flatText(MessageType pruned, Schema one) {
    ColumnDescriptor leaf = pruned.getColumns().get(0);
    Type.TypeID type = one.columns().get(0).type().typeId();
    return leaf.getMaxRepetitionLevel() == 0
        && leaf.getPrimitiveType().getPrimitiveTypeName() == PrimitiveType.PrimitiveTypeName.BINARY
        && (type == Type.TypeID.STRING || type == Type.TypeID.BINARY);
  }

  private static void readText(
      PageReadStore store,
      MessageType pruned,
      Schema one,
      SortedSet<Long> wanted,
      Map<Long, Record> rows,
      int field) {
    ColumnDescriptor leaf = pruned.getColumns().get(0);
    ColumnReader column =
        new ColumnReadStoreImpl(store, new IgnoredValues(), pruned, null).getColumnReader(leaf);
    boolean text = one.columns().get(0).type().typeId() == Type.TypeID.STRING;
    for (long position : wanted) {
      Object value = null;
      if (column.getCurrentDefinitionLevel() == leaf.getMaxDefinitionLevel()) {
        Binary binary = column.getBinary();
        value = text ? binary.toStringUsingUTF8() : ByteBuffer.wrap(binary.getBytes());
      }
      column.consume();
      rows.get(position).set(field, value);
    }
  }

  /** Row ranges of exactly {@code wanted} (positions in the file), relative to a row group. */
  private static RowRanges exactRows(long rowCount, SortedSet<Long> wanted, long groupStart) {
    long[] rowsOfGroup = wanted.stream().mapToLong(p -> p - groupStart).toArray();
    OffsetIndex onePerRow = new OffsetIndex() {
      @Override
      public int getPageCount() {
        return rowsOfGroup.length;
      }

      @Override
      public long getOffset(int page) {
        throw new UnsupportedOperationException();
      }

      @Override
      public int getCompressedPageSize(int page) {
        throw new UnsupportedOperationException();
      }

      @Override
      public long getFirstRowIndex(int page) {
        return rowsOfGroup[page];
      }

      @Override
      public long getLastRowIndex(int page, long rowGroupRowCount) {
        return rowsOfGroup[page];
      }
    };
    return RowRanges.create(rowCount, IntStream.range(0, rowsOfGroup.length).iterator(), onePerRow);
  }

  /** The converter a column store asks for; the values are read from the column reader instead. */
  private static final class IgnoredValues extends GroupConverter {
    @Override
    public Converter getConverter(int fieldIndex) {
      return new PrimitiveConverter() {};
    }

    @Override
    public void start() {}

    @Override
    public void end() {}
  }

  /** The page of an offset index that holds row {@code row} of its row group. */
  private static int pageOf(OffsetIndex pages, long row) {
    int low = 0;
    int high = pages.getPageCount() - 1;
    while (low < high) {
      int mid = (low + high + 1) >>> 1;
      if (pages.getFirstRowIndex(mid) <= row) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return low;
  }

  private static long readWhole(
      org.apache.iceberg.io.InputFile input, // name clash
      Schema one,
      TreeSet<Long> positions, // name clash
      Map<Long, Record> rows,
      int field,
      ContentFile<?> file)
      throws IOException {
    long position = 0;
    try (CloseableIterable<Record> read = Parquet.read(input)
        .project(one)
        .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(one, fileSchema))
        .build()) {
      for (Record row : read) {
        if (positions.contains(position)) {
          rows.get(position).set(field, row.get(0));
        }
        position++;
      }
    }
    Map<Integer, Long> sizes = file.columnSizes();
    return sizes == null
        ? file.fileSizeInBytes()
        : sizes.getOrDefault(one.columns().get(0).fieldId(), 0L);
  }

  static InputFile parquetFile(org.apache.iceberg.io.InputFile input) { // name clash
    return new InputFile() {
      @Override
      public long getLength() {
        return input.getLength();
      }

      @Override
      public SeekableInputStream newStream() {
        // name clash: Iceberg's SeekableInputStream, wrapped into Parquet's
        org.apache.iceberg.io.SeekableInputStream in = input.newStream();
        return new DelegatingSeekableInputStream(in) {
          @Override
          public long getPos() throws IOException {
            return in.getPos();
          }

          @Override
          public void seek(long newPos) throws IOException {
            in.seek(newPos);
          }
        };
      }
    };
  }
}
