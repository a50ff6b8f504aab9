package dev.lakestream.sync.cycle;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.event.Unreadable;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.commit.MainCommitter;
import dev.lakestream.sync.diff.Differ;
import dev.lakestream.sync.maintenance.Maintenance;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cycle coordinator of the tables of its partition (its inputs are keyed by table): plans a
 * cycle with the {@link Differ} when realtime moved, sends the convert tasks, gathers the results,
 * commits with the {@link MainCommitter}, and only then plans the next cycle. Never two cycles of
 * one table in flight; however many realtime commits arrived meanwhile, the next cycle takes them
 * all.
 *
 * <p>Realtime-commit events are triggers; a timer ({@code sync.cycle.backstop.ms}) checks every
 * known table too, and asks {@link Maintenance} to check the table's maintenance policies. The cycle in flight and its results are in state stores, so a restart resumes
 * it: results of another cycle are ignored, a cycle found already on main is acknowledged, and a
 * cycle whose base moved is planned again.
 *
 * <p>Nothing one table or one record does stops the others ({@link TableGuard}): an event for a
 * table the pipeline does not manage (not in the catalog, or without the realtime branch and the
 * {@code lakestream.managed} property) goes to the dead-letter topic; a cycle that fails (a convert
 * task that failed, a commit that failed, a result {@link dev.lakestream.sync.commit.CycleChecks}
 * refuses) is abandoned and its table parked and planned again after a backoff; a cycle still
 * waiting for results after {@code sync.cycle.timeout.ms} is abandoned the same way; a table dropped
 * from the catalog is forgotten (re-created, it starts over from its new main). Errors of Kafka
 * itself (a fenced producer, a migrated task) are Kafka Streams' to handle.
 */
public final class CycleCoordinator implements Processor<String, Object, String, Object> {

  public static final String CYCLES = "sync-cycles";
  public static final String RESULTS = "sync-results";
  public static final String TABLES = "sync-tables";
  public static final String INDEX_RESULTS = "sync-index-results";
  public static final String INDEX_TASKS = "sync-index-tasks";
  public static final String TASKS_CHILD = "convert-tasks";
  public static final String LOOKUPS_CHILD = "index-lookups";
  public static final String COMMITS_CHILD = "main-commits";
  public static final String DEAD_LETTER_CHILD = "dead-letters";

  private static final Logger LOG = LoggerFactory.getLogger(CycleCoordinator.class);
  /** Kafka's default max.request.size is 1 MiB: lookups and tasks stay well below it. */
  private static final int MAX_LOOKUP_BYTES = 700_000;
  private static final int MAX_TASK_POSITIONS = 60_000;

  private final SyncConfig config;
  private final TableManager tables;
  private final Maintenance maintenance;
  private final Counter cycles;
  private final Counter replans;
  private final Counter tasksSent;
  private final Counter keysConverted;
  private final Counter reconvertedDeletes;
  private final Counter liveSetDiffs;
  private final DistributionSummary realtimeSnapshotsPerCycle;
  private final Timer cycleTime;
  private final Timer freshness;
  private final Counter filesByIndex;
  private final Counter filesScanned;
  private final Counter filesSkippedByIndex;
  private final Counter lookupsTooLarge;
  private final Health health;
  private final MeterRegistry meters;
  private final Counter deadLettered;
  private final Counter timedOut;
  /** Results counted of the cycle in flight, by table (rebuilt from the store after a restart). */
  private final Map<String, Integer> resultCounts = new HashMap<>();
  /** The cycle in flight by table, as in {@link #CYCLES} (read once, not per result). */
  private final Map<String, CyclePlan> plans = new HashMap<>();
  /**
   * When the cycle in flight of a table last progressed (planned, or a result came back); after a
   * restart, the first check: the time an app was down does not count against the cycle timeout.
   */
  private final Map<String, Long> progressAt = new HashMap<>();
  private TableGuard guard;

  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, CyclePlan> inFlight;
  private KeyValueStore<String, ConvertResult> results;
  private KeyValueStore<String, Long> known;
  private KeyValueStore<String, IndexResult> indexResults;
  private KeyValueStore<String, ConvertTask> indexTasks;

