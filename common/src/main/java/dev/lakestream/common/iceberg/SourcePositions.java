package dev.lakestream.common.iceberg;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types;

/**
 * Where in the source each row of a data file was last changed, kept in the file itself: ingest
 * writes a column that is not part of the table's schema (field id {@link #FIELD_ID}, named {@link
 * #NAME}), so no reader sees it (readers project the table's columns by field id, as they do for a
 * dropped column), while the file's metrics give its lower and upper bounds like any column's. A
 * TRUNCATE at a source position is applied with it: files whose rows all changed before it go
 * whole, files that straddle it are read for the rows before it.
 *
 * <p>A position is the change's source order ({@code SourcePosition.order()}) as big-endian
 * unsigned 8-byte numbers, so byte order is source order. Files written without the column (before
 * it existed, or by another writer) have no bounds for it: their rows count as older than any
 * truncate.
 */
public final class SourcePositions {

  /** A field id far from those a table assigns (from 1 up) and below Iceberg's reserved range. */
  public static final int FIELD_ID = Integer.MAX_VALUE - 10_000;

  public static final String NAME = "_lakestream_source_position";
  public static final Types.NestedField FIELD =
      Types.NestedField.optional(FIELD_ID, NAME, Types.BinaryType.get());

  private SourcePositions() {}

  /** The table's schema with the position column after its own columns: what ingest writes. */
  public static Schema withPosition(Schema schema) {
    List<Types.NestedField> fields = new ArrayList<>(schema.columns());
    fields.add(FIELD);
    return new Schema(fields, schema.identifierFieldIds());
  }

  /** The position of a source order (non-negative numbers), comparable as unsigned bytes. */
  public static ByteBuffer encode(long[] order) {
    ByteBuffer out = ByteBuffer.allocate(order.length * Long.BYTES);
    for (long part : order) {
      out.putLong(part);
    }
    return out.flip();
  }

  /**
   * Whether {@code position} is PostgreSQL's (last commit LSN, LSN), whose changes carry their
   * transaction's commit time; MySQL's and MariaDB's (binlog file, position, row) carry their
   * statement's start, which a change logged before another can have later.
   */
  public static boolean isPostgres(ByteBuffer position) {
    return position.remaining() == 2 * Long.BYTES;
  }

  /**
   * The order of two source orders as {@link #compare(ByteBuffer, ByteBuffer)} orders their
   * encodings: each number unsigned, then the shorter first.
   */
  public static int compare(long[] a, long[] b) {
    for (int i = 0; i < Math.min(a.length, b.length); i++) {
      int c = Long.compareUnsigned(a[i], b[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.length, b.length);
  }

  /** Unsigned byte order: the source order of two encoded positions. */
  public static int compare(ByteBuffer a, ByteBuffer b) {
    ByteBuffer x = a.duplicate();
    ByteBuffer y = b.duplicate();
    while (x.hasRemaining() && y.hasRemaining()) {
      int c = Integer.compare(x.get() & 0xff, y.get() & 0xff);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(x.remaining(), y.remaining());
  }

  /** The lowest position of the file's rows, or null when the file does not record positions. */
  public static ByteBuffer lower(ContentFile<?> file) {
    return bound(file.lowerBounds());
  }

  /** An upper bound of the file's positions (truncated bounds round up), or null. */
  public static ByteBuffer upper(ContentFile<?> file) {
    return bound(file.upperBounds());
  }

  private static ByteBuffer bound(Map<Integer, ByteBuffer> bounds) {
    return bounds == null ? null : bounds.get(FIELD_ID);
  }

  public static String toHex(ByteBuffer position) {
    ByteBuffer b = position.duplicate();
    byte[] bytes = new byte[b.remaining()];
    b.get(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  public static ByteBuffer fromHex(String hex) {
    return ByteBuffer.wrap(HexFormat.of().parseHex(hex));
  }
}
