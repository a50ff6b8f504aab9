package dev.lakestream.sync;

import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.iceberg.CatalogLoader;
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
    SyncConfig config = new SyncConfig(pipeline);
    Properties props = streamsProperties(pipeline);
    LOG.info("Starting sync with configuration:{}", pipeline);
    Topics.ensure(props, List.of(new Topics.Spec(config.realtimeCommitsTopic(), DEFAULT_REALTIME_COMMITS_PARTITIONS)));
    int partitions = Topics.partitions(props, config.realtimeCommitsTopic());
    Topics.ensure(
        props,
        List.of(
            new Topics.Spec(config.convertResultsTopic(), partitions),
            new Topics.Spec(config.convertTasksTopic(), config.convertPartitions()),
            new Topics.Spec(config.mainCommitsTopic(), partitions)));
    if (config.indexEnabled()) {
      Topics.ensure(props, List.of(
          new Topics.Spec(config.indexLookupsTopic(), config.indexPartitions()),
          new Topics.Spec(config.indexResultsTopic(), partitions)));
      int lookups = Topics.partitions(props, config.indexLookupsTopic());
      if (lookups != config.indexPartitions()) {
        throw new IllegalStateException(config.indexLookupsTopic() + " has " + lookups + " partitions but "
            + SyncConfig.INDEX_PARTITIONS + " is " + config.indexPartitions() + "; they must match");
      }
      if (Topics.partitions(props, config.indexResultsTopic()) != partitions) {
        throw new IllegalStateException(config.indexResultsTopic() + " must have as many partitions as "
            + config.realtimeCommitsTopic() + " (" + partitions + "); delete it, it is internal");
      }
    }
    int resultPartitions = Topics.partitions(props, config.convertResultsTopic());
    if (resultPartitions != partitions) {
      throw new IllegalStateException(
          config.convertResultsTopic() + " has " + resultPartitions + " partitions but " + config.realtimeCommitsTopic()
              + " has " + partitions + "; they are joined by table and must match (delete the first; it is internal)");
    }
    MetricsEndpoint metrics = new MetricsEndpoint(pipeline.getInt(PipelineConfig.METRICS_PORT, 9401));
    Catalog catalog = CatalogLoader.load(pipeline.catalogName(), pipeline.catalogProperties());
    Maintenance maintenance =
        new Maintenance(MaintenanceConfig.from(pipeline), catalog, metrics.registry(), null);
    return new StreamsApp("sync",
        SyncTopology.build(config, new TableManager(catalog), metrics.registry(), maintenance), props, catalog, metrics)
        .closing(maintenance);
  }

  public static Properties streamsProperties(PipelineConfig pipeline) {
    return StreamsApp.streamsProperties(pipeline);
  }

  /** {@code sync [--config FILE]}: runs until the process is stopped. */
  public static void main(String[] args) throws Exception {
    StreamsApp.main("sync", args, config -> {
      StreamsApp app = create(config);
      app.start();
      return app;
    });
  }
}