  public CycleCoordinator(
      SyncConfig config, TableManager tables, MeterRegistry meters, Maintenance maintenance, Health health) {
    this.config = config;
    this.health = health;
    this.meters = meters;
    this.deadLettered = meters.counter("lakestream.sync.dead.letters");
    this.timedOut = meters.counter("lakestream.sync.cycles.timed.out");
    this.tables = tables;
    this.maintenance = maintenance;
    this.cycles = meters.counter("lakestream.sync.cycles");
    this.replans = meters.counter("lakestream.sync.replans");
    this.tasksSent = meters.counter("lakestream.sync.convert.tasks");
    this.keysConverted = meters.counter("lakestream.sync.keys.converted");
    this.reconvertedDeletes = meters.counter("lakestream.sync.reconverted.deletes");
    this.liveSetDiffs = meters.counter("lakestream.sync.live.set.diffs");
    this.realtimeSnapshotsPerCycle = meters.summary("lakestream.sync.cycle.realtime.snapshots");
    this.cycleTime = meters.timer("lakestream.sync.cycle.duration");
    this.filesByIndex = meters.counter("lakestream.sync.resolver.files", "resolver", "index");
    this.filesScanned = meters.counter("lakestream.sync.resolver.files", "resolver", "scan");
    this.filesSkippedByIndex = meters.counter("lakestream.sync.index.files.skipped");
    this.lookupsTooLarge = meters.counter("lakestream.sync.index.cycles.scanned");
    this.freshness =
        Timer.builder("lakestream.main.freshness")
            .description("source commit to main commit")
            .publishPercentiles(0.5, 0.95, 0.99)
            .register(meters);
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.inFlight = context.getStateStore(CYCLES);
    this.results = context.getStateStore(RESULTS);
    this.known = context.getStateStore(TABLES);
    if (config.indexEnabled()) {
      this.indexResults = context.getStateStore(INDEX_RESULTS);
      this.indexTasks = context.getStateStore(INDEX_TASKS);
    }
    // A task revived after an aborted transaction is initialized again: nothing in memory survives.
    plans.clear();
    resultCounts.clear();
    taskFileSets.clear();
    progressAt.clear();
    if (guard == null) {
      guard = new TableGuard(health, meters, config.backstopMs(), context.taskId().toString());
    }
    context.schedule(Duration.ofMillis(config.backstopMs()), PunctuationType.WALL_CLOCK_TIME, now -> backstop());
  }

  @Override
  public void process(Record<String, Object> record) {
    Object value = record.value();
    if (value == null) {
      return;
    }
    if (value instanceof Unreadable unreadable) {
      deadLetter(record, "unreadable event: " + unreadable.error());
      return;
    }
    String table = tableOf(value);
    try {
      if (value instanceof RealtimeCommitted committed) {
        onRealtimeCommit(record, committed);
      } else if (value instanceof ConvertResult result) {
        accept(record, result);
      } else if (value instanceof IndexResult result) {
        acceptIndex(result);
      }
    } catch (RuntimeException e) {
      failed(table, "processing a " + value.getClass().getSimpleName() + " " + where(), e);
    }
  }

  private void onRealtimeCommit(Record<String, Object> record, RealtimeCommitted committed) {
    String table = committed.table();
    long now = context.currentSystemTimeMs();
    if (known.get(table) == null) {
      String refusal;
      try {
        refusal = refusal(table);
      } catch (RuntimeException e) {
        known.put(table, now); // the catalog may be down: the backstop checks the table again
        throw e;
      }
      if (refusal != null) {
        deadLetter(record, refusal);
        return;
      }
      known.put(table, now);
      LOG.info("Syncing {} (announced {})", table, where());
    }
    if (plan(table) == null && !guard.isParked(table, now)) {
      startCycle(table);
    }
  }

