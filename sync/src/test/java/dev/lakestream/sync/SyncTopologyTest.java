package dev.lakestream.sync;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.event.CycleInput;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.EventSerdes;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.event.MainCommitted;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.iceberg.BranchFiles;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.SourcePositions;
import dev.lakestream.common.iceberg.SummaryKeys;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.metrics.Hops;
import dev.lakestream.common.metrics.Hops.Hop;
import dev.lakestream.sync.commit.MainCommitter;
import dev.lakestream.sync.cycle.CycleCoordinator;
import dev.lakestream.sync.diff.Differ;
import dev.lakestream.sync.maintenance.Maintenance;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.sync.maintenance.RetentionPolicy;
import dev.lakestream.sync.maintenance.SnapshotExpiry;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.DelegatingTableOperations;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Sync alone, on realtime commits written here the way ingest writes them (per batch, a Parquet
 * data file of the batch's upserted rows and an equality-delete file of every key it touched, one
 * realtime snapshot per round), and triggered by their events: the differ, the coordinator, the
 * converter (or the key index) and the main committer, with no ingest in the loop. After every
 * cycle main equals an independent model of the source table (a map by key), and the invariants
 * hold ({@link Verifier}).
 */
class SyncTopologyTest {

  private static final TableIdentifier ID = TableIdentifier.of("inventory", "orders");
  private static final Types.StructType ROW = Types.StructType.of(
      Types.NestedField.required(1, "id", Types.LongType.get()),
      Types.NestedField.optional(2, "qty", Types.IntegerType.get()),
      Types.NestedField.optional(3, "note", Types.StringType.get()));

  private TemporaryWarehouse warehouse;
  private final Map<Long, Record> model = new TreeMap<>();
  private final List<RealtimeCommitted> unsent = new ArrayList<>();
  private Catalog catalog;
  private Table table;
  private TopologyTestDriver sync;
  private TestInputTopic<String, RealtimeCommitted> triggers;
  private TestOutputTopic<String, MainCommitted> mainCommits;
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private long position;
  private int taskId;
  private int triggersSent;
  private int mainCommitsSeen;
  private SyncConfig syncConfig;
  private final Map<String, String> extraSettings = new HashMap<>();
  private Maintenance maintenance;

  private void start(SyncConfig.Resolver resolver) throws IOException {
    warehouse = new TemporaryWarehouse();
    Map<String, String> settings = new HashMap<>();
    settings.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    settings.put(StreamsConfig.APPLICATION_ID_CONFIG, "sync");
    settings.put(MaintenanceConfig.ENABLED, "false");
    settings.put(SyncConfig.RESOLVER + "." + ID, resolver.name().toLowerCase());
    settings.put(SyncConfig.INDEX_PARTITIONS, "3");
    settings.putAll(extraSettings);
    warehouse
        .catalogProperties()
        .forEach((k, v) -> settings.put(PipelineConfig.CATALOG_PREFIX + k, v));
    PipelineConfig config = new PipelineConfig(settings);
    catalog = CatalogLoader.load(config.catalogName(), config.catalogProperties());
    table = new TableManager(catalog).ensure(ID, ROW, List.of("id"), "v1");
    syncConfig = new SyncConfig(config);
    maintenance = new Maintenance(MaintenanceConfig.from(config), catalog, meters, Runnable::run);
    Properties props = StreamsApp.streamsProperties(config);
    props.put(
        StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("sync-state-").toString());
    sync = new TopologyTestDriver(
        SyncTopology.build(
            syncConfig, new TableManager(catalog), meters, maintenance, new Health()),
        props);
    triggers = sync.createInputTopic(
        syncConfig.realtimeCommitsTopic(),
        new StringSerializer(),
        EventSerdes.realtimeCommitted().serializer());
    mainCommits = sync.createOutputTopic(
        syncConfig.mainCommitsTopic(),
        new StringDeserializer(),
        EventSerdes.mainCommitted().deserializer());
  }

