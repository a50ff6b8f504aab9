package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.TemporaryWarehouse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * Parquet writers opened without Hadoop's default files write the same bytes, and their
 * configuration really skips those files.
 */
class WithoutHadoopDefaultsTest {

  private static final Schema SCHEMA = new Schema(
      List.of(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get()),
          Types.NestedField.optional(3, "price", Types.DecimalType.of(12, 2))),
      Set.of(1));

  @Test
  void dataAndEqualityDeleteFilesAreByteForByteTheSameAsWithHadoopsDefaults() throws Exception {
    try (TemporaryWarehouse warehouse = new TemporaryWarehouse()) {
      Table table = warehouse
          .v3Table("t", "items", SCHEMA)
          .withProperty(TableProperties.PARQUET_COMPRESSION, "gzip")
          .withProperty(TableProperties.PARQUET_PAGE_ROW_LIMIT, "500")
          .create();
      List<Record> rows = new ArrayList<>();
      List<Record> keys = new ArrayList<>();
      for (long id = 0; id < 5_000; id++) {
        Record row = GenericRecord.create(SCHEMA);
        row.setField("id", id);
        row.setField("name", "item " + id % 97);
        row.setField("price", BigDecimal.valueOf(id * 7 % 10_000, 2));
        rows.add(row);
        Record key = GenericRecord.create(TypeUtil.select(SCHEMA, Set.of(1)));
        key.setField("id", id * 3);
        keys.add(key);
      }

      List<ContentFile<?>> plain = write(table, rows, keys, Supplier::get);
      List<ContentFile<?>> without = write(table, rows, keys, WithoutHadoopDefaults::open);

      for (int i = 0; i < plain.size(); i++) {
        byte[] expected = Files.readAllBytes(local(plain.get(i).location()));
        byte[] got = Files.readAllBytes(local(without.get(i).location()));
        assertThat(got)
            .as("%s written without Hadoop's default files", plain.get(i).content())
            .isEqualTo(expected);
        assertThat(without.get(i).recordCount()).isEqualTo(plain.get(i).recordCount());
      }
    }
  }

  @Test
  void aConfigurationMadeInsideSkipsHadoopsDefaultFilesAndStillLoadsClasses() throws Exception {
    String fromCoreDefault = "hadoop.common.configuration.version";
    assertThat(new Configuration().get(fromCoreDefault)).as("outside").isNotNull();
    ClassLoader own = Thread.currentThread().getContextClassLoader();

    Configuration inside = WithoutHadoopDefaults.open(Configuration::new);

    assertThat(inside.get(fromCoreDefault)).as("inside").isNull();
    assertThat(inside.getClassByName(WithoutHadoopDefaults.class.getName()))
        .isSameAs(WithoutHadoopDefaults.class);
    assertThat(inside.getResource("META-INF/MANIFEST.MF")).isNotNull();
    assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(own);
  }

  @Test
  void aConfigurationMadeInsideSkipsTheDefaultFilesHadoopsOtherClassesAdd() throws Exception {
    // Loading JobConf adds MapReduce's and YARN's default files to every configuration made after.
    Class.forName("org.apache.hadoop.mapred.JobConf", true, getClass().getClassLoader());
    String fromMapredDefault = "mapreduce.job.maps";
    String fromYarnDefault = "yarn.resourcemanager.hostname";
    Configuration outside = new Configuration();
    assertThat(outside.get(fromMapredDefault)).as("outside").isNotNull();
    assertThat(outside.get(fromYarnDefault)).as("outside").isNotNull();

    Configuration inside = WithoutHadoopDefaults.open(Configuration::new);

    assertThat(inside.get(fromMapredDefault)).as("inside").isNull();
    assertThat(inside.get(fromYarnDefault)).as("inside").isNull();
  }

  @Test
  void theThreadsOwnClassLoaderIsBackAfterAFailure() {
    ClassLoader own = Thread.currentThread().getContextClassLoader();
    try {
      WithoutHadoopDefaults.open(() -> {
        throw new UncheckedIOException(new IOException("disk full"));
      });
    } catch (UncheckedIOException expected) {
      assertThat(expected).hasMessageContaining("disk full");
    }
    assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(own);
  }

  /** One data file and one equality-delete file, each opened through {@code opening}. */
  private static List<ContentFile<?>> write(
      Table table, List<Record> rows, List<Record> keys, Opening opening) throws IOException {
    GenericFileWriterFactory writers = new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET)
        .deleteFileFormat(FileFormat.PARQUET)
        .dataSchema(SCHEMA)
        .equalityFieldIds(new int[] {1})
        .equalityDeleteRowSchema(TypeUtil.select(SCHEMA, Set.of(1)))
        .build();
    OutputFileFactory files =
        OutputFileFactory.builderFor(table, 1, 1).format(FileFormat.PARQUET).build();
    DataWriter<Record> data =
        opening.open(() -> writers.newDataWriter(files.newOutputFile(), table.spec(), null));
    try (data) {
      rows.forEach(data::write);
    }
    EqualityDeleteWriter<Record> deletes = opening.open(
        () -> writers.newEqualityDeleteWriter(files.newOutputFile(), table.spec(), null));
    try (deletes) {
      keys.forEach(deletes::write);
    }
    return List.of(data.toDataFile(), deletes.toDeleteFile());
  }

  private static Path local(String location) {
    return location.startsWith("file:") ? Path.of(URI.create(location)) : Path.of(location);
  }

  private interface Opening {
    <T> T open(Supplier<T> open);
  }
}
