package dev.lakestream.reader;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.iceberg.Files;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

/**
 * Where the rows of a snapshot or a delta go: JSON lines to a stream, or one Parquet file, each row
 * with a {@code __weight} column for deltas. Streams: nothing is held but the writer's buffers.
 */
public abstract class RowOutput implements DeltaSink, Consumer<Record>, Closeable {

  public static final String WEIGHT = "__weight";

  protected final Schema schema;
  protected long rows;

  private RowOutput(Schema schema) {
    this.schema = schema;
  }

  /** A delta's rows carry {@link #WEIGHT}: a table with a column of that name cannot be written so. */
  private static void checkWeightFree(Schema schema) {
    if (schema.findField(WEIGHT) != null) {
      throw new IllegalArgumentException("the table has a column named " + WEIGHT
          + ", the name of the weight a delta gives each row: read its snapshots, or select its"
          + " changes with an engine");
    }
  }

  /** JSON lines on {@code out} (not closed with the output). */
  public static RowOutput jsonLines(Schema schema, OutputStream out) {
    return new JsonLines(schema, out);
  }

  /** One Parquet file at {@code path}; {@code weighted} adds the {@code __weight} column. */
  public static RowOutput parquet(Schema schema, Path path, boolean weighted) {
    return new ParquetFile(schema, path, weighted);
  }

  /** A snapshot row, without weight. */
  @Override
  public void accept(Record row) {
    write(row, null);
  }

  /** A delta row. */
  @Override
  public void accept(Record row, int weight) {
    write(row, weight);
  }

  public long rows() {
    return rows;
  }

  protected abstract void write(Record row, Integer weight);

  private static final class JsonLines extends RowOutput {
    private final JsonGenerator gen;

    JsonLines(Schema schema, OutputStream out) {
      super(schema);
      try {
        this.gen = new JsonFactory()
            .createGenerator(out)
            .configure(JsonGenerator.Feature.AUTO_CLOSE_TARGET, false);
        gen.setRootValueSeparator(null);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    protected void write(Record row, Integer weight) {
      if (weight != null && rows == 0) {
        checkWeightFree(schema);
      }
      try {
        RowJson.write(
            gen,
            schema.asStruct(),
            row,
            weight == null ? null : WEIGHT,
            weight == null ? 0 : weight);
        gen.writeRaw('\n');
        rows++;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void close() throws IOException {
      gen.flush();
      gen.close();
    }
  }

  private static final class ParquetFile extends RowOutput {
    private final Schema out;
    private final boolean weighted;
    private final FileAppender<Record> appender;

    ParquetFile(Schema schema, Path path, boolean weighted) {
      super(schema);
      this.weighted = weighted;
      List<Types.NestedField> fields = new ArrayList<>(schema.columns());
      if (weighted) {
        checkWeightFree(schema);
        fields.add(Types.NestedField.required(
            schema.highestFieldId() + 1, WEIGHT, Types.IntegerType.get()));
      }
      this.out = new Schema(fields);
      try {
        this.appender = Parquet.write(Files.localOutput(path.toFile()))
            .schema(out)
            .createWriterFunc(GenericParquetWriter::create)
            .overwrite()
            .build();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write " + path, e);
      }
    }

    @Override
    protected void write(Record row, Integer weight) {
      Record r = row;
      if (weighted) {
        GenericRecord w = GenericRecord.create(out);
        for (int i = 0; i < schema.columns().size(); i++) {
          w.set(i, row.get(i));
        }
        w.set(schema.columns().size(), weight == null ? 1 : weight);
        r = w;
      }
      appender.add(r);
      rows++;
    }

    @Override
    public void close() throws IOException {
      appender.close();
    }
  }
}
