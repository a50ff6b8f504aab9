package dev.lakestream.ingest;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.event.EventSerdes;
import dev.lakestream.common.event.FilesWritten;
import dev.lakestream.common.event.RealtimeCommitted;
import dev.lakestream.common.event.Unreadable;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.ingest.buffer.BufferedChange;
import dev.lakestream.ingest.buffer.ChangeBuffer;
import dev.lakestream.ingest.commit.RealtimeCommitter;
import dev.lakestream.ingest.commit.SourceTopicIds;
import dev.lakestream.ingest.fence.SourceFence;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The ingest topology: change topics into the {@link ChangeBuffer} (with the dead-letter topic
 * beside it), flushed batches through the app's files-written topic (keyed by table) into the
 * {@link RealtimeCommitter}, and realtime commits announced on {@code <prefix>.realtime-commits}.
 *
 * <pre>
 *   change topics ─> change-buffer ─┬─> &lt;app&gt;-files-written ─> realtime-committer ─> &lt;prefix&gt;.realtime-commits
 *                                   └─> &lt;prefix&gt;.dlq      (and a batch that cannot be committed) ─> &lt;prefix&gt;.dlq
 * </pre>
 */
public final class IngestTopology {

  private IngestTopology() {}

  public static Topology build(IngestConfig config, TableManager tables, MeterRegistry meters) {
    return build(config, tables, meters, new Health());
  }

  public static Topology build(
      IngestConfig config, TableManager tables, MeterRegistry meters, Health health) {
    return build(config, tables, meters, health, SourceTopicIds.unknown());
  }

  /**
   * The topology; {@code topicIds} tells a source topic deleted and created again from the one the
   * tables' offsets are of (without IDs, offsets are taken as they are recorded).
   */
  public static Topology build(
      IngestConfig config,
      TableManager tables,
      MeterRegistry meters,
      Health health,
      SourceTopicIds topicIds) {
    Topology topology = new Topology();
    ByteArrayDeserializer bytes = new ByteArrayDeserializer();
    if (config.topics() != null) {
      topology.addSource("changes", bytes, bytes, config.topics().toArray(String[]::new));
    } else {
      topology.addSource("changes", bytes, bytes, config.topicsPattern());
    }
    topology.addProcessor(
        "change-buffer",
        () -> new ChangeBuffer(config, tables, meters, health, topicIds),
        "changes");
    // The open batches are on the heap, not in a store: a restarted task reads them again from the
    // source topics, from where the batch-starts store says each begins.
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(ChangeBuffer.STARTS_STORE),
                Serdes.String(),
                Serdes.ByteArray())
            .withCachingEnabled(),
        "change-buffer");
    // An earlier version's open batches, restored from their changelogs after an upgrade; on the
    // heap, as they are empty but for the batches open at the upgrade.
    for (String legacy :
        new String[] {ChangeBuffer.LEGACY_STORE, ChangeBuffer.LEGACY_CHANGELOG_STORE}) {
      topology.addStateStore(
          Stores.keyValueStoreBuilder(
              Stores.inMemoryKeyValueStore(legacy), Serdes.String(), BufferedChange.serde()),
          "change-buffer");
    }
    // Cached: the fence overwrites its partition's position with every change; the cache writes
    // the store and its changelog once per commit (Kafka Streams flushes it before each commit).
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(SourceFence.STORE), Serdes.String(), Serdes.String())
            .withCachingEnabled(),
        "change-buffer");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
                Stores.persistentKeyValueStore(ChangeBuffer.CHANGELOG_STORE),
                Serdes.String(),
                BufferedChange.serde())
            .withLoggingDisabled(),
        "change-buffer");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(ChangeBuffer.SCHEMA_STORE),
            Serdes.String(),
            Serdes.ByteArray()),
        "change-buffer");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(ChangeBuffer.FLUSHED_STORE),
            Serdes.String(),
            Serdes.Long()),
        "change-buffer");
    topology.addSink(
        ChangeBuffer.FILES_WRITTEN_CHILD,
        config.filesWrittenTopic(),
        new StringSerializer(),
        EventSerdes.filesWritten().serializer(),
        "change-buffer");
    topology.addSink(
        ChangeBuffer.DEAD_LETTER_CHILD,
        config.deadLetterTopic(),
        new ByteArraySerializer(),
        new ByteArraySerializer(),
        "change-buffer");

    topology.addSource(
        "files-written-in",
        new StringDeserializer(),
        Unreadable.lenient((topic, value) -> FilesWritten.fromTopic(value)),
        config.filesWrittenTopic());
    topology.addProcessor(
        "realtime-committer",
        () -> new RealtimeCommitter(config, tables, meters, health, topicIds),
        "files-written-in");
    topology.addStateStore(
        Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(RealtimeCommitter.STORE),
            Serdes.String(),
            EventSerdes.filesWritten()),
        "realtime-committer");
    // One sink for both outputs of the committer: announcements, and batches it cannot commit.
    String commits = config.realtimeCommitsTopic();
    String deadLetters = config.deadLetterTopic();
    topology.addSink(
        "realtime-commits",
        (key, value, context) -> value instanceof RealtimeCommitted ? commits : deadLetters,
        new StringSerializer(),
        DeadLetters.capped(
            (topic, value) -> value == null ? null : EventSerdes.json(value), deadLetters),
        "realtime-committer");
    return topology;
  }
}
