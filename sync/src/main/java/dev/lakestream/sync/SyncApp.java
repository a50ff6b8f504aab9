package dev.lakestream.sync;

import dev.lakestream.common.app.Health;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
import dev.lakestream.common.iceberg.ManifestCache;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.common.kafka.Topics;
import dev.lakestream.common.metrics.MetricsEndpoint;
import dev.lakestream.sync.maintenance.Maintenance;
import dev.lakestream.sync.maintenance.MaintenanceConfig;
import java.util.List;
import java.util.Properties;
import org.apache.iceberg.catalog.Catalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the sync topology: creates its topics (the convert-results topic with as many partitions as
 * realtime-commits, which it joins with by table), builds the catalog and the topology, and runs it
 * as a {@link StreamsApp} until closed.
 */
public final class SyncApp {

  private static final Logger LOG = LoggerFactory.getLogger(SyncApp.class);
  private static final int DEFAULT_REALTIME_COMMITS_PARTITIONS = 6;

  private SyncApp() {}

  /** The app for {@code pipeline}, its topics created, not started. */
  public static StreamsApp create(PipelineConfig pipeline) throws Exception {
    pipeline.check();
    SyncConfig config = new SyncConfig(pipeline);
    Properties props = streamsProperties(pipeline);
    LOG.info("Starting sync with configuration:{}", pipeline);
    Topics.ensure(
        props,
        List.of(
            new Topics.Spec(config.realtimeCommitsTopic(), DEFAULT_REALTIME_COMMITS_PARTITIONS)));
    int partitions = Topics.partitions(props, config.realtimeCommitsTopic());
    Topics.ensure(
        props,
        List.of(
            new Topics.Spec(config.convertResultsTopic(), partitions),
            new Topics.Spec(config.convertTasksTopic(), config.convertPartitions()),
            new Topics.Spec(config.mainCommitsTopic(), partitions),
            new Topics.Spec(pipeline.deadLetterTopic(), 1)));
    // Topics joined with realtime-commits by table must have its partition count.
    requirePartitions(
        props,
        config.convertResultsTopic(),
        partitions,
        "it is joined with " + config.realtimeCommitsTopic()
            + " by table (delete it; it is internal)");
    if (config.indexEnabled()) {
      Topics.ensure(
          props,
          List.of(
              new Topics.Spec(config.indexLookupsTopic(), config.indexPartitions()),
              new Topics.Spec(config.indexResultsTopic(), partitions)));
      requirePartitions(
          props,
          config.indexLookupsTopic(),
          config.indexPartitions(),
          "it must match " + SyncConfig.INDEX_PARTITIONS);
      requirePartitions(
          props,
          config.indexResultsTopic(),
          partitions,
          "it is joined with " + config.realtimeCommitsTopic()
              + " by table (delete it; it is internal)");
    }
    MetricsEndpoint metrics = new MetricsEndpoint(
        pipeline.metricsBindAddress(), pipeline.getInt(PipelineConfig.METRICS_PORT, 9401));
    ManifestCache.configureShared(pipeline, metrics.registry());
    Health health = new Health();
    Catalog catalog = CatalogLoader.load(pipeline.catalogName(), pipeline.catalogProperties());
    Maintenance maintenance = new Maintenance(
        MaintenanceConfig.from(pipeline), catalog, metrics.registry(), null, health);
    return new StreamsApp(
            "sync",
            SyncTopology.build(
                config, new TableManager(catalog), metrics.registry(), maintenance, health),
            props,
            catalog,
            metrics,
            health)
        .closing(maintenance);
  }

  private static void requirePartitions(Properties props, String topic, int expected, String why)
      throws InterruptedException {
    int found = Topics.partitions(props, topic);
    if (found != expected) {
      throw new IllegalStateException(
          topic + " has " + found + " partitions, not " + expected + ": " + why);
    }
  }

  public static Properties streamsProperties(PipelineConfig pipeline) {
    return StreamsApp.streamsProperties(pipeline);
  }

  /** Runs the app of {@code config} until the process is stopped ({@code lakestream sync}). */
  public static int run(PipelineConfig config) throws Exception {
    return StreamsApp.runUntilStopped("sync", config, c -> {
      StreamsApp app = create(c);
      app.start();
      return app;
    });
  }
}
