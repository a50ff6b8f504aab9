package dev.lakestream.sync.index;

import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.KeyColumns;
import dev.lakestream.common.iceberg.TableManager;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key index's processor: one task per partition of the index-lookups topic, its {@link
 * KeyIndex} in the changelogged store {@value #STORE} (so it survives restarts, moves with the task
 * when instances scale, and has standby replicas with {@code num.standby.replicas}). Answers each
 * cycle's {@link IndexLookup} with an {@link IndexResult} to the coordinator, keyed by table.
 *
 * <p>Bootstrap: a timer indexes, a bounded slice at a time, the files on main that a partition has
 * not indexed (a table synced before the index was turned on, or an index lost with its changelog),
 * logging progress. Until a file is indexed, cycles scan it, so neither ingest nor sync waits.
 */
public final class KeyIndexProcessor
    implements Processor<String, IndexLookup, String, IndexResult> {

  public static final String STORE = "key-index";

  private static final Logger LOG = LoggerFactory.getLogger(KeyIndexProcessor.class);

  private final TableManager tables;
  private final long bootstrapIntervalMs;
  private final long bootstrapBudgetMs;
  private final boolean commitOnHandoff;
  private final Counter lookups;
  private final Counter keysIndexed;
  private final Counter deleteKeys;
  private final Counter positions;
  private final Counter unresolved;
  private final Counter bytesRead;
  private final Counter filesRead;
  private final Counter bootstrapFiles;
  private final Counter bootstrapKeys;
  private final Timer lookupTime;
  private final Map<String, Long> lastProgressLog = new HashMap<>();
  private final Map<String, Long> completeAt = new HashMap<>();
  private ProcessorContext<String, IndexResult> context;
  private KeyIndex index;

  /**
   * @param commitOnHandoff commit the transaction as soon as a lookup's result is out ({@link
   *     dev.lakestream.common.config.PipelineConfig#commitOnHandoff()}): the coordinator reads it
   *     only then
   */
  public KeyIndexProcessor(
      TableManager tables,
      MeterRegistry meters,
      long bootstrapIntervalMs,
      long bootstrapBudgetMs,
      boolean commitOnHandoff) {
    this.commitOnHandoff = commitOnHandoff;
    this.tables = tables;
    this.bootstrapIntervalMs = bootstrapIntervalMs;
    this.bootstrapBudgetMs = bootstrapBudgetMs;
    this.lookups = meters.counter("lakestream.sync.index.lookups");
    this.keysIndexed = meters.counter("lakestream.sync.index.keys.indexed");
    this.deleteKeys = meters.counter("lakestream.sync.index.delete.keys");
    this.positions = meters.counter("lakestream.sync.index.positions.resolved");
    this.unresolved = meters.counter("lakestream.sync.index.files.unresolved");
    this.bytesRead = meters.counter("lakestream.sync.index.bytes.read");
    this.filesRead = meters.counter("lakestream.sync.index.files.read");
    this.bootstrapFiles = meters.counter("lakestream.sync.index.bootstrap.files");
    this.bootstrapKeys = meters.counter("lakestream.sync.index.bootstrap.keys");
    this.lookupTime = meters.timer("lakestream.sync.index.lookup.duration");
  }

  @Override
  public void init(ProcessorContext<String, IndexResult> context) {
    this.context = context;
    KeyValueStore<Bytes, byte[]> store = context.getStateStore(STORE);
    this.index = new KeyIndex(store);
    context.schedule(
        Duration.ofMillis(bootstrapIntervalMs),
        PunctuationType.WALL_CLOCK_TIME,
        now -> bootstrap());
  }

  @Override
  public void process(Record<String, IndexLookup> record) {
    IndexLookup lookup = record.value();
    if (lookup == null) {
      return; // a tombstone: nothing to look up
    }
    long started = System.nanoTime();
    IndexResult result;
    try {
      Table table = tables.refresh(TableIdentifier.parse(lookup.table()));
      result = index.lookup(table, lookup);
    } catch (KafkaException e) {
      throw e;
    } catch (RuntimeException e) {
      // Every file of the cycle is scanned instead: slower, never wrong.
      LOG.warn(
          "Key index {} partition {}: lookup of cycle {} failed; its files are scanned",
          lookup.table(),
          lookup.partition(),
          lookup.cycleId(),
          e);
      result = KeyIndex.unresolved(lookup);
    }
    lookupTime.record(Duration.ofNanos(System.nanoTime() - started));
    lookups.increment();
    keysIndexed.increment(result.keysIndexed());
    deleteKeys.increment(result.deleteKeys());
    positions.increment(
        result.positions().values().stream().mapToLong(List::size).sum());
    unresolved.increment(result.unresolvedFiles().size());
    bytesRead.increment(result.bytesRead());
    filesRead.increment(result.filesRead());
    LOG.debug(
        "Key index {} partition {}: cycle {}: {} delete keys, {} files resolved, {} unresolved, {} keys indexed",
        lookup.table(),
        lookup.partition(),
        lookup.cycleId(),
        result.deleteKeys(),
        result.positions().size(),
        result.unresolvedFiles().size(),
        result.keysIndexed());
    context.forward(new Record<>(lookup.table(), result, context.currentSystemTimeMs()));
    if (commitOnHandoff) {
      context.commit();
    }
  }

  /** Indexes main's files that a partition of this store lacks, within the time budget. */
  private void bootstrap() {
    long deadline = System.nanoTime() + bootstrapBudgetMs * 1_000_000;
    boolean progressed = false; // at least one file per step, however small the budget
    for (String t : index.tables()) {
      Table table;
      try {
        // The cached table: each lookup refreshes it, so no catalog call while nothing changes.
        table = tables.table(TableIdentifier.parse(t));
      } catch (RuntimeException e) {
        LOG.warn("Key index: cannot load {} to bootstrap its index: {}", t, e.toString());
        continue;
      }
      Snapshot main = table.snapshot(Branches.MAIN);
      if (main == null || Long.valueOf(main.snapshotId()).equals(completeAt.get(t))) {
        continue;
      }
      try {
        progressed = bootstrap(t, table, main, deadline, progressed);
      } catch (KafkaException e) {
        throw e;
      } catch (RuntimeException e) {
        LOG.warn(
            "Key index: bootstrapping the index of {} failed; it is tried again at the next interval",
            t,
            e);
        continue;
      }
      if (System.nanoTime() > deadline) {
        return;
      }
    }
  }

  /** Indexes what the partitions of {@code t} lack; true when something was indexed. */
  private boolean bootstrap(
      String t, Table table, Snapshot main, long deadline, boolean progressedBefore) {
    boolean progressed = progressedBefore;
    if (!index.sameTable(t, table.uuid().toString())) {
      return progressed; // an earlier index is still being cleared
    }
    {
      boolean complete = true;
      List<DataFile> onMain =
          new ArrayList<>(BranchFiles.liveDataFiles(table, main).values());
      Schema keySchema = KeyColumns.keySchema(table);
      KeyCodec codec = new KeyCodec(keySchema);
      for (var e : index.partitions(t).entrySet()) {
        int p = e.getKey();
        int n = e.getValue();
        int missing = 0;
        for (DataFile file : onMain) {
          if (index.indexed(t, p, file.location())) {
            continue;
          }
          if (progressed && System.nanoTime() > deadline) {
            missing++;
            continue;
          }
          long keys =
              index.index(table, t, p, n, file, file.dataSequenceNumber(), keySchema, codec);
          progressed = true;
          bootstrapFiles.increment();
          bootstrapKeys.increment(keys);
        }
        complete &= missing == 0;
        if (missing > 0 || lastProgressLog.containsKey(t + "/" + p)) {
          long now = System.currentTimeMillis();
          if (missing == 0) {
            LOG.info(
                "Key index of {} partition {}: all {} data files of main indexed",
                t,
                p,
                onMain.size());
            lastProgressLog.remove(t + "/" + p);
          } else if (now - lastProgressLog.getOrDefault(t + "/" + p, 0L) > 10_000) {
            LOG.info(
                "Key index of {} partition {}: bootstrapping from main, {} of {} data files indexed"
                    + " ({} keys indexed so far by this instance); cycles scan the rest meanwhile",
                t,
                p,
                onMain.size() - missing,
                onMain.size(),
                (long) bootstrapKeys.count());
            lastProgressLog.put(t + "/" + p, now);
          }
        }
      }
      if (complete) {
        completeAt.put(t, main.snapshotId());
      }
    }
    return progressed;
  }
}
