package dev.lakestream.ingest.buffer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ChangeOp;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.kafka.PartitionText;
import dev.lakestream.ingest.toast.UnavailableValues;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The open batches of a task's source partitions, one per partition, in the change buffer's state
 * store: per key only the latest change survives.
 *
 * <p>When a later change of a key replaces an earlier one, the values the later one lacks (unchanged
 * TOAST values, Debezium's placeholder) are taken from the earlier one, so nothing the batch knew is
 * lost by keeping only the last change. A key moved away by a primary-key update leaves a
 * moved-out entry for the rest of the batch, holding the row it had, so the create of the new key
 * (which carries placeholders where the old row's values were unchanged) can be filled from it.
 * What the batch cannot fill is left for the flush, which reads the key's current row from the
 * table; a change whose old row can be neither in the batch nor certain in the table is refused.
 *
 * <p>Store keys: {@code topic NUL partition NUL key-json} for changes and {@code topic NUL partition
 * NUL SOH key-json} for moved-out keys.
 */
final class Batches {

  /** What is known of one source partition's open batch (rebuilt when a task starts). */
  static final class Batch {
    final String topic;
    final int partition;
    final long openedAtMs;
    private final String prefix;
    long keys;
    long bytes;
    /** While the flush waits for the partition's earlier batches, when to look again. */
    long retryAtMs;

    Batch(String topic, int partition, long openedAtMs) {
      this.topic = topic;
      this.partition = partition;
      this.openedAtMs = openedAtMs;
      this.prefix = Batches.prefix(topic, partition);
    }

    String prefix() {
      return prefix;
    }
  }

  /**
   * One entry of a batch: a change, or a moved-out key, as the store holds it ({@code stored}, its
   * schema texts left out). {@code decoded}: the change as admission decoded and converted it from
   * the same bytes, or null (decode {@link #change()} then). The record's bytes are put back
   * together only when {@link #change()} is asked for: a flush of decoded changes needs only their
   * offsets.
   */
  record Entry(
      String storeKey,
      BufferedChange stored,
      boolean movedOut,
      Admission.Admitted decoded,
      SchemaTexts schemaTexts) {

    long offset() {
      return stored.offset();
    }

    long sourceTsMs() {
      return stored.sourceTsMs();
    }

    /** The Debezium key whose current row fills this change's unavailable values, or null. */
    byte[] previousKey() {
      return stored.previousKey();
    }

    /** The change with the record's bytes as they came (put together at each call). */
    BufferedChange change() {
      return schemaTexts.expand(stored);
    }
  }

  /**
   * The most decoded changes a task keeps for its flushes. A batch of the demo's settings holds a
   * few thousand; a larger one (a long flush interval while draining a backlog) has the rest decoded
   * again at its flush, so the heap holds at most this many trees per task.
   */
  static final int MAX_DECODED = 20_000;

  /**
   * The most record bytes whose decoded form a task keeps: wide rows or large values reach it before
   * the count (the trees and rows on the heap take about one to three times the record's bytes).
   */
  static final long MAX_DECODED_BYTES = 32L << 20;

  static final String NEW_KEY_HEADER = "__debezium.newkey";
  private static final char SEP = '\u0000';
  private static final char MOVED = '\u0001';
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KeyValueStore<String, BufferedChange> store;
  private final SchemaTexts schemaTexts;
  private final DebeziumDecoder decoder;
  private final UnavailableValues unavailable;
  private final IngestMetrics metrics;
  private final Map<String, Batch> open = new HashMap<>();
  /**
   * The size of every entry in the store, by store key: which keys a batch holds is known without
   * reading the store, so a key's first change (most changes) costs one write and no read. It
   * mirrors the store: both change only here, and both are rebuilt when the task is (re)initialized.
   */
  private final Map<String, Integer> sizes = new HashMap<>();
  /**
   * The decoded form of changes stored unchanged (as they came from Kafka), by store key, so their
   * flush need not decode them again. Not rebuilt after a restart: those flushes decode.
   */
  private final Map<String, Admission.Admitted> decoded = new HashMap<>();
  /** The record bytes of the changes {@link #decoded} holds. */
  private long decodedBytes;
  /** {@link #prefix}, built once per run of a partition's records. */
  private final PartitionText prefixes = new PartitionText(Batches::prefix);

  Batches(
      KeyValueStore<String, BufferedChange> store,
      SchemaTexts schemaTexts,
      DebeziumDecoder decoder,
      UnavailableValues unavailable,
      IngestMetrics metrics) {
    this.store = store;
    this.schemaTexts = schemaTexts;
    this.decoder = decoder;
    this.unavailable = unavailable;
    this.metrics = metrics;
  }

  /**
   * Rebuilds the open batches' bookkeeping from the store when a task starts: it holds only what
   * an earlier version left open ({@link LegacyBuffers}); the rest is added again as it is read.
   */
  int restore(long nowMs) {
    try (KeyValueIterator<String, BufferedChange> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<String, BufferedChange> entry = it.next();
        String key = entry.key;
        int first = key.indexOf(SEP);
        int second = key.indexOf(SEP, first + 1);
        String topic = key.substring(0, first);
        int partition = Integer.parseInt(key.substring(first + 1, second));
        Batch batch =
            open.computeIfAbsent(prefix(topic, partition), p -> new Batch(topic, partition, nowMs));
        if (key.charAt(second + 1) != MOVED) {
          batch.keys++;
        }
        int size = schemaTexts.expand(entry.value).sizeInBytes();
        sizes.put(key, size);
        batch.bytes += size;
      }
    }
    return open.size();
  }

  Map<String, Batch> open() {
    return open;
  }

  /** The open batch of a source partition, opened now when there is none. */
  Batch of(String topic, int partition, long nowMs) {
    return open.computeIfAbsent(
        prefixes.of(topic, partition), p -> new Batch(topic, partition, nowMs));
  }

  /**
   * Adds a change to its partition's batch, filling its unavailable values from the batch where it
   * can; returns the batch. {@code newKey}, {@code oldKey}: Debezium's headers of a primary-key
   * update (on its delete and its create), or null.
   */
  Batch add(
      String topic,
      int partition,
      long offset,
      Admission.Admitted admitted,
      byte[] key,
      byte[] value,
      byte[] oldKey,
      boolean movesOut,
      long nowMs) {
    ChangeEvent event = admitted.event();
    String prefix = prefixes.of(topic, partition);
    String keyJson = event.keyJson();
    // One string for the key's entry: its hash is computed once for the maps and the store.
    String storeKey = prefix + keyJson;
    boolean inBatch = sizes.containsKey(storeKey);
    Set<String> missing = event.op() == ChangeOp.UPDATE || oldKey != null
        ? unavailable.columns(event.after(), event.rowSchema())
        : Set.of();
    // The store is read only when the key's earlier change in the batch is needed.
    BufferedChange previous = inBatch && (movesOut || !missing.isEmpty()) ? get(storeKey) : null;
    BufferedChange change = new BufferedChange(offset, event.source().tsMs(), key, value);
    if (!missing.isEmpty()) {
      change = fillFromBatch(prefix, event, change, previous, oldKey, missing);
    }
    // Opened only once the change is known to be added: a refused one leaves no empty batch.
    Batch batch = of(topic, partition, nowMs);
    if (movesOut) {
      BufferedChange moved =
          previous != null && !isDelete(previous) ? previous : BufferedChange.movedOut(offset);
      put(batch, prefix + MOVED + keyJson, moved);
    }
    if (!inBatch) {
      batch.keys++;
    }
    put(batch, storeKey, change);
    // Only a change stored as it came holds exactly what the event was decoded from.
    int size = change.sizeInBytes();
    if (change.value() == value
        && change.key() == key
        && decoded.size() < MAX_DECODED
        && decodedBytes + size <= MAX_DECODED_BYTES) {
      decoded.put(storeKey, admitted);
      decodedBytes += size;
    }
    return batch;
  }

  private void put(Batch batch, String storeKey, BufferedChange change) {
    int size = change.sizeInBytes();
    Integer replaced = sizes.put(storeKey, size);
    if (decoded.remove(storeKey) != null) {
      decodedBytes -= replaced; // the decoded change was the one stored under this key
    }
    if (replaced != null) {
      batch.bytes -= replaced;
    }
    store.put(storeKey, schemaTexts.compact(change));
    batch.bytes += size;
  }

  private BufferedChange get(String storeKey) {
    return schemaTexts.expand(store.get(storeKey));
  }

  private BufferedChange fillFromBatch(
      String prefix,
      ChangeEvent event,
      BufferedChange change,
      BufferedChange previous,
      byte[] oldKey,
      Set<String> missing) {
    BufferedChange source;
    byte[] sourceKey;
    if (oldKey != null) {
      sourceKey = normalized(oldKey);
      source = get(prefix + MOVED + new String(sourceKey, StandardCharsets.UTF_8));
      if (source == null) {
        throw new BadChangeException("the primary-key update to " + event.key() + " (from "
            + new String(oldKey, StandardCharsets.UTF_8)
            + ") left column(s) " + missing
            + " unchanged, and PostgreSQL did not send their values (unchanged"
            + " TOAST values under REPLICA IDENTITY DEFAULT); the old row changed on another partition of the"
            + " topic or in an earlier batch, so they cannot be filled exactly. Set REPLICA IDENTITY FULL on the"
            + " source table so the update carries them");
      }
      if (source.isMovedOutMarker()) {
        return change.withValue(change.value(), sourceKey);
      }
    } else {
      if (previous == null) {
        return change; // the flush fills them from the table's current row
      }
      if (isDelete(previous)) {
        throw new BadChangeException("an update of " + event.key()
            + " follows its delete in the same batch and lacks" + " column(s) " + missing
            + " (unchanged TOAST values): there is no previous row to take them from");
      }
      source = previous;
      sourceKey = null;
    }
    ChangeEvent sourceEvent = decoder.decode(source.key(), source.value()).orElseThrow();
    ObjectNode filled = unavailable.fill(
        event.after(), event.rowSchema(), sourceEvent.after(), sourceEvent.rowSchema(), missing);
    boolean complete = unavailable.columns(filled, event.rowSchema()).isEmpty();
    if (complete) {
      metrics.unavailableFilledInBatch.increment();
    }
    // What is still missing comes from the current row of the key the source's own values came
    // from.
    byte[] stillFrom =
        complete ? null : source.previousKey() != null ? source.previousKey() : sourceKey;
    return change.withValue(withAfter(change.value(), filled), stillFrom);
  }

  private boolean isDelete(BufferedChange change) {
    if (change.isMovedOutMarker()) {
      return false;
    }
    return decoder
        .decode(change.key(), change.value())
        .map(e -> !e.op().leavesRow())
        .orElse(true);
  }

  /** The entries of a batch: its changes and its moved-out keys. */
  List<Entry> entries(Batch batch) {
    List<Entry> out = new ArrayList<>();
    try (KeyValueIterator<String, BufferedChange> it =
        store.prefixScan(batch.prefix(), Serdes.String().serializer())) {
      while (it.hasNext()) {
        KeyValue<String, BufferedChange> e = it.next();
        boolean movedOut = e.key.charAt(batch.prefix().length()) == MOVED;
        // A moved-out key is never among the decoded ones.
        out.add(new Entry(e.key, e.value, movedOut, decoded.get(e.key), schemaTexts));
      }
    }
    return out;
  }

  /** Forgets a flushed batch. */
  void clear(Batch batch, List<Entry> entries) {
    // A put of null deletes without reading the old value first, as delete() would.
    entries.forEach(e -> {
      store.put(e.storeKey(), null);
      Integer size = sizes.remove(e.storeKey());
      if (decoded.remove(e.storeKey()) != null) {
        decodedBytes -= size;
      }
    });
    open.remove(batch.prefix());
  }

  static String prefix(String topic, int partition) {
    return topic + SEP + partition + SEP;
  }

  /**
   * A Debezium JSON key (a header's text) in the form {@link ChangeEvent#keyJson()} has: the same
   * function, so a moved-out entry stored under an event's key is found by the header's.
   */
  static byte[] normalized(byte[] keyJson) {
    try {
      JsonNode key = JSON.readTree(keyJson);
      String text = key instanceof ObjectNode o ? ChangeEvent.keyJson(o) : key.toString();
      return text.getBytes(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new BadChangeException(
          "unreadable primary-key header " + new String(keyJson, StandardCharsets.UTF_8), e);
    }
  }

  /** The record value with its payload's {@code after} replaced. */
  private static byte[] withAfter(byte[] value, ObjectNode after) {
    try {
      ObjectNode envelope = (ObjectNode) JSON.readTree(value);
      JsonNode payload =
          envelope.has("schema") && envelope.has("payload") ? envelope.get("payload") : envelope;
      ((ObjectNode) payload).set("after", after);
      return JSON.writeValueAsBytes(envelope);
    } catch (IOException e) {
      throw new BadChangeException(
          "cannot re-encode the record with its filled values: " + e.getMessage(), e);
    }
  }
}
