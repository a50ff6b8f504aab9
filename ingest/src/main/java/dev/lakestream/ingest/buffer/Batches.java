package dev.lakestream.ingest.buffer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ChangeOp;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.kafka.PartitionText;
import dev.lakestream.ingest.toast.PreviousRows;
import dev.lakestream.ingest.toast.UnavailableValues;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.catalog.TableIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open batches of a task's source partitions, one per partition, on the heap: per key only the
 * latest change survives, the record's bytes without their schema texts ({@link SchemaTexts}).
 *
 * <p>When a later change of a key replaces an earlier one, the values the later one lacks (unchanged
 * TOAST values, Debezium's placeholder) are taken from the earlier one, so nothing the batch knew is
 * lost by keeping only the last change. A key moved away by a primary-key update leaves a
 * moved-out entry for the rest of the batch, holding the row it had, so the create of the new key
 * (which carries placeholders where the old row's values were unchanged) can be filled from it.
 * What the batch cannot fill is left for the flush, which reads the key's current row from the
 * table; a change whose old row can be neither in the batch nor certain in the table is refused.
 *
 * <p>The batches are a cache of the source topics, not a store of their own: after a restart or a
 * rebalance they are read again from the source topic ({@link BatchStarts}, {@link SourceReplay}),
 * so a state store (and its serialization) buys nothing but a local copy. What they hold ({@link
 * #sizeOf}) is bounded per partition by {@code ingest.flush.max.bytes} and per task by {@code
 * ingest.buffer.max.bytes} (the change buffer flushes the task's largest batch that can be flushed
 * when it is reached; one whose flush waits for realtime cannot).
 *
 * <p>Entry keys within a batch: {@code key-json} for changes and {@code SOH key-json} for moved-out
 * keys.
 */
final class Batches {

  /** What is known of one source partition's open batch (rebuilt when a task starts). */
  static final class Batch {
    final String topic;
    final int partition;
    final long openedAtMs;
    /** The Kafka ID of the topic its records were read from (null when unknown). */
    String topicId;

    private final String prefix;
    long keys;
    long bytes;
    /** While the flush waits for the partition's earlier batches, when to look again. */
    long retryAtMs;
    /** When the flush first waited for the partition's earlier batches; -1 when it has not. */
    long postponedSinceMs = -1;
    /**
     * The flush's lookup of previous rows (unchanged TOAST values) where its last attempt stopped,
     * or null. While it is under way, the partition's later records are held back, so the batch
     * does not change under it ({@link SourceReplay#hold}).
     */
    PreviousRows.Lookup lookup;
    /** When the flush's lookup first went on at a later attempt; -1 when none has. */
    long lookingUpSinceMs = -1;
    /** The batch's entries, by entry key, in the order their keys first came. */
    private final Map<String, BufferedChange> entries = new LinkedHashMap<>();
    /**
     * The decoded form of changes held as they came from Kafka, by entry key, so their flush need
     * not decode them again.
     */
    private final Map<String, Admission.Admitted> decoded = new HashMap<>();
    /**
     * Keys whose latest change in the batch is a create (an insert, or a row moved into the key by a
     * primary-key update) of a PostgreSQL transaction ({@link #otherRow}).
     */
    private final Map<String, Created> created = new HashMap<>();

    private Created lastCreated;
    /** The PostgreSQL transaction of the latest change added, -1 when unknown. */
    private long lastTxId = -1;

    Batch(String topic, int partition, long openedAtMs) {
      this.topic = topic;
      this.partition = partition;
      this.openedAtMs = openedAtMs;
      this.prefix = Batches.prefix(topic, partition);
    }

    String prefix() {
      return prefix;
    }

    /**
     * Its turn among the due batches of a punctuation, which flushes the earliest turns first
     * until its time is spent: a batch's opening, or for one whose flush waits for the partition's
     * earlier batches, its last attempt, so that such waits, each attempt a catalog call, do not
     * take every round's time from the batches behind them.
     */
    long flushTurn(long tickMs) {
      return postponedSinceMs < 0 ? openedAtMs : Math.max(openedAtMs, retryAtMs - tickMs);
    }
  }

  /**
   * One entry of a batch: a change, or a moved-out key, as the batch holds it ({@code held}, its
   * schema texts left out). {@code decoded}: the change as admission decoded and converted it from
   * the same bytes, or null (then {@link SchemaTexts#decode} reads it from {@code held}). The
   * record's bytes are put back together only when {@link #change()} is asked for (a dead letter):
   * a flush needs only the decoded changes and their offsets.
   */
  record Entry(
      String key,
      BufferedChange held,
      boolean movedOut,
      Admission.Admitted decoded,
      SchemaTexts schemaTexts) {

    long offset() {
      return held.offset();
    }

    long sourceTsMs() {
      return held.sourceTsMs();
    }

    /** The Debezium key whose current row fills this change's unavailable values, or null. */
    byte[] previousKey() {
      return held.previousKey();
    }

    /** The change with the record's bytes as they came (put together at each call). */
    BufferedChange change() {
      return schemaTexts.expand(held);
    }
  }

  /**
   * The most decoded changes a task keeps for its flushes; the rest are decoded again at their
   * flush. Few: a kept change saves one decode, but it lives as long as its batch, and a change
   * that outlives a young collection is copied by the garbage collector at each one, perhaps into the
   * old generation. With 20,000 per task, benchmark 2 drained a backlog at 5 s flushes about a
   * quarter slower than with 2,000 (docs/benchmarks.md, section 2, eleventh step).
   */
  static final int MAX_DECODED = 2_000;

  /**
   * The most held bytes (payloads, {@link #put}) whose decoded form a task keeps: wide rows or large
   * values reach it before the count (the decoded columns and rows on the heap take a few times the
   * payload's bytes).
   */
  static final long MAX_DECODED_BYTES = 4L << 20;

  /** The heap an entry takes beyond its bytes and its key's text ({@link #sizeOf}). */
  static final int ENTRY_OVERHEAD = 100;

  static final String NEW_KEY_HEADER = "__debezium.newkey";
  private static final Logger LOG = LoggerFactory.getLogger(Batches.class);
  private static final char SEP = '\u0000';
  private static final char MOVED = '\u0001';
  private static final ObjectMapper JSON = new ObjectMapper();

  private final SchemaTexts schemaTexts;
  private final DebeziumDecoder decoder;
  private final UnavailableValues unavailable;
  private final IngestMetrics metrics;
  private final Map<String, Batch> open = new HashMap<>();
  /**
   * Per source partition ({@link #prefix}): the rows its flushed batches moved into keys in the
   * PostgreSQL transaction the last of them ended in, kept until a change of another transaction
   * comes ({@link Carried}).
   */
  private final Map<String, Carried> carried = new HashMap<>();
  /** {@code ingest.deferrable.key.tables}, and whether each table met is listed. */
  private final Set<String> deferrableKeyTables;

  private final Map<TableIdentifier, Boolean> deferrableKey = new HashMap<>();
  /** The bytes of every open batch's entries, as {@link Batch#bytes} counts them. */
  private long bytes;
  /** How many changes the batches keep decoded, and their record bytes. */
  private int decodedCount;

  private long decodedBytes;
  /** {@link #prefix}, built once per run of a partition's records. */
  private final PartitionText prefixes = new PartitionText(Batches::prefix);

  /** {@code schemaTexts}: where the schema texts the batches leave out are kept. */
  Batches(
      SchemaTexts schemaTexts,
      DebeziumDecoder decoder,
      UnavailableValues unavailable,
      IngestMetrics metrics,
      Set<String> deferrableKeyTables) {
    this.schemaTexts = schemaTexts;
    this.decoder = decoder;
    this.unavailable = unavailable;
    this.metrics = metrics;
    this.deferrableKeyTables = deferrableKeyTables;
  }

  /**
   * Adds an entry an earlier version left open in its changelogged store ({@link LegacyBuffers}),
   * under that store's key ({@code topic NUL partition NUL [SOH] key-json}) and with its schema
   * texts left out, as it kept them.
   */
  void restore(String storeKey, BufferedChange stored, long nowMs) {
    int first = storeKey.indexOf(SEP);
    int second = storeKey.indexOf(SEP, first + 1);
    String topic = storeKey.substring(0, first);
    int partition = Integer.parseInt(storeKey.substring(first + 1, second));
    Batch batch = of(topic, partition, nowMs);
    String entryKey = storeKey.substring(second + 1);
    if (entryKey.charAt(0) != MOVED && !batch.entries.containsKey(entryKey)) {
      batch.keys++;
    }
    put(batch, entryKey, schemaTexts.expand(stored));
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
    String keyJson = event.keyJson();
    String prefix = prefixes.of(topic, partition);
    Batch existing = open.get(prefix);
    BufferedChange held = existing == null ? null : existing.entries.get(keyJson);
    // The transaction matters only to a table listed as having a deferrable key.
    long txId = !deferrableKeyTables.isEmpty() && deferrableKey(admitted.table())
        ? event.source().txId()
        : -1;
    Carried carry = carried.get(prefix);
    if (carry != null && carry.txId != txId) {
      carried.remove(prefix); // its transaction has ended
      carry = null;
    }
    if (!event.op().leavesRow() && txId >= 0) {
      Created createdInBatch = held == null ? null : existing.created.get(keyJson);
      BufferedChange createdBefore = held != null
          ? (createdInBatch != null && createdInBatch.txId() == txId ? held : null)
          : carry == null ? null : carry.creates.get(keyJson);
      if (createdBefore != null && otherRow(event, value, schemaTexts.expand(createdBefore))) {
        Batch batch = existing != null ? existing : of(topic, partition, nowMs);
        batch.lastTxId = txId;
        if (movesOut) {
          put(batch, MOVED + keyJson, rowBefore(offset, event, key, value));
        }
        metrics.otherRowDeletes.increment();
        return batch;
      }
    }
    // The key's change replaces what was created in it (marked again below if it is a create),
    // before anything can refuse the change: a refused change leaves no stale mark.
    if (existing != null && !existing.created.isEmpty()) {
      existing.created.remove(keyJson);
    }
    if (carry != null) {
      carry.remove(keyJson);
    }
    Set<String> missing = unavailable.columns(event, oldKey != null);
    // The key's earlier change is put back together only when it is needed.
    BufferedChange previous =
        held != null && (movesOut || !missing.isEmpty()) ? schemaTexts.expand(held) : null;
    BufferedChange change = new BufferedChange(offset, event.source().tsMs(), key, value);
    if (!missing.isEmpty()) {
      change = fillFromBatch(existing, event, change, previous, oldKey, missing);
    }
    // Opened only once the change is known to be added: a refused one leaves no empty batch.
    Batch batch = existing != null ? existing : of(topic, partition, nowMs);
    if (movesOut) {
      BufferedChange moved =
          previous != null && !isDelete(previous) ? previous : BufferedChange.movedOut(offset);
      put(batch, MOVED + keyJson, moved);
    }
    if (held == null) {
      batch.keys++;
    }
    batch.lastTxId = txId;
    if (event.op() == ChangeOp.CREATE && txId >= 0) {
      Created last = batch.lastCreated;
      if (last == null || last.txId() != txId || last.move() != (oldKey != null)) {
        last = new Created(txId, oldKey != null); // one per run of a kind
        batch.lastCreated = last;
      }
      batch.created.put(keyJson, last);
    }
    int size = put(batch, keyJson, change);
    // Only a change stored as it came holds exactly what the event was decoded from.
    if (change.value() == value
        && change.key() == key
        && decodedCount < MAX_DECODED
        && decodedBytes + size <= MAX_DECODED_BYTES) {
      batch.decoded.put(keyJson, admitted);
      decodedCount++;
      decodedBytes += size;
    }
    return batch;
  }

  /**
   * Holds a change under its entry key, its schema texts left out (most of a record's bytes, the
   * same for every record of a table): the record as it came is garbage at once, and the heap holds
   * a third or less of its bytes. Returns the bytes held.
   */
  private int put(Batch batch, String entryKey, BufferedChange change) {
    BufferedChange compact = schemaTexts.compact(change);
    int size = sizeOf(entryKey, compact);
    BufferedChange replaced = batch.entries.put(entryKey, compact);
    if (replaced != null) {
      int old = sizeOf(entryKey, replaced);
      if (batch.decoded.remove(entryKey) != null) {
        decodedCount--;
        decodedBytes -= old; // the decoded change was the one held under this key
      }
      counted(batch, -old);
    }
    counted(batch, size);
    return size;
  }

  /**
   * What an entry holds on the heap, about: its bytes, its key's text, and an allowance for the
   * objects around them (the map's node, the change, the arrays' headers).
   */
  static int sizeOf(String entryKey, BufferedChange held) {
    return held.sizeInBytes() + entryKey.length() + ENTRY_OVERHEAD;
  }

  /** Counts bytes a batch holds, in its {@link Batch#bytes} and in the task's {@link #bytes()}. */
  void counted(Batch batch, long size) {
    batch.bytes += size;
    bytes += size;
  }

  /** The bytes the task's open batches hold. */
  long bytes() {
    return bytes;
  }

  /**
   * The open batch holding the most bytes of those whose flush is not waiting to be tried again at
   * {@code nowMs}, nor looking rows up (its lookup goes on in the punctuation's rounds, and its
   * partition is held back: it does not grow), or null when there is none.
   */
  Batch largest(long nowMs) {
    Batch largest = null;
    for (Batch batch : open.values()) {
      if (batch.retryAtMs <= nowMs
          && batch.lookup == null
          && (largest == null || batch.bytes > largest.bytes)) {
        largest = batch;
      }
    }
    return largest;
  }

  private BufferedChange fillFromBatch(
      Batch batch,
      ChangeEvent event,
      BufferedChange change,
      BufferedChange previous,
      byte[] oldKey,
      Set<String> missing) {
    BufferedChange source;
    byte[] sourceKey;
    if (oldKey != null) {
      sourceKey = normalized(oldKey);
      source = batch == null
          ? null
          : schemaTexts.expand(
              batch.entries.get(MOVED + new String(sourceKey, StandardCharsets.UTF_8)));
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
    List<Entry> out = new ArrayList<>(batch.entries.size());
    batch.entries.forEach((entryKey, held) -> out.add(new Entry(
        entryKey, held, entryKey.charAt(0) == MOVED, batch.decoded.get(entryKey), schemaTexts)));
    return out;
  }

  /**
   * Forgets a flushed batch. With {@code carry} (it was written whole), the rows it moved into keys
   * in the transaction it ended in are kept for that transaction's later changes ({@link
   * #otherRow}).
   */
  void clear(Batch batch, boolean carry) {
    for (String entryKey : batch.decoded.keySet()) {
      decodedCount--;
      decodedBytes -= sizeOf(entryKey, batch.entries.get(entryKey));
    }
    bytes -= batch.bytes;
    open.remove(batch.prefix());
    if (!carry || batch.lastTxId < 0) {
      carried.remove(batch.prefix());
      return;
    }
    Carried kept = carried.get(batch.prefix());
    if (kept == null || kept.txId != batch.lastTxId) {
      kept = new Carried(batch.lastTxId);
    }
    // Only rows moved in: a transaction's inserts (a bulk load) would keep its whole batch.
    for (Map.Entry<String, Created> e : batch.created.entrySet()) {
      if (e.getValue().move() && e.getValue().txId() == batch.lastTxId) {
        kept.put(e.getKey(), batch.entries.get(e.getKey()));
      }
    }
    if (kept.creates.isEmpty()) {
      carried.remove(batch.prefix());
    } else {
      carried.put(batch.prefix(), kept);
    }
  }

  /**
   * Forgets the rows a source partition's transaction inserted or moved into keys ({@link
   * #otherRow}), after one of its changes was refused: the refused change may have been the key's
   * later change, so the partition's deletes apply as they come again, as for a table not listed.
   */
  void forgetCreates(String topic, int partition) {
    String prefix = prefixes.of(topic, partition);
    Batch batch = open.get(prefix);
    if (batch != null) {
      batch.created.clear();
    }
    carried.remove(prefix);
  }

  /** Whether {@code table} is listed in {@code ingest.deferrable.key.tables}. */
  private boolean deferrableKey(TableIdentifier table) {
    return table != null
        && deferrableKey.computeIfAbsent(table, t -> deferrableKeyTables.contains(t.toString()));
  }

  /** A create's PostgreSQL transaction, and whether it ends a primary-key update. */
  private record Created(long txId, boolean move) {}

  /** The most bytes of moved-in rows kept per source partition after their batches are flushed. */
  static final long MAX_CARRIED_BYTES = 32L << 20;

  /**
   * The rows the flushed batches of a source partition moved into keys in the PostgreSQL
   * transaction {@code txId}, by key, oldest first; at most {@link #MAX_CARRIED_BYTES}, the oldest
   * forgotten first (with a warning: a delete that would have met one applies).
   */
  private static final class Carried {
    final long txId;
    final LinkedHashMap<String, BufferedChange> creates = new LinkedHashMap<>();
    private long bytes;
    private boolean warned;

    Carried(long txId) {
      this.txId = txId;
    }

    void put(String key, BufferedChange change) {
      remove(key);
      creates.put(key, change);
      bytes += sizeOf(key, change);
      while (bytes > MAX_CARRIED_BYTES && !creates.isEmpty()) {
        var eldest = creates.entrySet().iterator().next();
        remove(eldest.getKey());
        if (!warned) {
          warned = true;
          LOG.warn(
              "PostgreSQL transaction {} moved more rows into keys of a deferrable-key table than"
                  + " ingest keeps across flushes ({} bytes): a later delete of another row holding"
                  + " one of the forgotten keys removes the row moved in; snapshot the table again"
                  + " if the transaction shifted keys",
              txId,
              MAX_CARRIED_BYTES);
        }
      }
    }

    void remove(String key) {
      BufferedChange removed = creates.remove(key);
      if (removed != null) {
        bytes -= sizeOf(key, removed);
      }
    }
  }

  /**
   * Whether a delete removes a row other than {@code created}, the row the same PostgreSQL
   * transaction inserted or moved into the delete's key before. Under a DEFERRABLE primary key two
   * rows may hold one key until the statement (or, {@code INITIALLY DEFERRED}, the transaction)
   * ends: {@code UPDATE slots SET id = id + 1} moves the row of key 1 into key 2 while the row of
   * key 2 is still there, and Debezium publishes the move of that row to key 3 (the delete of key
   * 2) after the create of key 2. Applied, that delete would remove the row just moved in. A
   * deferrable key cannot be the replica identity, so such a table is published with {@code
   * REPLICA IDENTITY FULL} and the delete carries the whole row it removes: it is another row when
   * a column both rows hold a value of (not Debezium's placeholder) differs. Same transaction and
   * the same row schema only, so both rows were written by one decoder from one table definition;
   * when in doubt (no before-image, nulls, placeholders, other schemas, rows equal in every value)
   * the delete applies, as it always did: under a key that is not deferrable the delete of a key
   * created earlier in the transaction always removes that row.
   */
  private boolean otherRow(ChangeEvent delete, byte[] deleteValue, BufferedChange created) {
    try {
      JsonNode deleteEnvelope = JSON.readTree(deleteValue);
      JsonNode createdEnvelope = JSON.readTree(created.value());
      JsonNode deletePayload = payload(deleteEnvelope);
      JsonNode createdPayload = payload(createdEnvelope);
      if (!"c".equals(createdPayload.path("op").asText())
          || createdPayload.path("source").path("txId").asLong(-2)
              != delete.source().txId()
          || !deleteEnvelope.path("schema").equals(createdEnvelope.path("schema"))
          || !(deletePayload.get("before") instanceof ObjectNode before)
          || !(createdPayload.get("after") instanceof ObjectNode after)) {
        return false;
      }
      Set<String> placeholders = new HashSet<>(unavailable.columns(before, delete.rowSchema()));
      placeholders.addAll(unavailable.columns(after, delete.rowSchema()));
      for (var it = before.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> column = it.next();
        JsonNode was = column.getValue();
        JsonNode now = after.get(column.getKey());
        if (was != null
            && !was.isNull()
            && now != null
            && !now.isNull()
            && !placeholders.contains(column.getKey())
            && !was.equals(now)) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      return false; // the delete applies, as it did before this test
    }
  }

  /**
   * What a moved-out entry holds for the row a delete of another row moved away ({@link
   * #otherRow}): its before-image as the row, when it holds a value in every column; else the
   * marker, so the create of the key it moved to is filled from the table's current row.
   */
  private BufferedChange rowBefore(long offset, ChangeEvent delete, byte[] key, byte[] value) {
    try {
      ObjectNode envelope = (ObjectNode) JSON.readTree(value);
      ObjectNode payload = (ObjectNode) payload(envelope);
      JsonNode before = payload.get("before");
      for (JsonNode column : before) {
        if (column.isNull()) {
          return BufferedChange.movedOut(offset);
        }
      }
      payload.set("after", before);
      payload.put("op", "u");
      return new BufferedChange(
          offset, delete.source().tsMs(), key, JSON.writeValueAsBytes(envelope));
    } catch (IOException | ClassCastException e) {
      return BufferedChange.movedOut(offset);
    }
  }

  private static JsonNode payload(JsonNode envelope) {
    return envelope.has("schema") && envelope.has("payload") ? envelope.get("payload") : envelope;
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
