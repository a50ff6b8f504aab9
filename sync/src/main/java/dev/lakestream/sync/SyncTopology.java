package dev.lakestream.sync;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.CycleInput;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.EventSerdes;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.event.SpillingSerde;
import dev.lakestream.common.event.Unreadable;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.sync.convert.Converter;
import dev.lakestream.sync.convert.FileConverter;
import dev.lakestream.sync.cycle.CycleCoordinator;
import dev.lakestream.sync.index.KeyIndexProcessor;
import dev.lakestream.sync.maintenance.Maintenance;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.state.Stores;

/**
 * The sync topology:
 *
 * <pre>
 *   &lt;prefix&gt;.realtime-commits ──┐
 *                                ├─> cycle-coordinator ─┬─> &lt;app&gt;-convert-tasks ─> converter ─> &lt;app&gt;-convert-results
 *   &lt;app&gt;-convert-results ──────┘                      └─> &lt;prefix&gt;.main-commits
 * </pre>
 *
 * With the key index ({@code sync.resolver=index} for any table) the coordinator also sends one
 * lookup per index partition to {@code <app>-index-lookups} (partitioned by index partition), whose
 * {@code key-index} processor answers on {@code <app>-index-results}, keyed by table.
 *
 * Records the coordinator cannot apply (an event for a table the pipeline does not manage, a
 * result for a file its cycle did not ask for) go to the dead-letter topic, with the reason.
 *
 * <p>The coordinator's inputs are keyed by table and must have the same number of partitions
 * (the app creates the results topic so). The convert tasks travel in groups ({@link
 * ConvertGroup}), keyed by a data file of the group.
 */
public final class SyncTopology {

  private SyncTopology() {}

  private static final String COORDINATOR = "cycle-coordinator";

  /** The serdes of sync's records, which spill above the record limit ({@link SpillingSerde}). */
  private record EventSerdesOf(
      Serde<ConvertGroup> tasks,
      Serde<ConvertResult> results,
      Serde<IndexLookup> lookups,
      Serde<IndexResult> indexResults,
      Function<String, Table> load,
      int limit) {

    static EventSerdesOf of(SyncConfig config, TableManager tables) {
      int limit = config.recordLimitBytes();
      Function<String, Table> load = name -> tables.table(TableIdentifier.parse(name));
      return new EventSerdesOf(
          SpillingSerde.of(EventSerdes.convertGroup(), ConvertGroup::table, load, limit),
          SpillingSerde.of(EventSerdes.convertResult(), ConvertResult::table, load, limit),
          SpillingSerde.of(EventSerdes.indexLookup(), IndexLookup::table, load, limit),
          SpillingSerde.of(EventSerdes.indexResult(), IndexResult::table, load, limit),
          load,
          limit);
    }

    /** The same serde for a state store's values: an unreadable spilled value reads as absent. */
    <T> Serde<T> forStore(Serde<T> serde, Function<T, String> tableOf) {
      return SpillingSerde.forStore(serde, tableOf, load, limit);
    }
  }

  public static Topology build(
      SyncConfig config,
      TableManager tables,
      MeterRegistry meters,
      Maintenance maintenance,
      Health health) {
    Topology topology = new Topology();
    EventSerdesOf serdes = EventSerdesOf.of(config, tables);
    coordinator(
        topology,
        config,
        serdes,
        () -> new CycleCoordinator(config, tables, meters, maintenance, health));
    if (config.indexEnabled()) {
      keyIndex(topology, config, serdes, tables, meters);
    }
    converter(topology, config, serdes, tables, meters);
    return topology;
  }

