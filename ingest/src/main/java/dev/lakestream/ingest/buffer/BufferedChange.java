package dev.lakestream.ingest.buffer;

import java.nio.ByteBuffer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The latest change of one key in a batch, as held in the change buffer's state store: the
 * original record bytes (decoded again at flush) and where the record came from.
 */
public record BufferedChange(long offset, long sourceTsMs, byte[] key, byte[] value) {

  int sizeInBytes() {
    return 16 + key.length + value.length;
  }

  public static Serde<BufferedChange> serde() {
    Serializer<BufferedChange> serializer =
        (topic, c) -> {
          if (c == null) {
            return null;
          }
          ByteBuffer buf = ByteBuffer.allocate(1 + 8 + 8 + 4 + c.key.length + 4 + c.value.length);
          buf.put((byte) 1).putLong(c.offset).putLong(c.sourceTsMs);
          buf.putInt(c.key.length).put(c.key).putInt(c.value.length).put(c.value);
          return buf.array();
        };
    Deserializer<BufferedChange> deserializer =
        (topic, bytes) -> {
          if (bytes == null) {
            return null;
          }
          ByteBuffer buf = ByteBuffer.wrap(bytes);
          byte version = buf.get();
          if (version != 1) {
            throw new IllegalStateException("change-buffer entry has unknown format version " + version);
          }
          long offset = buf.getLong();
          long ts = buf.getLong();
          byte[] key = new byte[buf.getInt()];
          buf.get(key);
          byte[] value = new byte[buf.getInt()];
          buf.get(value);
          return new BufferedChange(offset, ts, key, value);
        };
    return Serdes.serdeFrom(serializer, deserializer);
  }
}
