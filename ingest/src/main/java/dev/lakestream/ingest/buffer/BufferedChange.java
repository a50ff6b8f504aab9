package dev.lakestream.ingest.buffer;

import java.nio.ByteBuffer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The latest change of one key in a batch, as the change buffer holds it: the record
 * bytes (decoded again at flush), where the record came from, and, for a change whose unchanged
 * TOAST values are still to be filled from the table, the key whose current row holds them.
 *
 * @param offset the record's offset in its source partition
 * @param sourceTsMs the source commit time
 * @param key the record key
 * @param value the record value; empty for a {@linkplain #movedOut(long) moved-out marker}
 * @param previousKey the Debezium JSON key (payload only) whose current row fills this change's
 *     unavailable values, when that is not the change's own key (the old key of a primary-key
 *     update); null otherwise
 */
public record BufferedChange(
    long offset, long sourceTsMs, byte[] key, byte[] value, byte[] previousKey) {

  private static final byte[] NONE = new byte[0];

  public BufferedChange(long offset, long sourceTsMs, byte[] key, byte[] value) {
    this(offset, sourceTsMs, key, value, null);
  }

  /** A key moved away by a primary-key update while its current row was already in the table. */
  static BufferedChange movedOut(long offset) {
    return new BufferedChange(offset, -1, NONE, NONE, null);
  }

  boolean isMovedOutMarker() {
    return value.length == 0;
  }

  BufferedChange withValue(byte[] newValue, byte[] newPreviousKey) {
    return new BufferedChange(offset, sourceTsMs, key, newValue, newPreviousKey);
  }

  int sizeInBytes() {
    return 16 + key.length + value.length + (previousKey == null ? 0 : previousKey.length);
  }

  public static Serde<BufferedChange> serde() {
    Serializer<BufferedChange> serializer = (topic, c) -> {
      if (c == null) {
        return null;
      }
      byte[] previous = c.previousKey == null ? NONE : c.previousKey;
      ByteBuffer buf = ByteBuffer.allocate(
          1 + 8 + 8 + 4 + c.key.length + 4 + c.value.length + 4 + previous.length);
      buf.put((byte) 2).putLong(c.offset).putLong(c.sourceTsMs);
      buf.putInt(c.key.length).put(c.key).putInt(c.value.length).put(c.value);
      buf.putInt(c.previousKey == null ? -1 : previous.length).put(previous);
      return buf.array();
    };
    Deserializer<BufferedChange> deserializer = (topic, bytes) -> {
      if (bytes == null) {
        return null;
      }
      ByteBuffer buf = ByteBuffer.wrap(bytes);
      byte version = buf.get();
      if (version != 1 && version != 2) {
        throw new IllegalStateException(
            "change-buffer entry has unknown format version " + version);
      }
      long offset = buf.getLong();
      long ts = buf.getLong();
      byte[] key = new byte[buf.getInt()];
      buf.get(key);
      byte[] value = new byte[buf.getInt()];
      buf.get(value);
      byte[] previousKey = null;
      if (version == 2) {
        int length = buf.getInt();
        if (length >= 0) {
          previousKey = new byte[length];
          buf.get(previousKey);
        }
      }
      return new BufferedChange(offset, ts, key, value, previousKey);
    };
    return Serdes.serdeFrom(serializer, deserializer);
  }
}