  /** Why the pipeline must not sync {@code table}, or null when it may. */
  private String refusal(String table) {
    TableIdentifier id;
    try {
      id = TableIdentifier.parse(table);
    } catch (IllegalArgumentException e) {
      return "\"" + table + "\" is not a table name";
    }
    if (!tables.exists(id)) {
      return "no table " + table + " in the catalog";
    }
    if (!TableManager.isManaged(tables.refresh(id))) {
      return "table " + table + " is not managed by lakestream (it has no realtime branch, or no "
          + TableManager.MANAGED + " property and no ingest commits): sync leaves it alone";
    }
    return null;
  }

  private void backstop() {
    List<String> names = new ArrayList<>();
    try (KeyValueIterator<String, Long> it = known.all()) {
      it.forEachRemaining(e -> names.add(e.key));
    }
    long now = context.currentSystemTimeMs();
    for (String table : names) {
      try {
        checkTable(table, now);
      } catch (RuntimeException e) {
        failed(table, "the periodic check", e);
      }
    }
  }

  private void checkTable(String table, long now) {
    CyclePlan plan = plan(table);
    if (plan == null) {
      if (guard.isParked(table, now)) {
        return;
      }
      String refusal = refusal(table);
      if (refusal != null) {
        forget(table, refusal);
        return;
      }
    }
    // Maintenance runs on its own thread (in tests, here), whether a cycle is in flight or not: a
    // compaction it commits is mirrored by the next cycle.
    maintenance.check(table, now);
    if (plan == null) {
      startCycle(table);
      return;
    }
    long idle = now - progressAt.computeIfAbsent(table, t -> now);
    int waiting = plan.taskFiles().size() - resultCount(plan);
    if (idle >= config.cycleTimeoutMs()) {
      timedOut.increment();
      abandon(table);
      guard.failed(table, "cycle " + plan.cycleId() + " timed out: no convert result for " + idle / 1000 + " s ("
          + SyncConfig.CYCLE_TIMEOUT_MS + "), still waiting for " + waiting + " of " + plan.taskFiles().size(), null, now);
    } else if (idle >= config.cycleTimeoutMs() / 5) {
      guard.stalled(table, "cycle " + plan.cycleId() + " has had no convert result for " + idle / 1000 + " s; waiting for "
          + waiting + " of " + plan.taskFiles().size());
    }
  }

  /**
   * The work on {@code table} failed: a table gone from the catalog is forgotten; otherwise its
   * cycle is abandoned and the table parked. Kafka's own errors go to Kafka Streams.
   */
  private void failed(String table, String what, RuntimeException e) {
    if (e instanceof KafkaException || table == null) {
      throw e;
    }
    if (e instanceof NoSuchTableException) {
      forget(table, "it was dropped from the catalog (" + e.getMessage() + ")");
      return;
    }
    abandon(table);
    guard.failed(table, what, e, context.currentSystemTimeMs());
  }

  private void forget(String table, String why) {
    abandon(table);
    known.put(table, null);
    tables.forget(table);
    guard.forget(table, why);
  }

  /** Drops the cycle in flight of {@code table} and everything gathered for it. */
  private void abandon(String table) {
    String prefix = table + '\u0000';
    deletePrefix(results, prefix);
    if (config.indexEnabled()) {
      deletePrefix(indexResults, prefix);
      deletePrefix(indexTasks, prefix);
    }
    inFlight.put(table, null); // put, not delete: delete would read (and parse) the old plan
    plans.remove(table);
    resultCounts.remove(table);
    taskFileSets.remove(table);
    progressAt.remove(table);
  }

