package dev.lakestream.common.event;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.iceberg.StoreLocations;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.apache.iceberg.Table;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An event serde whose records never pass a size limit: an event whose JSON is larger is written,
 * gzipped, to a file in its table's metadata folder ({@code <table
 * location>/metadata/lakestream-spill/}) and the record carries a pointer to it ({@code
 * {"type":"spilled","v":1,"table":...,"path":...,"bytes":...}}). A sync cycle of any size (tens of
 * thousands of files, an hour of backlog) so fits Kafka's record limit ({@code max.request.size},
 * the broker's {@code message.max.bytes}), in topics and in the changelogs of state stores alike.
 *
 * <p>A pointer is only followed into its own table's spill folder, so a forged pointer reads
 * nothing else. Spill files are never rewritten; maintenance deletes those older than the longest
 * stall the pipeline tolerates ({@code lakestream.max.stall.ms}), by when no record refers to them.
 * The last few files read are kept in memory (a plan in a state store is read more than once).
 */
public final class SpillingSerde<T> implements Serde<T> {

  private static final Logger LOG = LoggerFactory.getLogger(SpillingSerde.class);
  public static final String TYPE = "spilled";
  public static final String FOLDER = "metadata/lakestream-spill/";
  private static final byte[] POINTER_START =
      ("{\"type\":\"" + TYPE + "\"").getBytes(StandardCharsets.UTF_8);
  private static final int CACHED = 8;

