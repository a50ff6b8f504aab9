package dev.lakestream.sync.convert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.lakestream.common.event.ConvertGroup;
import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.ConvertTask;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.common.iceberg.TableManager;
import dev.lakestream.testkit.KeyFiles;
import dev.lakestream.testkit.TemporaryWarehouse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

/**
 * A converter reads keys with the table's schema as it is when a cycle starts, not as this
 * instance first loaded it: another instance (ingest, or a coordinator elsewhere) may have widened
 * the key column since, and the delete files it read before hold the narrower values.
 */
class ConverterTest {

  private static final TableIdentifier ID = TableIdentifier.of("t", "items");

  @Test
  void aKeyColumnWidenedByAnotherInstanceIsReadWithTheWiderTypeInTheNextCycle() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Schema narrow = new Schema(
          List.of(
              Types.NestedField.required(1, "id", Types.IntegerType.get()),
              Types.NestedField.optional(2, "name", Types.StringType.get())),
          Set.of(1));
      Table other = warehouse.v3Table("t", "items", narrow).create();
      DataFile oldData = KeyFiles.data(other, narrow, List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
      DeleteFile oldDeletes = KeyFiles.deletes(other, narrow, List.of(3, 5));

      // This instance's converter loads the table in its first cycle, with the narrow key.
      TableManager tables = new TableManager(warehouse.catalog());
      Converter converter =
          new Converter(tables, new FileConverter(), new SimpleMeterRegistry(), true);
      MockProcessorContext<String, ConvertResult> context = new MockProcessorContext<>();
      context.setCurrentSystemTimeMs(1_000L);
      converter.init(context);
      converter.process(group("cycle-1", task(other, "cycle-1", oldData, oldDeletes)));
      assertThat(context.forwarded())
          .singleElement()
          .satisfies(f -> assertThat(f.record().value().keysMatched()).isEqualTo(2));
      assertThat(context.committed())
          .as("the results handed to the coordinator ask for the transaction's commit")
          .isTrue();
      context.resetForwards();
      context.resetCommit();

      // Another instance widens the key (the source's ALTER COLUMN id TYPE bigint) and writes
      // files with the wider type.
      other.updateSchema().updateColumn("id", Types.LongType.get()).commit();
      Schema wide = other.schema();
      DataFile newData = KeyFiles.data(other, wide, List.of(0L, 1L, 2L, 4_000_000_000L));
      DeleteFile newDeletes = KeyFiles.deletes(other, wide, List.of(1L, 4_000_000_000L));

      // The next cycle converts the new files and, again, the old ones (as a compaction's
      // reconversion does).
      converter.process(group(
          "cycle-2",
          task(other, "cycle-2", newData, newDeletes),
          task(other, "cycle-2", oldData, oldDeletes)));

      List<ConvertResult> results = context.forwarded().stream()
          .map(f -> (ConvertResult) f.record().value())
          .toList();
      assertThat(results).extracting(ConvertResult::error).containsOnlyNulls();
      assertThat(results)
          .extracting(ConvertResult::dataFilePath, ConvertResult::keysMatched)
          .containsExactlyInAnyOrder(tuple(newData.location(), 2L), tuple(oldData.location(), 2L));
    }
  }

  private static Record<String, ConvertGroup> group(String cycle, ConvertTask... tasks) {
    return new Record<>(
        tasks[0].dataFilePath(), new ConvertGroup(ID.toString(), cycle, List.of(tasks)), 0L);
  }

  private static ConvertTask task(Table table, String cycle, DataFile data, DeleteFile deletes) {
    return new ConvertTask(
        ID.toString(),
        cycle,
        DataFileJson.of(data, table.spec()),
        null,
        List.of(DeleteFileJson.of(deletes, table.spec())));
  }
}
