package dev.lakestream.sync.cycle;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.CycleInput;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.event.Unreadable;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.sync.SyncConfig;
import dev.lakestream.sync.commit.MainCommitter;
import dev.lakestream.sync.diff.Differ;
import dev.lakestream.sync.maintenance.Maintenance;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cycle coordinator of the tables of its partition (its inputs are keyed by table): plans a
 * cycle with the {@link Differ} when realtime moved, sends the convert tasks in groups ({@link
 * ConvertGroups}: one Puffin file of deletion vectors per group), gathers the results per data file,
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
 *
 * <p>Its parts: {@link CycleStore} (the state of the cycles in flight), {@link IndexRound} (the key
 * index's round of a cycle), {@link TableGuard} (parked tables and health), {@link CycleMetrics}.
 */
public final class CycleCoordinator implements Processor<String, CycleInput, String, Object> {

  public static final String CYCLES = CycleStore.CYCLES;
  public static final String RESULTS = CycleStore.RESULTS;
  public static final String TABLES = CycleStore.TABLES;
  public static final String INDEX_RESULTS = CycleStore.INDEX_RESULTS;
  public static final String INDEX_TASKS = CycleStore.INDEX_TASKS;
  public static final String TASKS_CHILD = "convert-tasks";
  public static final String LOOKUPS_CHILD = "index-lookups";
  public static final String COMMITS_CHILD = "main-commits";
  public static final String DEAD_LETTER_CHILD = "dead-letters";

  private static final Logger LOG = LoggerFactory.getLogger(CycleCoordinator.class);

  private final SyncConfig config;
  private final boolean commitOnHandoff;
  private final TableManager tables;
  private final Maintenance maintenance;
  private final Health health;
  private final MeterRegistry meters;
  private final CycleMetrics metrics;
  private final IndexRound indexRound;
  private TableGuard guard;
  /** The tables whose maintenance this task asked for: forgotten by maintenance when it closes. */
  private final Set<String> maintained = new HashSet<>();

  private final BackstopRounds backstopRounds = new BackstopRounds();
  /** Cycles being planned on this thread now (one commits at once and plans the next). */
  private int chainDepth;
  /** When the outermost of them started. */
  private long chainStartedNanos;

  private ProcessorContext<String, Object> context;
  private CycleStore store;

  public CycleCoordinator(
      SyncConfig config,
      TableManager tables,
      MeterRegistry meters,
      Maintenance maintenance,
      Health health) {
    this.config = config;
    this.commitOnHandoff = config.pipeline().commitOnHandoff();
    this.tables = tables;
    this.maintenance = maintenance;
    this.health = health;
    this.meters = meters;
    this.metrics = new CycleMetrics(meters);
    this.indexRound = new IndexRound(config.indexPartitions(), metrics);
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    // A task revived after an aborted transaction is initialized again: nothing in memory survives.
    this.store = new CycleStore(context, config.indexEnabled());
    if (guard == null) {
      guard =
          new TableGuard(health, meters, config.backstopMs(), context.taskId().toString());
    }
    context.schedule(
        Duration.ofMillis(config.backstopMs()), PunctuationType.WALL_CLOCK_TIME, now -> backstop());
  }

  @Override
  public void process(Record<String, CycleInput> record) {
    CycleInput input = record.value();
    if (input == null) {
      return;
    }
    if (input instanceof Unreadable unreadable) {
      deadLetter(record, "unreadable event: " + unreadable.error());
      return;
    }
    String table = null;
    try {
      if (input instanceof RealtimeCommitted committed) {
        table = committed.table();
        onRealtimeCommit(record, committed);
      } else if (input instanceof ConvertResult result) {
        table = result.table();
        onResult(record, result);
      } else if (input instanceof IndexResult answer) {
        table = answer.table();
        onIndexAnswer(answer);
      }
    } catch (RuntimeException e) {
      failed(table, "processing a " + input.getClass().getSimpleName() + " " + where(), e);
    }
  }

  /** The task moves (or the app stops): its tables' health is for whoever takes them over to report. */
  @Override
  public void close() {
    if (guard != null) {
      guard.clearAll();
    }
    maintained.forEach(maintenance::forget);
    maintained.clear();
  }

  // --- inputs

  private void onRealtimeCommit(Record<String, CycleInput> record, RealtimeCommitted committed) {
    String table = committed.table();
    long now = context.currentSystemTimeMs();
    if (!store.isKnown(table)) {
      String refusal;
      try {
        refusal = refusal(table);
      } catch (RuntimeException e) {
        store.know(table, now); // the catalog may be down: the backstop checks the table again
        throw e;
      }
      if (refusal != null) {
        deadLetter(record, refusal);
        return;
      }
      store.know(table, now);
      LOG.info("Syncing {} (announced {})", table, where());
    }
    metrics.hops.record(Hop.REALTIME_TO_SYNC, committed.committedAtMs(), now);
    if (store.plan(table) == null && !guard.isParked(table, now)) {
      startCycle(table);
    }
  }

  private void onResult(Record<String, CycleInput> record, ConvertResult result) {
    CyclePlan plan = store.plan(result.table());
    if (plan == null || !plan.cycleId().equals(result.cycleId())) {
      LOG.debug(
          "Ignoring a result of cycle {} of {}: not the cycle in flight",
          result.cycleId(),
          result.table());
      return;
    }
    if (!store.asked(plan, result.dataFilePath())) {
      deadLetter(
          record,
          "cycle " + plan.cycleId() + " of " + plan.table() + " sent no convert task for "
              + result.dataFilePath());
      return;
    }
    long now = context.currentSystemTimeMs();
    if (result.failed()) {
      store.abandon(plan.table());
      guard.failed(
          plan.table(),
          "the convert task of cycle " + plan.cycleId() + " for " + result.dataFilePath()
              + " failed: " + result.error(),
          null,
          now);
      return;
    }
    if (store.addResult(plan, result, now) >= plan.taskFiles().size()) {
      finish(tables.refresh(TableIdentifier.parse(plan.table())), plan, store.results(plan));
    }
  }

  private void onIndexAnswer(IndexResult answer) {
    CyclePlan plan = store.plan(answer.table());
    if (plan == null || !plan.cycleId().equals(answer.cycleId())) {
      LOG.debug(
          "Ignoring an index result of cycle {} of {}: not the cycle in flight",
          answer.cycleId(),
          answer.table());
      return;
    }
    if (!store.indexRoundOpen(plan)) {
      LOG.warn(
          "Ignoring a key-index answer of cycle {} of {} from partition {}: the cycle's round was"
              + " resolved already (an answer delivered twice)",
          answer.cycleId(),
          answer.table(),
          answer.partition());
      return;
    }
    List<IndexResult> answers = store.addIndexAnswer(plan, answer);
    if (!indexRound.complete(answers)) {
      return;
    }
    List<ConvertTask> tasks = indexRound.resolve(plan, answers, store.takeIndexRound(plan));
    CyclePlan resolved =
        plan.withTaskFiles(tasks.stream().map(ConvertTask::dataFilePath).toList());
    if (tasks.isEmpty()) {
      finish(tables.refresh(TableIdentifier.parse(plan.table())), resolved, List.of());
      return;
    }
    store.keep(resolved, context.currentSystemTimeMs());
    sendTasks(resolved, tasks);
  }

  // --- the timer

  private void backstop() {
    // One budget for the round and the cycles it commits one after another.
    chainDepth++;
    chainStartedNanos = System.nanoTime();
    int left;
    try {
      left = backstopRounds.run(
          store.knownTables(), config.roundBudgetMs() * 1_000_000, this::checkTableNow);
    } finally {
      chainDepth--;
    }
    if (left > 0) {
      LOG.info(
          "The periodic check of task {} spent {} ms: {} tables left for its next round",
          context.taskId(),
          config.roundBudgetMs(),
          left);
    }
  }

  private void checkTableNow(String table) {
    try {
      checkTable(table, context.currentSystemTimeMs());
    } catch (RuntimeException e) {
      failed(table, "the periodic check", e);
    }
  }

  private void checkTable(String table, long now) {
    CyclePlan plan = store.plan(table);
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
    maintained.add(table);
    if (plan == null) {
      startCycle(table);
      return;
    }
    long idle = store.idleMs(table, now);
    int waiting = plan.taskFiles().size() - store.resultCount(plan);
    if (idle >= config.cycleTimeoutMs()) {
      metrics.timedOut.increment();
      store.abandon(table);
      guard.failed(
          table,
          "cycle " + plan.cycleId() + " timed out: no convert result for " + idle / 1000 + " s ("
              + SyncConfig.CYCLE_TIMEOUT_MS + "), still waiting for " + waiting + " of "
              + plan.taskFiles().size(),
          null,
          now);
    } else if (idle >= config.cycleTimeoutMs() / 5) {
      guard.stalled(
          table,
          "cycle " + plan.cycleId() + " has had no convert result for " + idle / 1000
              + " s; waiting for " + waiting + " of " + plan.taskFiles().size());
    }
  }

  // --- a cycle

  /**
   * Plans a cycle of {@code tableName} and sends its work, or commits it at once when it has none
   * (which plans the next: a backlog is then committed cycle after cycle, for as long as the
   * round's budget allows).
   */
  private void startCycle(String tableName) {
    if (chainDepth++ == 0) {
      chainStartedNanos = System.nanoTime();
    }
    try {
      planCycle(tableName);
    } finally {
      chainDepth--;
    }
  }

  private void planCycle(String tableName) {
    Table table = tables.refresh(TableIdentifier.parse(tableName));
    String cycleId = UUID.randomUUID().toString();
    long now = context.currentSystemTimeMs();
    Optional<Differ.Planned> planned =
        Differ.plan(table, tableName, cycleId, now, config.cycleMaxSnapshots());
    if (planned.isEmpty()) {
      guard.succeeded(tableName); // nothing to do is healthy too
      return;
    }
    CyclePlan plan = planned.get().plan();
    List<ConvertTask> tasks = planned.get().tasks();
    Snapshot target = table.snapshot(plan.targetRealtimeSnapshotId());
    metrics.hops.record(
        Hop.REALTIME_TO_PLANNED, target == null ? 0 : target.timestampMillis(), now);
    LOG.debug(
        "Planned cycle {} of {}: {} realtime snapshots, {} data files to add, {} to convert",
        cycleId,
        tableName,
        plan.realtimeSnapshots(),
        plan.addDataFiles().size(),
        plan.taskFiles().size());
    // With the key index, every cycle that changes main's data files goes through it, so the
    // index learns the new files' keys (and forgets removed files) even when nothing is deleted.
    boolean index = config.resolver(tableName) == SyncConfig.Resolver.INDEX
        && !(tasks.isEmpty()
            && plan.addDataFiles().isEmpty()
            && plan.removeDataFiles().isEmpty());
    if (index) {
      Optional<List<IndexLookup>> lookups = indexRound.lookups(
          plan, tasks, planned.get().deleteSequences(), table.uuid().toString());
      if (lookups.isPresent()) {
        store.keep(plan, now);
        store.waitForIndex(plan, tasks);
        lookups
            .get()
            .forEach(lookup -> context.forward(
                new Record<String, Object>(plan.table(), lookup, now), LOOKUPS_CHILD));
        handedOff();
        return;
      }
    }
    if (tasks.isEmpty()) {
      finish(table, plan, List.of());
      return;
    }
    store.keep(plan, now);
    sendTasks(plan, tasks);
    metrics.filesScanned.increment(tasks.size());
  }

  private void sendTasks(CyclePlan plan, List<ConvertTask> tasks) {
    store.tasksSent(plan);
    List<ConvertGroup> groups =
        ConvertGroups.pack(tasks, config.convertGroupBytes(), config.convertGroupMaxFiles());
    for (ConvertGroup group : groups) {
      context.forward(
          new Record<String, Object>(group.key(), group, context.currentSystemTimeMs()),
          TASKS_CHILD);
    }
    metrics.tasksSent.increment(tasks.size());
    metrics.groupsSent.increment(groups.size());
    handedOff();
  }

  /**
   * A cycle's lookups or tasks went out: the transaction is committed at once ({@link
   * dev.lakestream.common.config.PipelineConfig#commitOnHandoff()}), since the key index and the
   * converters read them only then.
   */
  private void handedOff() {
    if (commitOnHandoff) {
      context.commit();
    }
  }

  private void finish(Table table, CyclePlan plan, List<ConvertResult> cycleResults) {
    Set<String> reported = new HashSet<>();
    cycleResults.forEach(r -> reported.add(r.dataFilePath()));
    if (cycleResults.size() != plan.taskFiles().size()
        || !reported.equals(new HashSet<>(plan.taskFiles()))) {
      // Committing now would leave a data file's deletes unconverted: a deleted row would come
      // back.
      throw new IllegalStateException(
          "cycle " + plan.cycleId() + " of " + plan.table() + " has " + cycleResults.size()
              + " results for " + plan.taskFiles().size() + " convert tasks; refusing to commit");
    }
    long now = context.currentSystemTimeMs();
    long committing = System.nanoTime();
    MainCommitter.Outcome outcome = MainCommitter.commit(table, plan, cycleResults, now);
    store.clear(plan);
    if (outcome instanceof MainCommitter.Committed committed) {
      MainCommitted event = committed.event();
      metrics.committed(plan, event, now);
      metrics.hops.record(Hop.CONVERTED, plan.plannedAtMs(), now);
      metrics.hops.record(Hop.MAIN_COMMIT, Duration.ofNanos(System.nanoTime() - committing));
      LOG.info(
          "Synced {} to main snapshot {}: {} realtime snapshots, +{} data files, -{} data files, +{} DVs, -{} DVs, "
              + "{} keys converted in {} files, {} deletes reconverted, cycle {} ms",
          plan.table(),
          event.mainSnapshotId(),
          plan.realtimeSnapshots(),
          event.dataFilesAdded(),
          event.dataFilesRemoved(),
          event.dvsAdded(),
          event.dvsRemoved(),
          event.keysConverted(),
          cycleResults.size(),
          plan.reconvertedDeletes(),
          now - plan.plannedAtMs());
      context.forward(new Record<String, Object>(plan.table(), event, now), COMMITS_CHILD);
      guard.succeeded(plan.table());
    } else if (outcome instanceof MainCommitter.AlreadyCommitted already) {
      guard.succeeded(plan.table());
      LOG.info(
          "Cycle {} of {} was already committed as main snapshot {}; announced again (its"
              + " announcement went with the attempt that committed it)",
          plan.cycleId(),
          plan.table(),
          already.event().mainSnapshotId());
      // Its announcement went with the transaction that did not commit (a reader that saw it
      // anyway, under at-least-once, sees it twice).
      context.forward(
          new Record<String, Object>(plan.table(), already.event(), now), COMMITS_CHILD);
    } else if (outcome instanceof MainCommitter.MainMoved moved) {
      metrics.replans.increment();
      LOG.warn(
          "Main of {} moved since cycle {} was planned (expected {}, found {}); planning again",
          plan.table(),
          plan.cycleId(),
          moved.expected(),
          moved.found());
    } else if (outcome instanceof MainCommitter.FilesGone gone) {
      // Parked (reported, planned again after the backoff) rather than planned again at once: a
      // store that says a file just written is not there would otherwise convert the cycle again
      // and again, unseen.
      guard.failed(
          plan.table(),
          "cycle " + plan.cycleId() + " was not committed: " + gone.missing().size()
              + " of the deletion-vector files its converters wrote are gone from storage"
              + " (orphan-file removal, the cycle having waited longer than their age?): "
              + gone.missing(),
          null,
          now);
      return;
    }
    if (chainDepth == 0
        || System.nanoTime() - chainStartedNanos < config.roundBudgetMs() * 1_000_000) {
      startCycle(plan.table());
    } else {
      LOG.info(
          "{}: cycles committed one after another for {} ms; the next waits for the next trigger or"
              + " periodic check",
          plan.table(),
          (System.nanoTime() - chainStartedNanos) / 1_000_000);
    }
  }

  // --- trouble

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
    store.abandon(table);
    guard.failed(table, what, e, context.currentSystemTimeMs());
  }

  private void forget(String table, String why) {
    maintenance.forget(table);
    maintained.remove(table);
    store.forget(table);
    tables.forget(table);
    guard.forget(table, why);
  }

  private void deadLetter(Record<String, CycleInput> record, String reason) {
    metrics.deadLettered.increment();
    Optional<RecordMetadata> meta = context.recordMetadata();
    String topic = meta.map(RecordMetadata::topic).orElse("?");
    int partition = meta.map(RecordMetadata::partition).orElse(-1);
    long offset = meta.map(RecordMetadata::offset).orElse(-1L);
    LOG.warn(
        "Dead-lettering {} of {}-{} at offset {}: {}",
        record.value().getClass().getSimpleName(),
        topic,
        partition,
        offset,
        reason);
    context.forward(
        new Record<String, Object>(
            record.key(),
            record.value(),
            record.timestamp(),
            DeadLetters.headers(record.headers(), topic, partition, offset, "sync", reason)),
        DEAD_LETTER_CHILD);
  }

  private String where() {
    return context
        .recordMetadata()
        .map(m -> "from " + m.topic() + "-" + m.partition() + " at offset " + m.offset())
        .orElse("");
  }
}
