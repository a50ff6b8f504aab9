package dev.lakestream.ingest.commit;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.event.Unreadable;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.ingest.IngestConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * Commits flushed batches to each table's {@code realtime} branch with a RowDelta, then announces
 * the snapshot with a {@link RealtimeCommitted} event. One committer owns a table (its events are
 * keyed by table).
 *
 * <p>Batches wait in a state store and are committed every {@code ingest.commit.interval.ms},
 * split into rounds by {@link CommitRounds} (never two batches of one source partition in one
 * snapshot). Each snapshot's summary records the last committed source offset of every source
 * partition ({@link SourceOffsets}); a batch at or below it was committed before (a replay after a
 * crash between the Iceberg commit and the Kafka commit) and is skipped, so no file is committed
 * twice. The commit validates that nobody added files to the branch since the offsets were read
 * (a fenced-off zombie instance could have): if so it re-reads them and tries again.
 *
 * <p>A TRUNCATE (a batch that ends with one, from whichever partition carried it) is committed in a
 * snapshot of its own, in its partition's order, and applied by {@link Truncation}: what realtime
 * holds of before it is removed, what came after it stays. Every later commit carries its position
 * ({@link SummaryKeys#TRUNCATED_AT}), and a batch of another partition that arrives afterwards with
 * changes from before it is trimmed of them. A TRUNCATE read before its table existed waits here
 * like the batches of a dropped table, until a change creates the table (the topic's other
 * partitions may hold rows of before it), and is applied then; of several in one partition only the
 * last waits.
 *
 * <p>A batch that overlaps the committed offsets (its source offsets were reset, by hand or by
 * {@code auto.offset.reset}) is committed, its changes applied again as upserts: they are the
 * newest of their keys up to the batch's end, so the table ends as the source. A batch that waited
 * longer than {@code lakestream.max.stall.ms} is reported (the topics may have dropped batches
 * before it), and one whose files are gone is not committed but dead-lettered with the source
 * offsets it held: committing it would break every reader of the table.
 *
 * <p>The commits themselves ({@link CommitWork}) run on a thread of this committer's own ({@code
 * ingest.commit.async}, the default): the stream thread that runs this task also reads source
 * partitions, and goes on reading them while a commit runs. One commit is in flight at a time; the
 * stream thread picks up its outcome at its next punctuation and applies it in the task's
 * transaction (the batches it committed leave the store, its events are forwarded). A table that
 * reaches {@value #MAX_PENDING_PER_TABLE} pending batches makes the stream thread wait for the
 * commit in flight, for a few seconds at most (a commit that takes longer, against a slow catalog,
 * lets the batches pile up in the store, and the next starts as soon as it ends), so that rounds
 * stay small and the thread keeps within its transaction timeout and its polls. A task closed with a commit in flight waits for
 * it; its batches stay in the store and are skipped as committed by the task's next owner.
 */
public final class RealtimeCommitter implements Processor<String, Object, String, Object> {

  public static final String STORE = "realtime-pending";
  /** A batch older than this has its files checked before it is committed (it waited: were they removed?). */
  static final long CHECK_FILES_AFTER_MS = 10 * 60_000L;

  private static final Logger LOG = LoggerFactory.getLogger(RealtimeCommitter.class);
  private static final int MAX_PENDING_PER_TABLE = 64;
  private static final long PROGRESS_EVERY_MS = 10_000;
  /** How often the stream thread looks for the outcome of a commit in flight. */
  private static final long POLL_MS = 20;
  /**
   * How long a table's full store waits for the commit in flight (its task's transaction is open
   * meanwhile, and its timeout is a minute by default).
   */
  static final Duration PENDING_WAIT = Duration.ofSeconds(5);
  /** How long a closing task waits for its commit in flight (well within the transaction timeout). */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(30);

  private final IngestConfig config;
  private final boolean commitOnHandoff;
  private final TableManager tables;
  private final RealtimeMetrics metrics;

  private final Health health;
  private final SourceTopicIds topicIds;
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, FilesWritten> pending;
  private final Map<String, Integer> pendingPerTable = new LinkedHashMap<>();
  /** Per table UUID, the sequence number of this committer's last commit to realtime (CommitWork). */
  private final Map<String, Long> committedSequence = new ConcurrentHashMap<>();
  /** The tables warned of as missing, until a commit finds them. */
  private final Set<String> warnedMissing = new HashSet<>();

  private ExecutorService worker;
  private Future<CommitWork.Done> inFlight;
  /** The commit in flight that a full table waited {@link #PENDING_WAIT} for: not waited for again. */
  private Future<CommitWork.Done> waitedOut;
  /** A table reached the pending limit while a commit ran that it did not wait for to the end. */
  private boolean fullWhileCommitting;

  private long nextCommitAtMs;
  private long progressAtMs;
  private long progressCommits;
  private long progressRows;

  public RealtimeCommitter(
      IngestConfig config,
      TableManager tables,
      MeterRegistry meters,
      Health health,
      SourceTopicIds topicIds) {
    this.config = config;
    this.commitOnHandoff = config.pipeline().commitOnHandoff();
    this.topicIds = topicIds;
    this.tables = tables;
    this.health = health;
    this.metrics = new RealtimeMetrics(meters);
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.pending = context.getStateStore(STORE);
    pendingPerTable.clear(); // a suspended task is initialized again
    try (KeyValueIterator<String, FilesWritten> it = pending.all()) {
      it.forEachRemaining(e -> pendingPerTable.merge(e.value.table(), 1, Integer::sum));
    }
    progressAtMs = context.currentSystemTimeMs();
    nextCommitAtMs = progressAtMs + config.commitIntervalMs();
    long interval = config.commitAsync()
        ? Math.min(POLL_MS, config.commitIntervalMs())
        : config.commitIntervalMs();
    context.schedule(Duration.ofMillis(interval), PunctuationType.WALL_CLOCK_TIME, this::tick);
  }

  @Override
  public void process(Record<String, Object> record) {
    if (record.value() instanceof Unreadable unreadable) {
      metrics.refused.increment();
      var meta = context.recordMetadata();
      String topic = meta.map(m -> m.topic()).orElse("?");
      int partition = meta.map(m -> m.partition()).orElse(-1);
      long offset = meta.map(m -> m.offset()).orElse(-1L);
      String reason = "unreadable batch event: " + unreadable.error();
      LOG.error(
          "Dead-lettering the record of {}-{} at offset {}: {}", topic, partition, offset, reason);
      context.forward(new Record<String, Object>(
          record.key(),
          unreadable,
          record.timestamp(),
          DeadLetters.headers(
              record.headers(), topic, partition, offset, "realtime-commit", reason)));
      return;
    }
    if (!(record.value() instanceof FilesWritten batch)) {
      return; // a tombstone
    }
    pending.put(pendingKey(batch), batch);
    int count = pendingPerTable.merge(batch.table(), 1, Integer::sum);
    if (count >= MAX_PENDING_PER_TABLE) {
      if (awaitInFlight()) {
        collect();
        start(context.currentSystemTimeMs());
      } else {
        fullWhileCommitting = true; // the next commit starts as soon as this one ends
      }
    }
  }

  /**
   * Waits for the commit in flight, up to {@link #PENDING_WAIT} and once per commit: whether it has
   * finished (or none runs). A longer wait would hold the task's transaction open past its timeout
   * and the thread away from its polls (a slow catalog would make the group move the task again
   * and again); past it, batches pile up in the store until the commit ends, and the next starts
   * at once.
   */
  private boolean awaitInFlight() {
    if (inFlight == null || inFlight.isDone()) {
      return true;
    }
    if (inFlight == waitedOut) {
      return false;
    }
    try {
      inFlight.get(PENDING_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a realtime commit", e);
    } catch (ExecutionException e) {
      // collect() tells it
    } catch (TimeoutException e) {
      waitedOut = inFlight;
      LOG.warn(
          "The realtime commit of task {} still runs after {} s with {} batches pending; they wait in"
              + " the store and are committed once it ends",
          context.taskId(),
          PENDING_WAIT.toSeconds(),
          pendingPerTable.values().stream().mapToInt(Integer::intValue).sum());
      return false;
    }
    return true;
  }

  /**
   * The punctuation: applies the outcome of a finished commit, and starts the next commit once the
   * commit interval has passed since the last one started.
   */
  private void tick(long now) {
    collect();
    if (inFlight == null
        && (now >= nextCommitAtMs || !config.commitAsync() || fullWhileCommitting)) {
      start(now);
    }
    logProgress(now);
  }

  /** Starts a commit of every table's pending batches: on the worker thread, or here when not async. */
  private void start(long now) {
    fullWhileCommitting = false;
    if (pendingPerTable.isEmpty()) {
      return;
    }
    Map<String, List<FilesWritten>> batches = new LinkedHashMap<>();
    for (String table : pendingPerTable.keySet()) {
      batches.put(table, pendingOf(table));
    }
    pendingPerTable.clear();
    nextCommitAtMs = now + config.commitIntervalMs();
    CommitWork work =
        new CommitWork(config, tables, metrics, health, topicIds, committedSequence, now);
    if (!config.commitAsync()) {
      apply(work.run(batches));
      return;
    }
    inFlight = worker().submit(() -> work.run(batches));
  }

  /**
   * Applies the outcome of the commit in flight when it has finished. A commit that failed fails
   * this task as a failing commit on the stream thread would: its batches are still pending, and
   * committed by the task's next run.
   */
  private void collect() {
    if (inFlight == null || !inFlight.isDone()) {
      return;
    }
    Future<CommitWork.Done> finished = inFlight;
    inFlight = null;
    CommitWork.Done done;
    try {
      done = finished.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a realtime commit", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException failure) {
        throw failure;
      }
      throw new IllegalStateException("realtime commit failed: " + e.getCause(), e.getCause());
    }
    apply(done);
  }

  /** What a commit did, told to the store and the topics (in this task's transaction). */
  private void apply(CommitWork.Done done) {
    for (CommitWork.Settled batch : done.settled()) {
      for (String key : batch.keys()) {
        if (batch.is(pending.get(key))) {
          pending.delete(key);
        }
      }
    }
    done.forwards().forEach(context::forward);
    if (!done.forwards().isEmpty() && commitOnHandoff) {
      // Sync reads the realtime-commit events once this transaction commits: at once, not at the
      // next commit interval.
      context.commit();
    }
    for (String table : done.deferredTables()) {
      pendingPerTable.merge(table, pendingOf(table).size(), Math::max);
    }
    for (String table : done.missingTables()) {
      List<FilesWritten> waiting = pendingOf(table);
      for (FilesWritten superseded : supersededTruncates(waiting)) {
        pending.delete(pendingKey(superseded));
        LOG.info(
            "TRUNCATE of {} at {}@{} dropped while the table does not exist: a later one of the"
                + " same partition waits in its place",
            table,
            superseded.sourcePartitionName(),
            superseded.lastOffset());
      }
      waiting = pendingOf(table);
      if (!waiting.isEmpty()) {
        pendingPerTable.put(table, waiting.size());
      }
      if (warnedMissing.add(table)) {
        LOG.warn(
            "Table {} is not in the catalog yet (or again): its {} pending batches ({} TRUNCATE(s)"
                + " read before the table existed) wait until ingest creates it with its next change",
            table,
            waiting.size(),
            waiting.stream().filter(CommitWork::awaitedItsTable).count());
      }
    }
    warnedMissing.retainAll(done.missingTables());
    progressCommits += done.commits();
    progressRows += done.rows();
  }

  /**
   * The truncates among a missing table's pending batches that a later one of the same source
   * partition makes moot: both read before the table existed (they write nothing), the later one at
   * a source position no lower, so it removes all they would. Dropped, they keep the store at one
   * waiting truncate per partition of a table no change creates.
   */
  static List<FilesWritten> supersededTruncates(List<FilesWritten> waiting) {
    List<FilesWritten> superseded = new ArrayList<>();
    for (FilesWritten truncate : waiting) {
      boolean moot = CommitWork.awaitedItsTable(truncate)
          && truncate.changelogFiles().isEmpty()
          && waiting.stream()
              .anyMatch(later -> CommitWork.awaitedItsTable(later)
                  && later.awaitedSource().equals(truncate.awaitedSource())
                  && later.truncatedAt().length() == truncate.truncatedAt().length()
                  && later.truncatedAt().compareTo(truncate.truncatedAt()) >= 0
                  && later.sourceTopic().equals(truncate.sourceTopic())
                  && Objects.equals(later.sourceTopicId(), truncate.sourceTopicId())
                  && later.sourcePartition() == truncate.sourcePartition()
                  && later.firstOffset() > truncate.lastOffset());
      if (moot) {
        superseded.add(truncate);
      }
    }
    return superseded;
  }

  /** The batches of {@code table} in the store, in key order (by source partition and offset). */
  private List<FilesWritten> pendingOf(String table) {
    List<FilesWritten> batches = new ArrayList<>();
    try (KeyValueIterator<String, FilesWritten> it =
        pending.prefixScan(table + '\u0000', Serdes.String().serializer())) {
      it.forEachRemaining((KeyValue<String, FilesWritten> e) -> batches.add(e.value));
    }
    return batches;
  }

  private ExecutorService worker() {
    if (worker == null) {
      String name = "lakestream-realtime-commit-" + context.taskId();
      worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
      });
    }
    return worker;
  }

  /**
   * Waits for the commit in flight, if any (up to {@link #CLOSE_WAIT}), so a task's next owner
   * starts from the branch as this one left it; its outcome is not applied (the task can no longer
   * forward), and the batches it committed are skipped by the next owner.
   */
  @Override
  public void close() {
    if (worker == null) {
      return;
    }
    ExecutorService closing = worker;
    worker = null; // a suspended task that resumes starts another
    closing.shutdown();
    try {
      if (closing.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        inFlight = null;
      } else {
        // Kept: a resumed task starts no commit before this one ends.
        LOG.warn(
            "The realtime commit of task {} still runs after {} s; closing without it (the task's next"
                + " owner's commit is validated against it)",
            context.taskId(),
            CLOSE_WAIT.toSeconds());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void logProgress(long now) {
    if (now - progressAtMs >= PROGRESS_EVERY_MS) {
      double seconds = (now - progressAtMs) / 1000.0;
      if (progressCommits > 0) {
        LOG.info(
            "Realtime commits: {} snapshots, {} rows in {}s ({} rows/s), task {}",
            progressCommits,
            progressRows,
            String.format("%.1f", seconds),
            String.format("%.0f", progressRows / seconds),
            context.taskId());
      }
      progressAtMs = now;
      progressCommits = 0;
      progressRows = 0;
    }
  }

  /**
   * Where {@code batch} waits in the store: by table, source partition and first offset, and by the
   * ID of its source topic, so that a batch of a topic created again under the same name, which
   * starts at the same offset as a pending one of the old topic, does not replace it.
   */
  static String pendingKey(FilesWritten batch) {
    String key = withoutTopicId(batch);
    return batch.sourceTopicId() == null ? key : key + '\u0000' + batch.sourceTopicId();
  }

  /** The key a batch was stored under before keys held the topic's ID (a store kept across an upgrade). */
  static String withoutTopicId(FilesWritten batch) {
    return batch.table()
        + '\u0000'
        + batch.sourceTopic()
        + '\u0000'
        + batch.sourcePartition()
        + '\u0000'
        + String.format("%020d", batch.firstOffset());
  }
}