  /** The coordinator: its inputs (what it cannot read reaches it as Unreadable), its stores, its outputs. */
  private static void coordinator(
      Topology topology,
      SyncConfig config,
      EventSerdesOf serdes,
      ProcessorSupplier<String, CycleInput, String, Object> supplier) {
    StringDeserializer strings = new StringDeserializer();
    List<String> inputs = new ArrayList<>(List.of("realtime-commits-in", "convert-results-in"));
    topology.addSource(
        "realtime-commits-in",
        strings,
        Unreadable.lenient(EventSerdes.realtimeCommitted().deserializer()),
        config.realtimeCommitsTopic());
    topology.addSource(
        "convert-results-in",
        strings,
        Unreadable.lenient(serdes.results().deserializer()),
        config.convertResultsTopic());
    if (config.indexEnabled()) {
      topology.addSource(
          "index-results-in",
          strings,
          Unreadable.lenient(serdes.indexResults().deserializer()),
          config.indexResultsTopic());
      inputs.add("index-results-in");
    }
    topology.addProcessor(COORDINATOR, supplier, inputs.toArray(String[]::new));
    store(
        topology,
        CycleCoordinator.CYCLES,
        serdes.forStore(EventSerdes.cyclePlan(), CyclePlan::table));
    store(
        topology,
        CycleCoordinator.RESULTS,
        serdes.forStore(EventSerdes.convertResult(), ConvertResult::table));
    store(topology, CycleCoordinator.TABLES, Serdes.Long());
    if (config.indexEnabled()) {
      store(
          topology,
          CycleCoordinator.INDEX_RESULTS,
          serdes.forStore(EventSerdes.indexResult(), IndexResult::table));
      store(
          topology,
          CycleCoordinator.INDEX_TASKS,
          serdes.forStore(EventSerdes.convertTask(), ConvertTask::table));
      // Each lookup goes to the partition of the index it is for.
      StreamPartitioner<String, Object> byIndexPartition = (topic, key, value, partitions) ->
          Optional.of(Set.of(((IndexLookup) value).partition() % partitions));
      topology.addSink(
          CycleCoordinator.LOOKUPS_CHILD,
          config.indexLookupsTopic(),
          new StringSerializer(),
          narrow(serdes.lookups().serializer()),
          byIndexPartition,
          COORDINATOR);
    }
    topology.addSink(
        CycleCoordinator.TASKS_CHILD,
        config.convertTasksTopic(),
        new StringSerializer(),
        narrow(serdes.tasks().serializer()),
        COORDINATOR);
    topology.addSink(
        CycleCoordinator.COMMITS_CHILD,
        config.mainCommitsTopic(),
        new StringSerializer(),
        narrow(EventSerdes.mainCommitted().serializer()),
        COORDINATOR);
    topology.addSink(
        CycleCoordinator.DEAD_LETTER_CHILD,
        config.pipeline().deadLetterTopic(),
        new StringSerializer(),
        DeadLetters.capped(
            (topic, value) -> value == null ? null : EventSerdes.json(value),
            config.pipeline().deadLetterTopic()),
        COORDINATOR);
  }

  private static <V> void store(Topology topology, String name, Serde<V> values) {
    topology.addStateStore(
        Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), values),
        COORDINATOR);
  }

  /** The key index: lookups in by index partition, answers out by table. */
  private static void keyIndex(
      Topology topology,
      SyncConfig config,
      EventSerdesOf serdes,
      TableManager tables,
      MeterRegistry meters) {
    topology.addSource(
        "index-lookups-in",
        new StringDeserializer(),
        serdes.lookups().deserializer(),
        config.indexLookupsTopic());
    topology.addProcessor(
        "key-index",
        () -> new KeyIndexProcessor(
            tables,
            meters,
            config.indexBootstrapIntervalMs(),
            config.indexBootstrapBudgetMs(),
            config.pipeline().commitOnHandoff()),
        "index-lookups-in");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(KeyIndexProcessor.STORE),
            Serdes.Bytes(),
            Serdes.ByteArray()),
        "key-index");
    topology.addSink(
        "index-results",
        config.indexResultsTopic(),
        new StringSerializer(),
        serdes.indexResults().serializer(),
        "key-index");
  }

  /** The converter fleet: groups of tasks in by their first data file, results out by table. */
  private static void converter(
      Topology topology,
      SyncConfig config,
      EventSerdesOf serdes,
      TableManager tables,
      MeterRegistry meters) {
    FileConverter converter =
        new FileConverter(config.convertReadThreads(), config.convertVectorsKeptBytes());
    FunctionCounter.builder(
            "lakestream.sync.convert.vectors.read", converter, FileConverter::vectorsRead)
        .description("current deletion vectors read from storage to merge into new ones")
        .register(meters);
    FunctionCounter.builder(
            "lakestream.sync.convert.vectors.reused", converter, FileConverter::vectorsReused)
        .description("current deletion vectors merged from memory: this converter wrote them")
        .register(meters);
    topology.addSource(
        "convert-tasks-in",
        new StringDeserializer(),
        serdes.tasks().deserializer(),
        config.convertTasksTopic());
    topology.addProcessor(
        "converter",
        () -> new Converter(tables, converter, meters, config.pipeline().commitOnHandoff()),
        "convert-tasks-in");
    topology.addSink(
        "convert-results",
        config.convertResultsTopic(),
        new StringSerializer(),
        serdes.results().serializer(),
        "converter");
  }

  @SuppressWarnings("unchecked")
  private static <T> Serializer<Object> narrow(Serializer<T> serializer) {
    return (topic, value) -> serializer.serialize(topic, (T) value);
  }
}
