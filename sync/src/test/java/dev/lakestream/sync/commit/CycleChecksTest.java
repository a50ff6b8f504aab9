package dev.lakestream.sync.commit;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.iceberg.DataFileJson;
import dev.lakestream.common.iceberg.DeleteFileJson;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What a cycle may commit: its own tasks' deletion vectors, under the table's own folders. */
class CycleChecksTest {

  private TemporaryWarehouse warehouse;
  private Table table;

  @BeforeEach
  void table() throws Exception {
    warehouse = new TemporaryWarehouse();
    ((SupportsNamespaces) warehouse.catalog()).createNamespace(Namespace.of("db"));
    table = warehouse
        .catalog()
        .createTable(
            TableIdentifier.of("db", "t"),
            new Schema(Types.NestedField.required(1, "id", Types.LongType.get())),
            PartitionSpec.unpartitioned());
  }

  @AfterEach
  void close() {
    warehouse.close();
  }

  private DataFile data(String path) {
    return DataFiles.builder(table.spec())
        .withPath(path)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(100)
        .withRecordCount(10)
        .build();
  }

  private DeleteFile dv(String path, String dataFile) {
    return dv(path, dataFile, 4);
  }

  private DeleteFile dv(String path, String dataFile, long offset) {
    return FileMetadata.deleteFileBuilder(table.spec())
        .ofPositionDeletes()
        .withFormat(FileFormat.PUFFIN)
        .withPath(path)
        .withFileSizeInBytes(50)
        .withRecordCount(1)
        .withReferencedDataFile(dataFile)
        .withContentOffset(offset)
        .withContentSizeInBytes(40)
        .build();
  }

  private CyclePlan plan(List<DataFile> added, List<String> tasks) {
    return new CyclePlan(
        "db.t",
        "c1",
        1,
        2,
        0,
        added.stream()
            .map(f -> new CyclePlan.SequencedFile(DataFileJson.of(f, table.specs()), 1))
            .toList(),
        List.of(),
        List.of(),
        tasks,
        1,
        0,
        false,
        0);
  }

  private ConvertResult result(String cycle, String dataFile, DeleteFile newDv) {
    return result(cycle, dataFile, newDv, List.of());
  }

  private ConvertResult result(
      String cycle, String dataFile, DeleteFile newDv, List<DeleteFile> replaced) {
    return new ConvertResult(
        "db.t",
        cycle,
        dataFile,
        newDv == null ? null : DeleteFileJson.of(newDv, table.specs()),
        replaced.stream().map(d -> DeleteFileJson.of(d, table.specs())).toList(),
        1,
        10,
        100);
  }

  @Test
  void aResultReplacesExactlyItsFilesVectorOnMainNeverASiblingInTheSamePuffin() {
    String a = table.location() + "/data/a.parquet";
    String b = table.location() + "/data/b.parquet";
    String shared = table.location() + "/data/shared.puffin";
    DeleteFile dvA = dv(shared, a, 4);
    DeleteFile dvB = dv(shared, b, 44);
    Supplier<Map<String, DeleteFile>> main = () -> Map.of(a, dvA, b, dvB);
    DeleteFile newA = dv(table.location() + "/data/new.puffin", a);
    CyclePlan plan = plan(List.of(), List.of(a));

    assertThatCode(() ->
            CycleChecks.check(table, plan, List.of(result("c1", a, newA, List.of(dvA))), main))
        .doesNotThrowAnyException();
    // B's vector, relabelled as A's: same Puffin, another blob.
    DeleteFile forged = dv(shared, a, 44);
    assertThatThrownBy(() ->
            CycleChecks.check(table, plan, List.of(result("c1", a, newA, List.of(forged))), main))
        .isInstanceOf(CycleChecks.Refused.class)
        .hasMessageContaining("its vector on main is " + shared + "@4");
    // A new vector that leaves A's old one in place: two vectors for one file.
    assertThatThrownBy(
            () -> CycleChecks.check(table, plan, List.of(result("c1", a, newA, List.of())), main))
        .isInstanceOf(CycleChecks.Refused.class);
    // No new vector, yet one removed.
    assertThatThrownBy(() ->
            CycleChecks.check(table, plan, List.of(result("c1", a, null, List.of(dvA))), main))
        .isInstanceOf(CycleChecks.Refused.class);
    // A "new" vector pointing into a Puffin file main already reads.
    assertThatThrownBy(() -> CycleChecks.check(
            table, plan, List.of(result("c1", a, dv(shared, a, 90), List.of(dvA))), main))
        .isInstanceOf(CycleChecks.Refused.class)
        .hasMessageContaining("a file main already has");
  }

  @Test
  void aCycleOfItsOwnTasksVectorsUnderTheTableIsTaken() {
    String file = table.location() + "/data/a.parquet";
    assertThatCode(() -> CycleChecks.check(
            table,
            plan(List.of(data(file)), List.of(file)),
            List.of(result("c1", file, dv(table.location() + "/data/a-dv.puffin", file))),
            Map::of))
        .doesNotThrowAnyException();
  }

  @Test
  void aResultTheCycleDidNotAskForIsRefused() {
    String file = table.location() + "/data/a.parquet";
    String other = table.location() + "/data/b.parquet";
    assertThatThrownBy(() -> CycleChecks.check(
            table,
            plan(List.of(), List.of(file)),
            List.of(result("c1", other, dv(table.location() + "/data/b-dv.puffin", other))),
            Map::of))
        .isInstanceOf(CycleChecks.Refused.class)
        .hasMessageContaining("did not ask for");
    assertThatThrownBy(() -> CycleChecks.check(
            table,
            plan(List.of(), List.of(file)),
            List.of(result("c0", file, dv(table.location() + "/data/a-dv.puffin", file))),
            Map::of))
        .isInstanceOf(CycleChecks.Refused.class);
  }

  @Test
  void aVectorOfAnotherDataFileIsRefused() {
    String file = table.location() + "/data/a.parquet";
    String other = table.location() + "/data/b.parquet";
    assertThatThrownBy(() -> CycleChecks.check(
            table,
            plan(List.of(), List.of(file)),
            List.of(result("c1", file, dv(table.location() + "/data/a-dv.puffin", other))),
            Map::of))
        .isInstanceOf(CycleChecks.Refused.class)
        .hasMessageContaining("not a deletion vector of that data file");
  }

  @Test
  void filesOutsideTheTablesFoldersAreRefusedAndItsDataPathIsAccepted() {
    String file = table.location() + "/data/a.parquet";
    assertThatThrownBy(() -> CycleChecks.check(
            table,
            plan(List.of(), List.of(file)),
            List.of(result("c1", file, dv("/elsewhere/a-dv.puffin", file))),
            Map::of))
        .isInstanceOf(CycleChecks.Refused.class)
        .hasMessageContaining("not where the table keeps its files");
    assertThatThrownBy(() -> CycleChecks.check(
            table,
            plan(List.of(data(table.location() + "/../other/data/x.parquet")), List.of()),
            List.of(),
            Map::of))
        .isInstanceOf(CycleChecks.Refused.class);

    String dataPath = warehouse.dir().resolve("elsewhere-data").toString();
    table.updateProperties().set(TableProperties.WRITE_DATA_LOCATION, dataPath).commit();
    String moved = dataPath + "/a.parquet";
    assertThatCode(() -> CycleChecks.check(
            table,
            plan(List.of(data(moved)), List.of(moved)),
            List.of(result("c1", moved, dv(dataPath + "/a-dv.puffin", moved))),
            Map::of))
        .doesNotThrowAnyException();
  }
}
