package dev.lakestream.sync.convert;

import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.TableManager;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The converter fleet's processor: one {@link ConvertGroup} in (keyed by its first data file, so
 * groups spread over partitions and instances), one {@link ConvertResult} out per task of the
 * group, keyed by table back to the cycle coordinator. The group's deletion vectors go into one
 * Puffin file. Stateless: a group processed again after a crash writes a new file and the old one
 * is an orphan, never committed.
 *
 * <p>A group that fails (a data or delete file missing or unreadable, the catalog unreachable) is
 * answered with a failed result per task, each naming the error and the file that caused it: the
 * coordinator abandons the cycle and retries the table later, and the converter goes on with the
 * next group. Kafka's own errors are left to Kafka Streams.
 */
public final class Converter implements Processor<String, ConvertGroup, String, ConvertResult> {

  private static final Logger LOG = LoggerFactory.getLogger(Converter.class);

  private final TableManager tables;
  private final FileConverter converter;
  private final MeterRegistry meters;
  private Counter filesOfTask;
  private final Counter files;
  private final Counter rows;
  private final Counter bytes;
  private final Counter keys;
  private final Counter dvs;
  private final Counter puffins;
  private final Timer time;
  private final Counter failures;
  private final boolean commitOnHandoff;
  private ProcessorContext<String, ConvertResult> context;

  /**
   * @param commitOnHandoff commit the transaction as soon as a group's results are out ({@link
   *     dev.lakestream.common.config.PipelineConfig#commitOnHandoff()}): the coordinator reads them
   *     only then
   */
  public Converter(
      TableManager tables, FileConverter converter, MeterRegistry meters, boolean commitOnHandoff) {
    this.commitOnHandoff = commitOnHandoff;
    this.tables = tables;
    this.converter = converter;
    this.meters = meters;
    this.files = meters.counter("lakestream.sync.convert.files.scanned");
    this.rows = meters.counter("lakestream.sync.convert.rows.scanned");
    this.bytes = meters.counter("lakestream.sync.convert.bytes.read");
    this.keys = meters.counter("lakestream.sync.convert.keys.converted");
    this.dvs = meters.counter("lakestream.sync.convert.dvs.written");
    this.puffins = meters.counter("lakestream.sync.convert.puffin.files.written");
    this.time = meters.timer("lakestream.sync.convert.duration");
    this.failures = meters.counter("lakestream.sync.convert.failures");
  }

  @Override
  public void init(ProcessorContext<String, ConvertResult> context) {
    this.context = context;
    this.filesOfTask = meters.counter(
        "lakestream.sync.convert.task.files", "task", context.taskId().toString());
  }

  @Override
  public void process(Record<String, ConvertGroup> record) {
    ConvertGroup group = record.value();
    if (group == null) {
      return; // a tombstone: nothing to convert
    }
    long started = System.nanoTime();
    List<ConvertResult> results;
    try {
      // Refreshed once per cycle: another instance may have widened a key column or created the
      // table again since this one loaded it, and the keys are read with the table's schema.
      results = converter.convert(
          tables.refreshedFor(TableIdentifier.parse(group.table()), group.cycleId()), group);
    } catch (KafkaException e) {
      throw e;
    } catch (RuntimeException e) {
      failures.increment();
      LOG.warn(
          "Convert group of cycle {} of {} ({} data files, the first {}) failed; the cycle is "
              + "abandoned and tried again later",
          group.cycleId(),
          group.table(),
          group.tasks().size(),
          group.key(),
          e);
      String error = e.getClass().getSimpleName() + ": " + e.getMessage();
      for (ConvertTask task : group.tasks()) {
        context.forward(new Record<>(
            group.table(),
            ConvertResult.failed(group.table(), group.cycleId(), task.dataFilePath(), error),
            context.currentSystemTimeMs()));
      }
      handedOff();
      return;
    }
    time.record(Duration.ofNanos(System.nanoTime() - started));
    boolean wrote = false;
    for (int i = 0; i < results.size(); i++) {
      ConvertResult result = results.get(i);
      if (group.tasks().get(i).positions() == null) {
        files.increment(); // the key index's tasks read no data file
      }
      filesOfTask.increment();
      rows.increment(result.rowsScanned());
      bytes.increment(result.bytesRead());
      keys.increment(result.keysMatched());
      if (result.newDv() != null) {
        dvs.increment();
        wrote = true;
      }
      context.forward(new Record<>(group.table(), result, context.currentSystemTimeMs()));
    }
    if (wrote) {
      puffins.increment();
    }
    handedOff();
    LOG.debug(
        "Converted a group of {} data files of cycle {} of {}",
        results.size(),
        group.cycleId(),
        group.table());
  }

  private void handedOff() {
    if (commitOnHandoff) {
      context.commit();
    }
  }
}
