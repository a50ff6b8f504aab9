package dev.lakestream.sync.convert;

import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.TableManager;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The converter fleet's processor: one {@link ConvertTask} in (keyed by data file, so tasks spread
 * over partitions and instances), one {@link ConvertResult} out, keyed by table back to the cycle
 * coordinator. Stateless: a task processed again after a crash writes a new vector and the old one
 * is an orphan, never committed.
 *
 * <p>A task that fails (a data or delete file missing or unreadable, the catalog unreachable) is
 * answered with a failed result that names the file and the error: the coordinator abandons the
 * cycle and retries the table later, and the converter goes on with the next task. Kafka's own
 * errors are left to Kafka Streams.
 */
public final class Converter implements Processor<String, ConvertTask, String, ConvertResult> {

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
  private final Timer time;
  private final Counter failures;
  private ProcessorContext<String, ConvertResult> context;

  public Converter(TableManager tables, FileConverter converter, MeterRegistry meters) {
    this.tables = tables;
    this.converter = converter;
    this.meters = meters;
    this.files = meters.counter("lakestream.sync.convert.files.scanned");
    this.rows = meters.counter("lakestream.sync.convert.rows.scanned");
    this.bytes = meters.counter("lakestream.sync.convert.bytes.read");
    this.keys = meters.counter("lakestream.sync.convert.keys.converted");
    this.dvs = meters.counter("lakestream.sync.convert.dvs.written");
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
  public void process(Record<String, ConvertTask> record) {
    ConvertTask task = record.value();
    long started = System.nanoTime();
    ConvertResult result;
    try {
      result = converter.convert(tables.table(TableIdentifier.parse(task.table())), task);
    } catch (KafkaException e) {
      throw e;
    } catch (RuntimeException e) {
      failures.increment();
      LOG.warn(
          "Convert task of cycle {} of {} for {} failed; the cycle is abandoned and tried again later",
          task.cycleId(),
          task.table(),
          task.dataFilePath(),
          e);
      String error = e.getClass().getSimpleName() + ": " + e.getMessage();
      context.forward(new Record<>(
          task.table(),
          ConvertResult.failed(task.table(), task.cycleId(), task.dataFilePath(), error),
          context.currentSystemTimeMs()));
      return;
    }
    time.record(Duration.ofNanos(System.nanoTime() - started));
    if (task.positions() == null) {
      files.increment(); // the key index's tasks read no data file
    }
    filesOfTask.increment();
    rows.increment(result.rowsScanned());
    bytes.increment(result.bytesRead());
    keys.increment(result.keysMatched());
    if (result.newDv() != null) {
      dvs.increment();
    }
    LOG.debug(
        "Converted {}: {} of {} rows deleted",
        result.dataFilePath(),
        result.keysMatched(),
        result.rowsScanned());
    context.forward(new Record<>(task.table(), result, context.currentSystemTimeMs()));
  }
}
