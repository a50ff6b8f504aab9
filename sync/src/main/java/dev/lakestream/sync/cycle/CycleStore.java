package dev.lakestream.sync.cycle;

import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.IndexResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The cycle coordinator's state, one per stream task: the tables it knows, the cycle in flight of
 * each, the results and key-index answers gathered for it (in state stores, so a restart resumes
 * them), and what is kept in memory to spare store reads: the plan, its task files as a set, the
 * count of results, when the cycle last progressed. The memory is rebuilt from the stores on
 * demand; a task initialized again starts with none. How long a cycle has gone without progress
 * is also stored, each time it is asked (the backstop's check, every few seconds), as the table's
 * value in {@link #TABLES} (negative), so a cycle whose results are lost times out even when its
 * task is initialized again more often than the timeout, while time the app was down does not
 * count.
 *
 * <p>Store keys: tables by name; plans by table; results {@code table\0cycle\0data file}; index
 * tasks the same; index answers {@code table\0cycle\0partition}.
 */
final class CycleStore {

  static final String CYCLES = "sync-cycles";
  static final String RESULTS = "sync-results";
  static final String TABLES = "sync-tables";
  static final String INDEX_RESULTS = "sync-index-results";
  static final String INDEX_TASKS = "sync-index-tasks";

  private record TaskFiles(String cycleId, Set<String> paths) {}

  private final KeyValueStore<String, CyclePlan> inFlight;
  private final KeyValueStore<String, ConvertResult> results;
  private final KeyValueStore<String, Long> known;
  private final KeyValueStore<String, IndexResult> indexResults;
  private final KeyValueStore<String, ConvertTask> indexTasks;

  private final Map<String, CyclePlan> plans = new HashMap<>();
  private final Map<String, Integer> resultCounts = new HashMap<>();
  private final Map<String, TaskFiles> taskFiles = new HashMap<>();
  private final Map<String, Long> progressAt = new HashMap<>();
  /** The idle time last stored per table (0: progress stored since). */
  private final Map<String, Long> idleStored = new HashMap<>();

  CycleStore(ProcessorContext<?, ?> context, boolean index) {
    this.inFlight = context.getStateStore(CYCLES);
    this.results = context.getStateStore(RESULTS);
    this.known = context.getStateStore(TABLES);
    this.indexResults = index ? context.getStateStore(INDEX_RESULTS) : null;
    this.indexTasks = index ? context.getStateStore(INDEX_TASKS) : null;
  }

  // --- the tables this task syncs

  boolean isKnown(String table) {
    return known.get(table) != null;
  }

  void know(String table, long nowMs) {
    known.put(table, nowMs);
  }

  void forget(String table) {
    abandon(table);
    known.put(table, null);
  }

  List<String> knownTables() {
    List<String> names = new ArrayList<>();
    try (KeyValueIterator<String, Long> it = known.all()) {
      it.forEachRemaining(e -> names.add(e.key));
    }
    return names;
  }

  // --- the cycle in flight

  /** The cycle in flight of {@code table}, or null. */
  CyclePlan plan(String table) {
    CyclePlan plan = plans.get(table);
    if (plan == null) {
      plan = inFlight.get(table);
      if (plan != null) {
        plans.put(table, plan);
      }
    }
    return plan;
  }

  /** {@code plan} is the table's cycle in flight now, planned (or resolved) at {@code nowMs}. */
  void keep(CyclePlan plan, long nowMs) {
    inFlight.put(plan.table(), plan);
    plans.put(plan.table(), plan);
    progressed(plan.table(), nowMs);
  }

  /** The cycle's tasks are out: no result has come back yet. */
  void tasksSent(CyclePlan plan) {
    resultCounts.put(plan.table(), 0);
  }

  /**
   * How long the table's cycle in flight has made no progress while this app ran: after a task is
   * initialized again, the idle time stored at the last ask carries on; the time between is not
   * counted.
   */
  long idleMs(String table, long nowMs) {
    long idle = nowMs
        - progressAt.computeIfAbsent(table, t -> {
          long stored = storedIdle(t);
          idleStored.put(t, stored);
          return nowMs - stored;
        });
    Long stored = idleStored.get(table);
    if (stored == null || idle > stored) {
      known.put(table, -1 - idle);
      idleStored.put(table, idle);
    }
    return idle;
  }

  /**
   * The idle time stored for {@code table}: its value in {@link #TABLES} is, negative, {@code -1 -
   * idle}; when the table became known otherwise (and in what an older version stored), 0.
   */
  private long storedIdle(String table) {
    Long value = known.get(table);
    return value == null || value >= 0 ? 0 : -1 - value;
  }

  /** The table's cycle progressed at {@code nowMs}: in memory, and in the store if idle time is. */
  private void progressed(String table, long nowMs) {
    progressAt.put(table, nowMs);
    Long stored = idleStored.get(table);
    if (stored == null || stored != 0) {
      known.put(table, -1L); // still known; no idle time
      idleStored.put(table, 0L);
    }
  }

  /** Whether the cycle sent out a task for {@code dataFile}. */
  boolean asked(CyclePlan plan, String dataFile) {
    TaskFiles files = taskFiles.get(plan.table());
    if (files == null || !files.cycleId().equals(plan.cycleId())) {
      files = new TaskFiles(plan.cycleId(), new HashSet<>(plan.taskFiles()));
      taskFiles.put(plan.table(), files);
    }
    return files.paths().contains(dataFile);
  }

  /** Keeps {@code result} of the cycle in flight; the number of results the cycle has now. */
  int addResult(CyclePlan plan, ConvertResult result, long nowMs) {
    progressed(plan.table(), nowMs);
    String key = key(plan, result.dataFilePath());
    boolean fresh = results.get(key) == null;
    Integer counted = resultCounts.get(plan.table());
    results.put(key, result);
    // After a restart the count is not in memory: count the store, which now holds this result.
    int count = counted == null ? countResults(plan) : counted + (fresh ? 1 : 0);
    resultCounts.put(plan.table(), count);
    return count;
  }

  int resultCount(CyclePlan plan) {
    Integer counted = resultCounts.get(plan.table());
    return counted == null ? countResults(plan) : counted;
  }

  /** The results gathered for {@code plan} (an unreadable spilled one reads as absent). */
  List<ConvertResult> results(CyclePlan plan) {
    List<ConvertResult> out = new ArrayList<>();
    try (KeyValueIterator<String, ConvertResult> it =
        results.prefixScan(prefix(plan), Serdes.String().serializer())) {
      it.forEachRemaining(e -> {
        if (e.value != null) {
          out.add(e.value);
        }
      });
    }
    return out;
  }

  /** The cycle is done (committed, found committed, or to be planned again): forget it. */
  void clear(CyclePlan plan) {
    for (String path : plan.taskFiles()) {
      results.put(key(plan, path), null);
    }
    inFlight.put(plan.table(), null);
    forgetMemory(plan.table());
  }

  /** Drops the cycle in flight of {@code table} and everything gathered for it, whatever cycle it was. */
  void abandon(String table) {
    String prefix = table + '\u0000';
    deletePrefix(results, prefix);
    if (indexResults != null) {
      deletePrefix(indexResults, prefix);
      deletePrefix(indexTasks, prefix);
    }
    inFlight.put(table, null); // put, not delete: delete would read (and parse) the old plan
    forgetMemory(table);
  }

  // --- the key index's round of a cycle

  /** The cycle's tasks wait here for the index's answers. */
  void waitForIndex(CyclePlan plan, List<ConvertTask> tasks) {
    for (ConvertTask task : tasks) {
      indexTasks.put(key(plan, task.dataFilePath()), task);
    }
  }

  /**
   * Whether the cycle's key-index round still awaits answers. Its tasks wait in the store until
   * every partition has answered ({@link #takeIndexRound}), and the plan resolved then names only
   * files whose tasks were taken; a round with no tasks ends its cycle when it resolves. An answer
   * that comes after (a lookup processed twice, under at-least-once) would otherwise resolve the
   * round again, from no waiting tasks, into a cycle committed without its deletion vectors.
   */
  boolean indexRoundOpen(CyclePlan plan) {
    return plan.taskFiles().isEmpty()
        || indexTasks.get(key(plan, plan.taskFiles().get(0))) != null;
  }

  /** Keeps one partition's answer; every answer of the cycle so far. */
  List<IndexResult> addIndexAnswer(CyclePlan plan, IndexResult answer) {
    indexResults.put(prefix(plan) + answer.partition(), answer);
    List<IndexResult> answers = new ArrayList<>();
    try (KeyValueIterator<String, IndexResult> it =
        indexResults.prefixScan(prefix(plan), Serdes.String().serializer())) {
      it.forEachRemaining(e -> {
        if (e.value != null) {
          answers.add(e.value);
        }
      });
    }
    return answers;
  }

  /** The tasks that waited for the index, and the index's state of the cycle, taken out of the stores. */
  List<ConvertTask> takeIndexRound(CyclePlan plan) {
    List<ConvertTask> tasks = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    try (KeyValueIterator<String, ConvertTask> it =
        indexTasks.prefixScan(prefix(plan), Serdes.String().serializer())) {
      it.forEachRemaining(e -> {
        keys.add(e.key);
        if (e.value != null) {
          tasks.add(e.value);
        }
      });
    }
    keys.forEach(k -> indexTasks.put(k, null));
    deletePrefix(indexResults, prefix(plan));
    return tasks;
  }

  private void forgetMemory(String table) {
    plans.remove(table);
    resultCounts.remove(table);
    taskFiles.remove(table);
    progressAt.remove(table);
    idleStored.remove(table);
  }

  private int countResults(CyclePlan plan) {
    return results(plan).size();
  }

  private static <V> void deletePrefix(KeyValueStore<String, V> store, String prefix) {
    List<String> keys = new ArrayList<>();
    try (KeyValueIterator<String, V> it =
        store.prefixScan(prefix, Serdes.String().serializer())) {
      while (it.hasNext()) {
        keys.add(it.peekNextKey());
        it.next();
      }
    }
    keys.forEach(k -> store.put(k, null));
  }

  private static String prefix(CyclePlan plan) {
    return plan.table() + '\u0000' + plan.cycleId() + '\u0000';
  }

  private static String key(CyclePlan plan, String dataFile) {
    return prefix(plan) + dataFile;
  }
}
