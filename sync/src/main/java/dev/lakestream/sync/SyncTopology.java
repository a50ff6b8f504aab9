package dev.lakestream.sync;

import dev.lakestream.common.event.EventSerdes;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.sync.convert.Converter;
import dev.lakestream.sync.convert.FileConverter;
import dev.lakestream.common.event.IndexLookup;
import dev.lakestream.sync.cycle.CycleCoordinator;
import dev.lakestream.sync.index.KeyIndexProcessor;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.processor.StreamPartitioner;
import dev.lakestream.sync.maintenance.Maintenance;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.Topology;
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
 * The coordinator's inputs are keyed by table and must have the same number of partitions
 * (the app creates the results topic so). The convert tasks are keyed by data file.
 */
public final class SyncTopology {

  private SyncTopology() {}

  public static Topology build(SyncConfig config, TableManager tables, MeterRegistry meters, Maintenance maintenance) {
    Topology topology = new Topology();
    StringDeserializer strings = new StringDeserializer();
    topology.addSource("realtime-commits-in", strings, widen(EventSerdes.realtimeCommitted().deserializer()),
        config.realtimeCommitsTopic());
    topology.addSource("convert-results-in", strings, widen(EventSerdes.convertResult().deserializer()),
        config.convertResultsTopic());
    boolean index = config.indexEnabled();
    if (index) {
      topology.addSource("index-results-in", strings, widen(EventSerdes.indexResult().deserializer()),
          config.indexResultsTopic());
    }
    String[] coordinatorInputs = index
        ? new String[] {"realtime-commits-in", "convert-results-in", "index-results-in"}
        : new String[] {"realtime-commits-in", "convert-results-in"};
    topology.addProcessor("cycle-coordinator", () -> new CycleCoordinator(config, tables, meters, maintenance),
        coordinatorInputs);
    topology.addStateStore(
        Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CycleCoordinator.CYCLES), Serdes.String(),
            EventSerdes.cyclePlan()),
        "cycle-coordinator");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CycleCoordinator.RESULTS), Serdes.String(),
            EventSerdes.convertResult()),
        "cycle-coordinator");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CycleCoordinator.TABLES), Serdes.String(),
            Serdes.Long()),
        "cycle-coordinator");
    if (index) {
      topology.addStateStore(
          Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CycleCoordinator.INDEX_RESULTS), Serdes.String(),
              EventSerdes.indexResult()),
          "cycle-coordinator");
      topology.addStateStore(
          Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CycleCoordinator.INDEX_TASKS), Serdes.String(),
              EventSerdes.convertTask()),
          "cycle-coordinator");
      // Each lookup goes to the partition of the index it is for.
      StreamPartitioner<String, Object> byIndexPartition = (topic, key, value, partitions) ->
          Optional.of(Set.of(((IndexLookup) value).partition() % partitions));
      topology.addSink(CycleCoordinator.LOOKUPS_CHILD, config.indexLookupsTopic(), new StringSerializer(),
          narrow(EventSerdes.indexLookup().serializer()), byIndexPartition, "cycle-coordinator");

      topology.addSource("index-lookups-in", strings, EventSerdes.indexLookup().deserializer(), config.indexLookupsTopic());
      topology.addProcessor("key-index", () -> new KeyIndexProcessor(tables, meters, config.indexBootstrapIntervalMs(),
          config.indexBootstrapBudgetMs()), "index-lookups-in");
      topology.addStateStore(
          Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(KeyIndexProcessor.STORE), Serdes.Bytes(),
              Serdes.ByteArray()),
          "key-index");
      topology.addSink("index-results", config.indexResultsTopic(), new StringSerializer(),
          EventSerdes.indexResult().serializer(), "key-index");
    }
    topology.addSink(CycleCoordinator.TASKS_CHILD, config.convertTasksTopic(), new StringSerializer(),
        narrow(EventSerdes.convertTask().serializer()), "cycle-coordinator");
    topology.addSink(CycleCoordinator.COMMITS_CHILD, config.mainCommitsTopic(), new StringSerializer(),
        narrow(EventSerdes.mainCommitted().serializer()), "cycle-coordinator");

    FileConverter converter = new FileConverter();
    topology.addSource("convert-tasks-in", strings, EventSerdes.convertTask().deserializer(), config.convertTasksTopic());
    topology.addProcessor("converter", () -> new Converter(tables, converter, meters), "convert-tasks-in");
    topology.addSink("convert-results", config.convertResultsTopic(), new StringSerializer(),
        EventSerdes.convertResult().serializer(), "converter");
    return topology;
  }

  @SuppressWarnings("unchecked")
  private static Deserializer<Object> widen(Deserializer<?> deserializer) {
    return (Deserializer<Object>) deserializer;
  }

  @SuppressWarnings("unchecked")
  private static <T> Serializer<Object> narrow(Serializer<T> serializer) {
    return (topic, value) -> serializer.serialize(topic, (T) value);
  }
}