  private final Serde<T> inner;
  private final Function<T, String> tableOf;
  private final Function<String, Table> tables;
  private final int limitBytes;
  private final boolean tolerant;
  private final Map<String, T> cache = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, T> eldest) {
      return size() > CACHED;
    }
  };

  /**
   * @param inner the event's serde
   * @param tableOf the table an event belongs to ({@code namespace.name})
   * @param tables loads a table by name
   * @param limitBytes events larger than this are spilled
   */
  private SpillingSerde(
      Serde<T> inner,
      Function<T, String> tableOf,
      Function<String, Table> tables,
      int limitBytes,
      boolean tolerant) {
    this.inner = inner;
    this.tableOf = tableOf;
    this.tables = tables;
    this.limitBytes = limitBytes;
    this.tolerant = tolerant;
  }

  /** A spilled event that cannot be read (its file or its table gone, a forged pointer). */
  public static final class UnreadableSpill extends IllegalStateException {
    UnreadableSpill(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * The largest record the pipeline writes for a producer whose {@code max.request.size} is {@code
   * maxRequestSize}: half of it (headers, batching and the changelog's own framing need the rest),
   * at most 512 KiB.
   */
  public static int limitFor(int maxRequestSize) {
    return Math.max(1024, Math.min(512 * 1024, maxRequestSize / 2));
  }

  /**
   * Whether {@code path} names a file directly in the table's spill folder: not the folder itself
   * (an object store may list its marker), nothing below it, nothing that climbs out of it.
   */
  public static boolean isSpillPath(String tableLocation, String path) {
    String name = path.startsWith(folder(tableLocation))
        ? path.substring(folder(tableLocation).length())
        : "";
    return !name.isEmpty() && !path.contains("/../") && !name.contains("/");
  }

  private static String folder(String tableLocation) {
    return StoreLocations.folder(tableLocation) + FOLDER;
  }

  @Override
  public Serializer<T> serializer() {
    return (topic, value) -> {
      if (value == null) {
        return null;
      }
      byte[] bytes = inner.serializer().serialize(topic, value);
      if (bytes.length <= limitBytes) {
        return bytes;
      }
      String tableName = tableOf.apply(value);
      Table table = tables.apply(tableName);
      String path = folder(table.location()) + UUID.randomUUID() + ".json.gz";
      try (OutputStream out =
          new GZIPOutputStream(table.io().newOutputFile(path).create())) {
        out.write(bytes);
      } catch (IOException e) {
        throw new UncheckedIOException(
            "spilling a " + bytes.length + "-byte event of " + tableName + " to " + path, e);
      }
      synchronized (cache) {
        cache.put(path, value);
      }
      ObjectNode pointer = EventJson.MAPPER.createObjectNode();
      pointer
          .put("type", TYPE)
          .put("v", 1)
          .put("table", tableName)
          .put("path", path)
          .put("bytes", bytes.length);
      return pointer.toString().getBytes(StandardCharsets.UTF_8);
    };
  }

  @Override
  public Deserializer<T> deserializer() {
    return (topic, bytes) -> {
      if (bytes == null) {
        return null;
      }
      if (!startsWith(bytes, POINTER_START)) {
        return inner.deserializer().deserialize(topic, bytes);
      }
      try {
        return followed(topic, bytes);
      } catch (UnreadableSpill e) {
        if (!tolerant) {
          throw e;
        }
        // In a state store: the entry counts as absent (a cycle is planned again), rather than
        // failing every read of the store.
        LOG.warn("Dropping an unreadable spilled value of a state store: {}", e.getMessage());
        return null;
      }
    };
  }

  private T followed(String topic, byte[] bytes) {
    {
      JsonNode pointer;
      try {
        pointer = EventJson.MAPPER.readTree(bytes);
      } catch (IOException e) {
        throw new UnreadableSpill("unreadable spill pointer: " + e.getMessage(), e);
      }
      String tableName = pointer.path("table").asText(null);
      String path = pointer.path("path").asText(null);
      if (tableName == null || path == null) {
        throw new UnreadableSpill("spill pointer without table or path: " + pointer, null);
      }
      synchronized (cache) {
        T cached = cache.get(path);
        if (cached != null) {
          return cached;
        }
      }
      Table table;
      try {
        table = tables.apply(tableName);
      } catch (RuntimeException e) {
        throw new UnreadableSpill(
            "spilled event " + path + ": cannot load table " + tableName + ": " + e, e);
      }
      if (!isSpillPath(table.location(), path)) {
        throw new UnreadableSpill(
            "spill pointer of " + tableName + " names " + path
                + ", outside the table's spill folder " + folder(table.location()),
            null);
      }
      byte[] json;
      try (InputStream in = new GZIPInputStream(table.io().newInputFile(path).newStream())) {
        json = in.readAllBytes();
      } catch (IOException | RuntimeException e) {
        throw new UnreadableSpill(
            "cannot read spilled event " + path + " of " + tableName + ": " + e.getMessage(), e);
      }
      T value;
      try {
        value = inner.deserializer().deserialize(topic, json);
      } catch (RuntimeException e) {
        throw new UnreadableSpill(
            "spilled event " + path + " of " + tableName + " is unreadable: " + e.getMessage(), e);
      }
      if (!tableName.equals(tableOf.apply(value))) {
        throw new UnreadableSpill(
            "spilled event " + path + " is of table " + tableOf.apply(value) + ", not " + tableName,
            null);
      }
      synchronized (cache) {
        cache.put(path, value);
      }
      return value;
    }
  }

  private static boolean startsWith(byte[] bytes, byte[] prefix) {
    if (bytes.length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (bytes[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }

  /** {@code serde} spilling above {@code limitBytes}, for events that name their table; unreadable spills throw. */
  public static <T> Serde<T> of(
      Serde<T> serde, Function<T, String> tableOf, Function<String, Table> tables, int limitBytes) {
    return new SpillingSerde<>(serde, tableOf, tables, limitBytes, false);
  }

  /** The same for a state store's values: an unreadable spill reads as absent (and is logged). */
  public static <T> Serde<T> forStore(
      Serde<T> serde, Function<T, String> tableOf, Function<String, Table> tables, int limitBytes) {
    return new SpillingSerde<>(serde, tableOf, tables, limitBytes, true);
  }
}