  @AfterEach
  void close() throws Exception {
    if (sync != null) {
      sync.close();
    }
    if (catalog instanceof AutoCloseable closeable) {
      closeable.close();
    }
    if (warehouse != null) {
      warehouse.close();
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(SyncConfig.Resolver.class)
  void everyCycleLeavesMainEqualToTheSourceWithDeletionVectorsOnly(SyncConfig.Resolver resolver)
      throws Exception {
    start(resolver);
    Random random = new Random(17);
    round(List.of(batch(random, 400, 0)));
    assertCycle(syncNow(), 1);
    for (int cycle = 1; cycle <= 12; cycle++) {
      int rounds = 1 + random.nextInt(3);
      for (int r = 0; r < rounds; r++) {
        // One or two source partitions' batches per round, as ingest commits them: a key lives in
        // one partition, so the batches of a round never share a key.
        List<Map<Long, Record>> batches = new ArrayList<>();
        int partitions = 1 + random.nextInt(2);
        for (int b = 0; b < partitions; b++) {
          batches.add(batch(random, 1 + random.nextInt(60), 500, b, partitions));
        }
        round(batches);
      }
      assertCycle(syncNow(), 1);
    }
    assertThat(mainDeletes(FileContent.POSITION_DELETES))
        .as("deletion vectors on main after 12 cycles of updates and deletes")
        .isNotEmpty();
    // Each hop through sync is timed: every trigger, every cycle planned, converted, committed.
    assertThat(hop(Hop.REALTIME_TO_SYNC).count()).isEqualTo(triggersSent);
    assertThat(hop(Hop.REALTIME_TO_PLANNED).count()).isEqualTo(mainCommitsSeen);
    assertThat(hop(Hop.CONVERTED).count()).isEqualTo(mainCommitsSeen);
    assertThat(hop(Hop.MAIN_COMMIT).count()).isEqualTo(mainCommitsSeen);
  }

  private Timer hop(Hop hop) {
    return meters.get(Hops.METER).tag("hop", hop.tag()).timer();
  }

  @Test
  void aCompactionOfRealtimeIsMirroredAndTheDeletesThatLandedDuringItAreConvertedAgain()
      throws Exception {
    start(SyncConfig.Resolver.SCAN);
    Random random = new Random(5);
    for (int r = 0; r < 6; r++) {
      round(List.of(batch(random, 120, 300)));
    }
    assertCycle(syncNow(), 1);
    RealtimeCompaction compaction = RealtimeCompaction.prepareAll(table, 128L << 20);
    // Deletes and updates land on realtime while the compaction runs, before it commits.
    round(List.of(batch(random, 80, 300)));
    RealtimeCompaction.Result compacted = compaction.commit();
    assertThat(compacted.dataFilesIn())
        .as("realtime's data files compacted: all six but the newest")
        .isEqualTo(5);
    assertThat(compacted.dataFilesOut()).isEqualTo(1);
    round(List.of(batch(random, 40, 300)));
    List<MainCommitted> commits = syncNow();
    assertCycle(commits, 1);
    assertThat(commits.get(0).dataFilesRemoved())
        .as("main's data files replaced by the compacted one")
        .isEqualTo(5);
    table.refresh();
    assertThat(BranchFiles.liveDataFiles(table, table.snapshot(Branches.MAIN)))
        .as("main's data files after the mirrored compaction: realtime's")
        .containsOnlyKeys(
            BranchFiles.liveDataFiles(table, table.snapshot(Branches.REALTIME)).keySet());
  }

  @Test
  void aTriggerDeliveredAgainCommitsNothingTwice() throws Exception {
    start(SyncConfig.Resolver.SCAN);
    Random random = new Random(9);
    round(List.of(batch(random, 200, 0)));
    round(List.of(batch(random, 50, 200)));
    List<RealtimeCommitted> sent = List.copyOf(unsent);
    assertCycle(syncNow(), 1);
    long mainBefore = mainSnapshot().snapshotId();
    sent.forEach(t -> triggers.pipeInput(t.table(), t));
    assertThat(mainCommits.readValuesToList())
        .as("main commits for replayed triggers")
        .isEmpty();
    assertThat(mainSnapshot().snapshotId()).isEqualTo(mainBefore);
    assertMainEqualsModel();
  }

  /**
   * The table object is shared by an app's threads, and a refresh that read the metadata pointer
   * before a commit and ended after it sets it back. A plan that read main's head from the current
   * version and main's watermark from the older one took the files main already held for added:
   * committed, each of their rows twice. The plan reads one version of the table.
   */
  @Test
  void aPlanReadsOneVersionOfATableSetBackWhileItPlans() throws Exception {
    start(SyncConfig.Resolver.SCAN);
    Random random = new Random(3);
    round(List.of(batch(random, 100, 0)));
    assertCycle(syncNow(), 1);
    round(List.of(batch(random, 50, 100)));
    // The older version: main mirrors the first round, realtime holds the second too.
    TableMetadata older = operations().current();
    assertCycle(syncNow(), 1);
    round(List.of(batch(random, 50, 150)));
    table.refresh();
    TableMetadata current = operations().current();
    Set<String> onMain = BranchFiles.liveDataFiles(table, mainSnapshot()).keySet();

    // Main's and realtime's heads are read from the current version (two reads each: the branch,
    // then its snapshot), every later read from the older version.
    AtomicInteger reads = new AtomicInteger();
    TableOperations setBack = new DelegatingTableOperations(operations()) {
      @Override
      public TableMetadata current() {
        return reads.getAndIncrement() < 4 ? current : older;
      }

      @Override
      public TableMetadata refresh() {
        return current();
      }

      @Override
      public void commit(TableMetadata base, TableMetadata metadata) {
        throw new UnsupportedOperationException("the test only plans");
      }
    };
    CyclePlan plan = Differ.plan(
            new BaseTable(setBack, table.name()), ID.toString(), "set-back", 0L, Integer.MAX_VALUE)
        .orElseThrow()
        .plan();
    assertThat(plan.baseMainSnapshotId()).isEqualTo(mainSnapshot().snapshotId());
    assertThat(plan.addDataFiles())
        .as("files the plan adds to main")
        .hasSize(1)
        .noneMatch(f -> onMain.contains(f.file().path()));
  }

  /**
   * Two owners of one table (a task that moved while its old owner still commits) can plan the same
   * range on the same base. The first commit lands; the second passes the committer's own check on a
   * table read before the first landed, and is refused by the commit's validation (main's head is
   * no longer its base), never committed on top: each row of the range would be on main twice.
   */
  @Test
  void aSecondOwnersCommitOnABaseThatMovedAfterItsCheckIsRefused() throws Exception {
    start(SyncConfig.Resolver.SCAN);
    round(List.of(rows(0, 100)));
    table.refresh();
    TableMetadata before = operations().current();
    CyclePlan first = Differ.plan(
            table, ID.toString(), "first", System.currentTimeMillis(), Integer.MAX_VALUE)
        .orElseThrow()
        .plan();
    assertThat(first.taskFiles()).as("convert tasks of a round of new keys").isEmpty();
    assertThat(MainCommitter.commit(table, first, List.of(), System.currentTimeMillis()))
        .isInstanceOf(MainCommitter.Committed.class);
    long committed = mainSnapshot().snapshotId();

    // The second owner's table reads the version before the first commit until it commits.
    AtomicBoolean committing = new AtomicBoolean();
    TableOperations late = new DelegatingTableOperations(operations()) {
      @Override
      public TableMetadata current() {
        return committing.get() ? ops.current() : before;
      }

      @Override
      public TableMetadata refresh() {
        return committing.get() ? ops.refresh() : before;
      }

      @Override
      public void commit(TableMetadata base, TableMetadata metadata) {
        committing.set(true);
        ops.commit(base, metadata);
      }
    };
    Table second = new BaseTable(late, table.name());
    CyclePlan again = Differ.plan(
            second, ID.toString(), "second", System.currentTimeMillis(), Integer.MAX_VALUE)
        .orElseThrow()
        .plan();
    assertThat(again.baseMainSnapshotId()).isEqualTo(first.baseMainSnapshotId());
    MainCommitter.Outcome outcome =
        MainCommitter.commit(second, again, List.of(), System.currentTimeMillis());

    assertThat(committing).as("the second commit was attempted").isTrue();
    assertThat(outcome)
        .isEqualTo(new MainCommitter.MainMoved(first.baseMainSnapshotId(), committed));
    assertThat(mainSnapshot().snapshotId()).isEqualTo(committed);
    Verifier.Report report = Verifier.verify(table, ID.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
    assertMainEqualsModel();
  }

  /**
   * A backlog of realtime snapshots (sync stopped while ingest went on committing) is mirrored in
   * cycles of at most {@code sync.cycle.max.snapshots}, one after another and without another
   * trigger; after each, main equals realtime at the cycle's target.
   */
  @Test
  void aBacklogIsMirroredInCyclesOfAtMostTheMaxSnapshotsEachEqualToRealtimeAtItsTarget()
      throws Exception {
    extraSettings.put(SyncConfig.CYCLE_MAX_SNAPSHOTS, "10");
    start(SyncConfig.Resolver.SCAN);
    Random random = new Random(23);
    round(List.of(batch(random, 200, 0)));
    assertCycle(syncNow(), 1);
    for (int r = 0; r < 25; r++) {
      round(List.of(batch(random, 1 + random.nextInt(40), 300)));
    }
    List<Long> backlog = unsent.stream().map(RealtimeCommitted::snapshotId).toList();

    unsent.subList(1, unsent.size()).clear(); // one trigger for the whole backlog
    List<MainCommitted> commits = syncNow();

    assertCycle(commits, 3);
    assertThat(commits.stream().map(MainCommitted::realtimeSnapshotId).toList())
        .as("the realtime snapshot each cycle mirrored up to")
        .containsExactly(backlog.get(9), backlog.get(19), backlog.get(24));
    commits.forEach(this::assertMainEqualsRealtimeAtItsTarget);
  }

  /**
   * Cycles of a backlog that have nothing to convert commit at once, each planning the next on the
   * same stream thread in the same transaction: they go on only while the round's budget allows,
   * and the rest wait for the next trigger (or periodic check).
   */
  @Test
  void cyclesOfABacklogWithNothingToConvertGoOnOnlyWithinTheRoundsBudget() throws Exception {
    extraSettings.put(SyncConfig.CYCLE_MAX_SNAPSHOTS, "10");
    extraSettings.put(SyncConfig.ROUND_BUDGET_MS, "0");
    start(SyncConfig.Resolver.SCAN);
    round(List.of(rows(0, 100)));
    assertCycle(syncNow(), 1);
    for (int r = 0; r < 25; r++) {
      round(List.of(rows(1_000 + 10 * r, 1_010 + 10 * r))); // new keys: nothing to convert
    }
    List<RealtimeCommitted> backlog = new ArrayList<>(unsent);
    unsent.clear();

    List<Integer> commitsPerTrigger = new ArrayList<>();
    for (RealtimeCommitted trigger : backlog.subList(0, 4)) {
      unsent.add(trigger);
      List<MainCommitted> commits = syncNow();
      commitsPerTrigger.add(commits.size());
      for (MainCommitted commit : commits) {
        Verifier.Report report = Verifier.verify(table, ID.toString());
        assertThat(report.passed()).as(report.toString()).isTrue();
        assertMainEqualsRealtimeAtItsTarget(commit);
      }
    }
    assertThat(commitsPerTrigger)
        .as("main commits per trigger, 10 realtime snapshots each")
        .containsExactly(1, 1, 1, 0);
    assertMainEqualsModel();
  }

  /** Main's rows at {@code commit} against realtime's at the snapshot it mirrored up to. */
  private void assertMainEqualsRealtimeAtItsTarget(MainCommitted commit) {
    assertThat(byId(TableRows.readAt(table, commit.mainSnapshotId())))
        .as("main snapshot %s against realtime at its target", commit.mainSnapshotId())
        .isEqualTo(byId(TableRows.readAt(table, commit.realtimeSnapshotId())));
  }

  /** Rows by key; a second row of a key fails. */
  private static Map<Object, Map<String, Object>> byId(List<Map<String, Object>> rows) {
    Map<Object, Map<String, Object>> out = new TreeMap<>();
    for (Map<String, Object> row : rows) {
      assertThat(out.put(row.get("id"), row))
          .as("a second row of key %s", row.get("id"))
          .isNull();
    }
    return out;
  }

  private TableOperations operations() {
    return ((HasTableOperations) table).operations();
  }

  @Test
  void aKeyIndexAnswerDeliveredAgainAfterItsRoundResolvedCommitsNothing() throws Exception {
    start(SyncConfig.Resolver.INDEX);
    Random random = new Random(21);
    round(List.of(batch(random, 200, 0)));
    assertCycle(syncNow(), 1);
    // Updates and deletes of keys on main: the next cycle must write deletion vectors.
    round(List.of(batch(random, 60, 200)));
    long mainBefore = mainSnapshot().snapshotId();

    // The coordinator alone, its key-index answers handed over as at-least-once can deliver them:
    // each once, and then each again while the convert tasks they resolved to are out.
    MockProcessorContext<String, Object> context = new MockProcessorContext<>();
    context.setCurrentSystemTimeMs(System.currentTimeMillis());
    for (String name : List.of(
        CycleCoordinator.CYCLES,
        CycleCoordinator.RESULTS,
        CycleCoordinator.TABLES,
        CycleCoordinator.INDEX_RESULTS,
        CycleCoordinator.INDEX_TASKS)) {
      Serde<?> values =
          switch (name) {
            case CycleCoordinator.CYCLES -> EventSerdes.cyclePlan();
            case CycleCoordinator.RESULTS -> EventSerdes.convertResult();
            case CycleCoordinator.TABLES -> Serdes.Long();
            case CycleCoordinator.INDEX_RESULTS -> EventSerdes.indexResult();
            default -> EventSerdes.convertTask();
          };
      KeyValueStore<String, ?> store = Stores.keyValueStoreBuilder(
              Stores.inMemoryKeyValueStore(name), Serdes.String(), values)
          .withLoggingDisabled()
          .build();
      store.init(context.getStateStoreContext(), store);
      context.addStateStore(store);
    }
    CycleCoordinator coordinator = new CycleCoordinator(
        syncConfig, new TableManager(catalog), meters, maintenance, new Health());
    coordinator.init(context);
    Consumer<CycleInput> feed =
        // name clash: Kafka's Record, and Iceberg's imported
        value -> coordinator.process(
            new org.apache.kafka.streams.processor.api.Record<>(ID.toString(), value, 0L));
    RealtimeCommitted trigger = unsent.remove(unsent.size() - 1);
    feed.accept(trigger);
    List<IndexLookup> lookups = context.forwarded(CycleCoordinator.LOOKUPS_CHILD).stream()
        .map(f -> (IndexLookup) f.record().value())
        .toList();
    assertThat(lookups).as("the cycle's lookups, one per index partition").hasSize(3);
    assertThat(lookups.get(0).taskDeletes()).as("data files the cycle converts").isNotEmpty();
    // Every partition answers that it has not indexed the files: each is scanned.
    List<IndexResult> answers = lookups.stream()
        .map(l -> new IndexResult(
            l.table(),
            l.cycleId(),
            l.partition(),
            Map.of(),
            List.copyOf(l.taskDeletes().keySet()),
            0,
            0,
            0,
            0))
        .toList();
    answers.forEach(feed);
    assertThat(context.forwarded(CycleCoordinator.TASKS_CHILD))
        .as("convert tasks sent once the round resolved")
        .isNotEmpty();

    context.resetForwards();
    answers.forEach(feed);
    assertThat(context.forwarded())
        .as("what the answers delivered again forwarded (a commit of main would be among it)")
        .isEmpty();
    assertThat(mainSnapshot().snapshotId())
        .as("main's head after the answers delivered again, the convert tasks still out")
        .isEqualTo(mainBefore);
    coordinator.close();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(SyncConfig.Resolver.class)
  void aCyclesDeletionVectorsShareOnePuffinFileAndReplacingOneLeavesItsSiblingsLive(
      SyncConfig.Resolver resolver) throws Exception {
    start(resolver);
    // Three data files on main: keys 0-99, 100-199 and 200-299.
    round(List.of(rows(0, 100), rows(100, 200), rows(200, 300)));
    assertCycle(syncNow(), 1);
    assertThat(BranchFiles.liveDataFiles(table, mainSnapshot())).hasSize(3);

    // One row deleted from each: one cycle, three deletion vectors, one Puffin file.
    round(List.of(deletes(5L, 105L, 205L)));
    List<MainCommitted> first = syncNow();
    assertCycle(first, 1);
    Map<String, DeleteFile> packed = BranchFiles.deletionVectors(table, mainSnapshot());
    assertThat(packed).as("deletion vectors after deleting a row of each file").hasSize(3);
    assertThat(packed.values().stream().map(DeleteFile::location).distinct())
        .as("Puffin files holding the cycle's three vectors")
        .hasSize(1);
    assertThat(packed.values().stream().map(DeleteFile::contentOffset).distinct())
        .as("each vector its own blob of the file")
        .hasSize(3);
    assertThat(mainSnapshot().summary())
        .containsEntry(SummaryKeys.DVS_ADDED, "3")
        .containsEntry(SummaryKeys.DV_FILES_ADDED, "1");

    long packedIn = mainSnapshot().snapshotId();
    // Another row of the first file only: its vector is replaced, its siblings stay.
    round(List.of(deletes(6L)));
    assertCycle(syncNow(), 1);
    Map<String, DeleteFile> after = BranchFiles.deletionVectors(table, mainSnapshot());
    assertThat(after).hasSize(3);
    String shared = packed.values().iterator().next().location();
    assertThat(after.values().stream().filter(d -> d.location().equals(shared)))
        .as("vectors still read from the shared Puffin file")
        .hasSize(2);
    assertThat(mainSnapshot().summary()).containsEntry(SummaryKeys.DVS_REMOVED, "1");
    assertThat(TableRows.read(table, Branches.MAIN).stream().map(r -> r.get("id")))
        .as("rows on main")
        .hasSize(296)
        .doesNotContain(5L, 6L, 105L, 205L);

    // Expiring every snapshot the pipeline does not need drops the snapshot that added the shared
    // file and the one that removed A's vector from it: the file stays, B's and C's vectors are in
    // it.
    SnapshotExpiry.Result expired = SnapshotExpiry.run(
        table, new RetentionPolicy(0, 1), new RetentionPolicy(0, 1), System.currentTimeMillis());
    assertThat(expired.mainExpired()).as("main snapshots expired").isPositive();
    table.refresh();
    assertThat(table.snapshot(packedIn))
        .as("the snapshot that added the shared file")
        .isNull();
    assertThat(Files.exists(Path.of(shared.replaceFirst("^file:", ""))))
        .as("the shared Puffin file %s after the expiry", shared)
        .isTrue();
    assertThat(TableRows.read(table, Branches.MAIN)).hasSize(296);
    assertMainEqualsModel();

    // Both remaining siblings replaced in one cycle, by one group: the shared file is read no more.
    round(List.of(deletes(107L, 207L)));
    assertCycle(syncNow(), 1);
    Map<String, DeleteFile> last = BranchFiles.deletionVectors(table, mainSnapshot());
    assertThat(last).hasSize(3);
    assertThat(last.values().stream().filter(d -> d.location().equals(shared)))
        .as("vectors still read from the first shared Puffin file")
        .isEmpty();
    assertThat(mainSnapshot().summary())
        .containsEntry(SummaryKeys.DVS_ADDED, "2")
        .containsEntry(SummaryKeys.DVS_REMOVED, "2")
        .containsEntry(SummaryKeys.DV_FILES_ADDED, "1");
    assertThat(TableRows.read(table, Branches.MAIN)).hasSize(294);
  }

  /** Upserts of keys {@code from} (inclusive) to {@code to} (exclusive), one batch. */
  private Map<Long, Record> rows(long from, long to) {
    Map<Long, Record> batch = new LinkedHashMap<>();
    for (long id = from; id < to; id++) {
      Record row = GenericRecord.create(ROW);
      row.setField("id", id);
      row.setField("qty", (int) id);
      row.setField("note", "n" + id);
      batch.put(id, row);
    }
    return batch;
  }

  private static Map<Long, Record> deletes(Long... ids) {
    Map<Long, Record> batch = new LinkedHashMap<>();
    for (Long id : ids) {
      batch.put(id, null);
    }
    return batch;
  }

  private Map<Long, Record> batch(Random random, int changes, int keys) {
    return batch(random, changes, keys, 0, 1);
  }

  /**
   * Random changes (upserts and deletes) of existing keys below {@code keys} and of new ones, all of
   * source partition {@code partition} of {@code partitions} (key modulo partitions); the batch
   * keeps each key's last change.
   */
  private Map<Long, Record> batch(
      Random random, int changes, int keys, int partition, int partitions) {
    Map<Long, Record> batch = new LinkedHashMap<>();
    for (int i = 0; i < changes; i++) {
      long any = keys > 0 && random.nextInt(3) > 0 ? random.nextInt(keys) : keys + position + i;
      long id = any - any % partitions + partition;
      boolean delete = model.containsKey(id) && random.nextInt(4) == 0;
      Record row = null;
      if (!delete) {
        row = GenericRecord.create(ROW);
        row.setField("id", id);
        row.setField("qty", random.nextInt(1_000));
        row.setField("note", "n" + random.nextInt(100));
      }
      batch.put(id, row);
    }
    return batch;
  }

  /** Commits batches to realtime as one round (one snapshot), as ingest does, and applies them to the model. */
  private void round(List<Map<Long, Record>> batches) throws IOException {
    table.refresh();
    Schema schema = table.schema();
    Schema written = SourcePositions.withPosition(schema);
    GenericFileWriterFactory writers = new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET)
        .deleteFileFormat(FileFormat.PARQUET)
        .dataSchema(written)
        .equalityFieldIds(new int[] {1})
        .equalityDeleteRowSchema(TypeUtil.select(schema, schema.identifierFieldIds()))
        .build();
    RowDelta delta = table.newRowDelta().toBranch(Branches.REALTIME);
    long rows = 0;
    long keys = 0;
    for (Map<Long, Record> batch : batches) {
      OutputFileFactory files = OutputFileFactory.builderFor(table, 1, ++taskId)
          .format(FileFormat.PARQUET)
          .operationId(UUID.randomUUID().toString())
          .build();
      DataWriter<Record> data = writers.newDataWriter(files.newOutputFile(), table.spec(), null);
      EqualityDeleteWriter<Record> deletes =
          writers.newEqualityDeleteWriter(files.newOutputFile(), table.spec(), null);
      try (data;
          deletes) {
        for (Map.Entry<Long, Record> change : batch.entrySet()) {
          Record key = GenericRecord.create(schema.select("id"));
          key.setField("id", change.getKey());
          deletes.write(key);
          if (change.getValue() != null) {
            Record row = GenericRecord.create(written);
            for (Types.NestedField f : ROW.fields()) {
              row.setField(f.name(), change.getValue().getField(f.name()));
            }
            row.setField(SourcePositions.NAME, SourcePositions.encode(new long[] {position++}));
            data.write(row);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      DataFile dataFile = data.toDataFile();
      if (dataFile.recordCount() > 0) {
        delta.addRows(dataFile);
      }
      DeleteFile deleteFile = deletes.toDeleteFile();
      delta.addDeletes(deleteFile);
      rows += dataFile.recordCount();
      keys += deleteFile.recordCount();
      batch.forEach((id, row) -> {
        if (row == null) {
          model.remove(id);
        } else {
          model.put(id, row);
        }
      });
    }
    long sourceTs = System.currentTimeMillis();
    delta.set(SummaryKeys.MAX_SOURCE_TS_MS, Long.toString(sourceTs));
    delta.commit();
    table.refresh();
    Snapshot head = table.snapshot(Branches.REALTIME);
    unsent.add(new RealtimeCommitted(
        ID.toString(),
        head.snapshotId(),
        head.sequenceNumber(),
        sourceTs,
        batches.size(),
        rows,
        keys,
        System.currentTimeMillis()));
  }

  /** Hands the unsent realtime-commit events to sync; returns main's new commits. */
  private List<MainCommitted> syncNow() {
    unsent.forEach(t -> triggers.pipeInput(t.table(), t));
    triggersSent += unsent.size();
    unsent.clear();
    List<MainCommitted> commits = mainCommits.readValuesToList();
    mainCommitsSeen += commits.size();
    return commits;
  }

  private void assertCycle(List<MainCommitted> commits, int expected) {
    assertThat(commits).as("main commits of the cycle").hasSize(expected);
    table.refresh();
    assertThat(mainSnapshot().snapshotId())
        .as("main's head is the cycle's commit")
        .isEqualTo(commits.get(commits.size() - 1).mainSnapshotId());
    Verifier.Report report = Verifier.verify(table, ID.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
    assertThat(mainDeletes(FileContent.EQUALITY_DELETES))
        .as("equality deletes on main")
        .isEmpty();
    assertThat(mainDeletes(FileContent.POSITION_DELETES))
        .as("main's position deletes are deletion vectors (Puffin)")
        .allMatch(d -> d.format() == FileFormat.PUFFIN && d.referencedDataFile() != null);
    assertMainEqualsModel();
  }

  private void assertMainEqualsModel() {
    Map<Object, Map<String, Object>> main = byId(TableRows.read(table, Branches.MAIN));
    Map<Object, Map<String, Object>> expected = new TreeMap<>();
    model.forEach((id, r) ->
        expected.put(id, Map.of("id", id, "qty", r.getField("qty"), "note", r.getField("note"))));
    assertThat(main).as("main against the model of the source").isEqualTo(expected);
  }

  private Snapshot mainSnapshot() {
    table.refresh();
    return table.snapshot(Branches.MAIN);
  }

  private List<DeleteFile> mainDeletes(FileContent content) {
    return BranchFiles.liveDeleteFiles(table, mainSnapshot()).stream()
        .filter(d -> d.content() == content)
        .toList();
  }
}
