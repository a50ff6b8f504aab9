package dev.lakestream.sync;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.EventSerdes;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.common.event.IndexResult;
import dev.lakestream.common.event.SpillingSerde;
import dev.lakestream.common.event.Unreadable;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.sync.convert.Converter;
import dev.lakestream.sync.convert.FileConverter;
import dev.lakestream.sync.cycle.CycleCoordinator;
import dev.lakestream.sync.index.KeyIndexProcessor;
import dev.lakestream.sync.maintenance.Maintenance;
import io.micrometer.core.instrument.MeterRegistry;
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
 * (the app creates the results topic so). The convert tasks are keyed by data file.
 */
public final class SyncTopology {

  private SyncTopology() {}

  public static Topology build(
      SyncConfig config,
      TableManager tables,
      MeterRegistry meters,
      Maintenance maintenance,
      Health health) {
    Topology topology = new Topology();
    StringDeserializer strings = new StringDeserializer();
    // Plans, tasks and results of any size fit a record: the large ones are spilled to files.
    int limit = config.recordLimitBytes();
    Function<String, Table> load = name -> tables.table(TableIdentifier.parse(name));
    Serde<CyclePlan> plans =
        SpillingSerde.forStore(EventSerdes.cyclePlan(), CyclePlan::table, load, limit);
    Serde<ConvertTask> tasks =
        SpillingSerde.of(EventSerdes.convertTask(), ConvertTask::table, load, limit);
    Serde<ConvertResult> results =
        SpillingSerde.of(EventSerdes.convertResult(), ConvertResult::table, load, limit);
    Serde<IndexLookup> lookups =
        SpillingSerde.of(EventSerdes.indexLookup(), IndexLookup::table, load, limit);
    Serde<IndexResult> indexResults =
        SpillingSerde.of(EventSerdes.indexResult(), IndexResult::table, load, limit);

    // What the coordinator cannot read reaches it as Unreadable, and is dead-lettered with the
    // reason.
    topology.addSource(
        "realtime-commits-in",
        strings,
        Unreadable.lenient(EventSerdes.realtimeCommitted().deserializer()),
        config.realtimeCommitsTopic());
    topology.addSource(
        "convert-results-in",
        strings,
        Unreadable.lenient(results.deserializer()),
        config.convertResultsTopic());
    boolean index = config.indexEnabled();
    if (index) {
      topology.addSource(
          "index-results-in",
          strings,
          Unreadable.lenient(indexResults.deserializer()),
          config.indexResultsTopic());
    }
    String[] coordinatorInputs = index
        ? new String[] {"realtime-commits-in", "convert-results-in", "index-results-in"}
        : new String[] {"realtime-commits-in", "convert-results-in"};
    topology.addProcessor(
        "cycle-coordinator",
        () -> new CycleCoordinator(config, tables, meters, maintenance, health),
        coordinatorInputs);
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(CycleCoordinator.CYCLES), Serdes.String(), plans),
        "cycle-coordinator");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(CycleCoordinator.RESULTS),
            Serdes.String(),
            SpillingSerde.forStore(EventSerdes.convertResult(), ConvertResult::table, load, limit)),
        "cycle-coordinator");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(CycleCoordinator.TABLES),
            Serdes.String(),
            Serdes.Long()),
        "cycle-coordinator");
    if (index) {
      topology.addStateStore(
          Stores.keyValueStoreBuilder(
              Stores.persistentKeyValueStore(CycleCoordinator.INDEX_RESULTS),
              Serdes.String(),
              SpillingSerde.forStore(EventSerdes.indexResult(), IndexResult::table, load, limit)),
          "cycle-coordinator");
      topology.addStateStore(
          Stores.keyValueStoreBuilder(
              Stores.persistentKeyValueStore(CycleCoordinator.INDEX_TASKS),
              Serdes.String(),
              SpillingSerde.forStore(EventSerdes.convertTask(), ConvertTask::table, load, limit)),
          "cycle-coordinator");
      // Each lookup goes to the partition of the index it is for.
      StreamPartitioner<String, Object> byIndexPartition = (topic, key, value, partitions) ->
          Optional.of(Set.of(((IndexLookup) value).partition() % partitions));
      topology.addSink(
          CycleCoordinator.LOOKUPS_CHILD,
          config.indexLookupsTopic(),
          new StringSerializer(),
          narrow(lookups.serializer()),
          byIndexPartition,
          "cycle-coordinator");

      topology.addSource(
          "index-lookups-in", strings, lookups.deserializer(), config.indexLookupsTopic());
      topology.addProcessor(
          "key-index",
          () -> new KeyIndexProcessor(
              tables, meters, config.indexBootstrapIntervalMs(), config.indexBootstrapBudgetMs()),
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
          indexResults.serializer(),
          "key-index");
    }
    topology.addSink(
        CycleCoordinator.TASKS_CHILD,
        config.convertTasksTopic(),
        new StringSerializer(),
        narrow(tasks.serializer()),
        "cycle-coordinator");
    topology.addSink(
        CycleCoordinator.COMMITS_CHILD,
        config.mainCommitsTopic(),
        new StringSerializer(),
        narrow(EventSerdes.mainCommitted().serializer()),
        "cycle-coordinator");
    topology.addSink(
        CycleCoordinator.DEAD_LETTER_CHILD,
        config.pipeline().deadLetterTopic(),
        new StringSerializer(),
        (topic, value) -> value == null ? null : EventSerdes.json(value),
        "cycle-coordinator");

    FileConverter converter = new FileConverter();
    topology.addSource(
        "convert-tasks-in", strings, tasks.deserializer(), config.convertTasksTopic());
    topology.addProcessor(
        "converter", () -> new Converter(tables, converter, meters), "convert-tasks-in");
    topology.addSink(
        "convert-results",
        config.convertResultsTopic(),
        new StringSerializer(),
        results.serializer(),
        "converter");
    return topology;
  }

  @SuppressWarnings("unchecked")
  private static <T> Serializer<Object> narrow(Serializer<T> serializer) {
    return (topic, value) -> serializer.serialize(topic, (T) value);
  }
}