  private static <V> void deletePrefix(KeyValueStore<String, V> store, String prefix) {
    List<String> keys = new ArrayList<>();
    try (KeyValueIterator<String, V> it = store.prefixScan(prefix, Serdes.String().serializer())) {
      while (it.hasNext()) {
        keys.add(it.peekNextKey());
        it.next();
      }
    }
    keys.forEach(k -> store.put(k, null));
  }

  private void deadLetter(Record<String, Object> record, String reason) {
    deadLettered.increment();
    Optional<RecordMetadata> meta = context.recordMetadata();
    String topic = meta.map(RecordMetadata::topic).orElse("?");
    int partition = meta.map(RecordMetadata::partition).orElse(-1);
    long offset = meta.map(RecordMetadata::offset).orElse(-1L);
    LOG.warn("Dead-lettering {} of {}-{} at offset {}: {}", record.value().getClass().getSimpleName(), topic, partition,
        offset, reason);
    context.forward(
        new Record<String, Object>(record.key(), record.value(), record.timestamp(),
            DeadLetters.headers(record.headers(), topic, partition, offset, "sync", reason)),
        DEAD_LETTER_CHILD);
  }

  private String where() {
    return context.recordMetadata()
        .map(m -> "from " + m.topic() + "-" + m.partition() + " at offset " + m.offset())
        .orElse("");
  }

  private static String tableOf(Object value) {
    if (value instanceof RealtimeCommitted e) {
      return e.table();
    } else if (value instanceof ConvertResult e) {
      return e.table();
    } else if (value instanceof IndexResult e) {
      return e.table();
    }
    return null;
  }

  /** The cycle in flight of {@code table}, or null. */
  private CyclePlan plan(String table) {
    CyclePlan plan = plans.get(table);
    if (plan == null) {
      plan = inFlight.get(table);
      if (plan != null) {
        plans.put(table, plan);
      }
    }
    return plan;
  }

  private void keep(CyclePlan plan) {
    inFlight.put(plan.table(), plan);
    plans.put(plan.table(), plan);
    progressAt.put(plan.table(), context.currentSystemTimeMs());
  }

  private void startCycle(String tableName) {
    Table table = tables.refresh(TableIdentifier.parse(tableName));
    String cycleId = UUID.randomUUID().toString();
    Optional<Differ.Planned> planned = Differ.plan(table, tableName, cycleId, context.currentSystemTimeMs());
    if (planned.isEmpty()) {
      guard.succeeded(tableName); // nothing to do is healthy too
      return;
    }
    CyclePlan plan = planned.get().plan();
    LOG.debug("Planned cycle {} of {}: {} realtime snapshots, {} data files to add, {} to convert",
        cycleId, tableName, plan.realtimeSnapshots(), plan.addDataFiles().size(), plan.taskFiles().size());
    // With the key index, every cycle that changes main's data files goes through it, so the
    // index learns the new files' keys (and forgets removed files) even when nothing is deleted.
    boolean index = config.resolver(tableName) == SyncConfig.Resolver.INDEX
        && !(planned.get().tasks().isEmpty() && plan.addDataFiles().isEmpty() && plan.removeDataFiles().isEmpty());
    if (index) {
      keep(plan);
      if (lookUp(plan, planned.get().tasks(), planned.get().deleteSequences())) {
        return;
      }
    }
    if (planned.get().tasks().isEmpty()) {
      finish(table, plan, List.of());
      return;
    }
    keep(plan);
    sendTasks(plan, planned.get().tasks());
    filesScanned.increment(planned.get().tasks().size());
  }

  private void sendTasks(CyclePlan plan, List<ConvertTask> tasks) {
    resultCounts.put(plan.table(), 0);
    for (ConvertTask task : tasks) {
      context.forward(new Record<String, Object>(task.dataFilePath(), task, context.currentSystemTimeMs()), TASKS_CHILD);
    }
    tasksSent.increment(tasks.size());
  }

  /**
   * Asks every index partition to resolve the cycle's delete keys; the planned (scanning) tasks wait
   * in a store for the answers: a file every partition has indexed gets the positions they found
   * (or no task when none), any other file is scanned.
   */
  /**
   * Sends the cycle's lookups, one per index partition; false (nothing sent) when a lookup would
   * be too large for one Kafka record (a reconversion of very many deletes, a live-set diff): the
   * cycle then scans, and the files it adds are indexed later by the bootstrap.
   */
  private boolean lookUp(CyclePlan plan, List<ConvertTask> tasks, Map<String, Long> deleteSequences) {
    Map<String, List<String>> taskDeletes = new HashMap<>();
    Map<String, CyclePlan.SequencedFile> deletes = new java.util.LinkedHashMap<>();
    for (ConvertTask task : tasks) {
      taskDeletes.put(task.dataFilePath(), task.deleteFilePaths());
      task.deleteFiles().forEach(d -> {
        String path = d.get("file-path").asText();
        Long sequence = deleteSequences.get(path);
        if (sequence == null) {
          throw new IllegalStateException("cycle " + plan.cycleId() + " of " + plan.table() + ": no sequence number for " + path);
        }
        deletes.putIfAbsent(path, new CyclePlan.SequencedFile(d, sequence));
      });
    }
    List<String> removed = plan.removeDataFiles().stream().map(f -> f.get("file-path").asText()).toList();
    int partitions = config.indexPartitions();
    List<IndexLookup> lookups = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      lookups.add(new IndexLookup(plan.table(), plan.cycleId(), p, partitions, plan.addDataFiles(), removed,
          new ArrayList<>(deletes.values()), taskDeletes));
    }
    int size = lookups.get(0).toJson().length;
    if (size > MAX_LOOKUP_BYTES) {
      LOG.info("Cycle {} of {}: a key-index lookup would take {} bytes (more than {}); scanning {} files this cycle",
          plan.cycleId(), plan.table(), size, MAX_LOOKUP_BYTES, tasks.size());
      lookupsTooLarge.increment();
      return false;
    }
    for (ConvertTask task : tasks) {
      indexTasks.put(resultKey(plan.table(), plan.cycleId(), task.dataFilePath()), task);
    }
    for (IndexLookup lookup : lookups) {
      context.forward(new Record<String, Object>(plan.table(), lookup, context.currentSystemTimeMs()), LOOKUPS_CHILD);
    }
    return true;
  }

  private void acceptIndex(IndexResult result) {
    CyclePlan plan = plan(result.table());
    if (plan == null || !plan.cycleId().equals(result.cycleId())) {
      LOG.debug("Ignoring an index result of cycle {} of {}: not the cycle in flight", result.cycleId(), result.table());
      return;
    }
    String prefix = plan.table() + '\u0000' + plan.cycleId() + '\u0000';
    indexResults.put(prefix + result.partition(), result);
    List<IndexResult> answers = new ArrayList<>();
    try (KeyValueIterator<String, IndexResult> it = indexResults.prefixScan(prefix, Serdes.String().serializer())) {
      it.forEachRemaining(e -> answers.add(e.value));
    }
    if (answers.size() < config.indexPartitions()) {
      return;
    }
    Map<String, Set<Long>> positions = new HashMap<>();
    Set<String> unresolved = new HashSet<>();
    for (IndexResult answer : answers) {
      answer.positions().forEach((path, list) -> positions.computeIfAbsent(path, k -> new HashSet<>()).addAll(list));
      unresolved.addAll(answer.unresolvedFiles());
    }
    List<ConvertTask> tasks = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    int skipped = 0;
    try (KeyValueIterator<String, ConvertTask> it = indexTasks.prefixScan(prefix, Serdes.String().serializer())) {
      while (it.hasNext()) {
        var e = it.next();
        keys.add(e.key);
        ConvertTask task = e.value;
        if (unresolved.contains(task.dataFilePath())) {
          tasks.add(task);
          filesScanned.increment();
        } else if (positions.containsKey(task.dataFilePath())
            && positions.get(task.dataFilePath()).size() > MAX_TASK_POSITIONS) {
          tasks.add(task); // too many positions for one record: scanning the file is as cheap
          filesScanned.increment();
        } else if (positions.containsKey(task.dataFilePath())) {
          tasks.add(task.withPositions(new ArrayList<>(positions.get(task.dataFilePath()))));
          filesByIndex.increment();
        } else {
          skipped++;
        }
      }
    }
    keys.forEach(k -> indexTasks.put(k, null));
    answers.forEach(a -> indexResults.put(prefix + a.partition(), null));
    filesSkippedByIndex.increment(skipped);
    CyclePlan resolved = plan.withTaskFiles(tasks.stream().map(ConvertTask::dataFilePath).toList());
    LOG.debug("Cycle {} of {}: the key index resolved {} files, {} need a scan, {} need nothing",
        plan.cycleId(), plan.table(), tasks.size() - unresolved.size(), unresolved.size(), skipped);
    if (tasks.isEmpty()) {
      finish(tables.refresh(TableIdentifier.parse(plan.table())), resolved, List.of());
      return;
    }
    keep(resolved);
    sendTasks(resolved, tasks);
  }

  private void accept(Record<String, Object> record, ConvertResult result) {
    CyclePlan plan = plan(result.table());
    if (plan == null || !plan.cycleId().equals(result.cycleId())) {
      LOG.debug("Ignoring a result of cycle {} of {}: not the cycle in flight", result.cycleId(), result.table());
      return;
    }
    if (!taskFiles(plan).contains(result.dataFilePath())) {
      deadLetter(record, "cycle " + plan.cycleId() + " of " + plan.table() + " sent no convert task for "
          + result.dataFilePath());
      return;
    }
    if (result.failed()) {
      abandon(plan.table());
      guard.failed(plan.table(), "the convert task of cycle " + plan.cycleId() + " for " + result.dataFilePath()
          + " failed: " + result.error(), null, context.currentSystemTimeMs());
      return;
    }
    progressAt.put(plan.table(), context.currentSystemTimeMs());
    String key = resultKey(result.table(), result.cycleId(), result.dataFilePath());
    boolean fresh = results.get(key) == null;
    Integer counted = resultCounts.get(plan.table());
    results.put(key, result);
    // After a restart the count is not in memory: count the store, which now holds this result.
    int count = counted == null ? countResults(plan) : counted + (fresh ? 1 : 0);
    resultCounts.put(plan.table(), count);
    if (count >= plan.taskFiles().size()) {
      Table table = tables.refresh(TableIdentifier.parse(plan.table()));
      finish(table, plan, resultsOf(plan));
    }
  }

  private record TaskFiles(String cycleId, Set<String> paths) {}

  /** The task files of the table's cycle in flight, as a set (a result is checked against them). */
  private final Map<String, TaskFiles> taskFileSets = new HashMap<>();

  private Set<String> taskFiles(CyclePlan plan) {
    TaskFiles known = taskFileSets.get(plan.table());
    if (known == null || !known.cycleId().equals(plan.cycleId())) {
      known = new TaskFiles(plan.cycleId(), new HashSet<>(plan.taskFiles()));
      taskFileSets.put(plan.table(), known);
    }
    return known.paths();
  }

  private int resultCount(CyclePlan plan) {
    Integer counted = resultCounts.get(plan.table());
    return counted == null ? countResults(plan) : counted;
  }

  private void finish(Table table, CyclePlan plan, List<ConvertResult> cycleResults) {
    Set<String> reported = new HashSet<>();
    cycleResults.forEach(r -> reported.add(r.dataFilePath()));
    if (cycleResults.size() != plan.taskFiles().size() || !reported.equals(new HashSet<>(plan.taskFiles()))) {
      // Committing now would leave a data file's deletes unconverted: a deleted row would come back.
      throw new IllegalStateException(
          "cycle " + plan.cycleId() + " of " + plan.table() + " has " + cycleResults.size() + " results for "
              + plan.taskFiles().size() + " convert tasks; refusing to commit");
    }
    long now = context.currentSystemTimeMs();
    MainCommitter.Outcome outcome = MainCommitter.commit(table, plan, cycleResults, now);
    clear(plan);
    if (outcome instanceof MainCommitter.Committed committed) {
      MainCommitted event = committed.event();
      cycles.increment();
      keysConverted.increment(event.keysConverted());
      reconvertedDeletes.increment(plan.reconvertedDeletes());
      if (plan.liveSetDiff()) {
        liveSetDiffs.increment();
      }
      realtimeSnapshotsPerCycle.record(plan.realtimeSnapshots());
      cycleTime.record(Duration.ofMillis(Math.max(0, now - plan.plannedAtMs())));
      if (event.maxSourceTsMs() > 0) {
        freshness.record(Duration.ofMillis(Math.max(0, now - event.maxSourceTsMs())));
      }
      LOG.info(
          "Synced {} to main snapshot {}: {} realtime snapshots, +{} data files, -{} data files, +{} DVs, -{} DVs, "
              + "{} keys converted in {} files, {} deletes reconverted, cycle {} ms",
          plan.table(), event.mainSnapshotId(), plan.realtimeSnapshots(), event.dataFilesAdded(),
          event.dataFilesRemoved(), event.dvsAdded(), event.dvsRemoved(), event.keysConverted(),
          cycleResults.size(), plan.reconvertedDeletes(), now - plan.plannedAtMs());
      context.forward(new Record<String, Object>(plan.table(), event, now), COMMITS_CHILD);
      guard.succeeded(plan.table());
    } else if (outcome instanceof MainCommitter.AlreadyCommitted already) {
      guard.succeeded(plan.table());
      LOG.info("Cycle {} of {} was already committed as main snapshot {}", plan.cycleId(), plan.table(),
          already.mainSnapshotId());
    } else if (outcome instanceof MainCommitter.MainMoved moved) {
      replans.increment();
      LOG.warn("Main of {} moved since cycle {} was planned (expected {}, found {}); planning again",
          plan.table(), plan.cycleId(), moved.expected(), moved.found());
    }
    startCycle(plan.table());
  }

  private void clear(CyclePlan plan) {
    for (String path : plan.taskFiles()) {
      results.put(resultKey(plan.table(), plan.cycleId(), path), null);
    }
    inFlight.put(plan.table(), null);
    plans.remove(plan.table());
    resultCounts.remove(plan.table());
    taskFileSets.remove(plan.table());
    progressAt.remove(plan.table());
  }

  /** The task moves (or the app stops): its tables' health is for whoever takes them over to report. */
  @Override
  public void close() {
    if (guard != null) {
      guard.clearAll();
    }
  }

  private int countResults(CyclePlan plan) {
    int n = 0;
    try (KeyValueIterator<String, ConvertResult> it =
        results.prefixScan(plan.table() + '\u0000' + plan.cycleId() + '\u0000', Serdes.String().serializer())) {
      while (it.hasNext()) {
        if (it.next().value != null) {
          n++; // an unreadable (spilled) result reads as absent
        }
      }
    }
    return n;
  }

  private List<ConvertResult> resultsOf(CyclePlan plan) {
    List<ConvertResult> out = new ArrayList<>();
    try (KeyValueIterator<String, ConvertResult> it =
        results.prefixScan(plan.table() + '\u0000' + plan.cycleId() + '\u0000', Serdes.String().serializer())) {
      it.forEachRemaining((KeyValue<String, ConvertResult> e) -> {
        if (e.value != null) {
          out.add(e.value);
        }
      });
    }
    return out;
  }

  private static String resultKey(String table, String cycleId, String path) {
    return table + '\u0000' + cycleId + '\u0000' + path;
  }
}
