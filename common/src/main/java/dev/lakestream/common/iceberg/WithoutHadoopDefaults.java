package dev.lakestream.common.iceberg;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.encryption.EncryptedOutputFile;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.FileWriterFactory;

/**
 * Opens Iceberg's Parquet writers without Hadoop reading its configuration files for each one.
 *
 * <p>For a file that is not a {@code HadoopOutputFile} (this project's {@link LocalFileIO}, {@code
 * S3FileIO}, any object store's FileIO), Iceberg 1.12's {@code Parquet.WriteBuilder} makes a new
 * Hadoop {@code Configuration} per file, and the first key it sets makes that configuration parse
 * {@code core-default.xml} (and {@code core-site.xml} if there is one) from the classpath, and
 * every default resource Hadoop's other classes added once loaded ({@code mapred-default.xml} and
 * {@code yarn-default.xml} after {@code JobConf}; a lookup of each missing {@code *-site.xml}
 * searches every jar): about 2 ms of CPU per file, which was a fifth of ingest's stream threads at
 * 5,000 changes/s with a 500 ms flush (docs/benchmarks.md, Profile). A Parquet writer on such a
 * file reads only Parquet's own keys ({@code parquet.*}, each with its default in Parquet's code,
 * and the ones Iceberg sets from the table's {@code write.parquet.*} properties); none of these
 * files holds one.
 *
 * <p>A {@code Configuration} takes its class loader from the thread's context class loader when it
 * is made, and reads those files through it. {@link #open} runs the opening of a writer with a
 * context class loader that does not find these files and hands everything else (every class and
 * every other resource) to the thread's own; {@link #writers} wraps a writer factory so. The
 * writer's output is byte for byte the same (pinned by {@code WithoutHadoopDefaultsTest}).
 *
 * <p>Caveat: a {@code core-site.xml} (or another Hadoop site file) on the classpath is not read by
 * these writers; this project configures Parquet through table properties, as Iceberg does.
 */
public final class WithoutHadoopDefaults {

  /**
   * Hadoop's default resources: core's, and those its HDFS, YARN and MapReduce classes add to
   * every configuration once loaded ({@code JobConf} adds MapReduce's and YARN's, 300 kB of XML).
   */
  static final Set<String> FILES = Set.of(
      "core-default.xml",
      "core-site.xml",
      "hdfs-default.xml",
      "hdfs-site.xml",
      "hdfs-rbf-default.xml",
      "hdfs-rbf-site.xml",
      "mapred-default.xml",
      "mapred-site.xml",
      "yarn-default.xml",
      "yarn-site.xml");

  private static volatile Hiding last;

  private WithoutHadoopDefaults() {}

  /**
   * {@code writers}, each writer it makes opened without Hadoop's default files. The output file is
   * made by the caller, outside: a FileIO that builds its client on first use would otherwise start
   * that client's threads with this class loader.
   */
  public static <T> FileWriterFactory<T> writers(FileWriterFactory<T> writers) {
    return new FileWriterFactory<>() {
      @Override
      public DataWriter<T> newDataWriter(
          EncryptedOutputFile file, PartitionSpec spec, StructLike partition) {
        return open(() -> writers.newDataWriter(file, spec, partition));
      }

      @Override
      public EqualityDeleteWriter<T> newEqualityDeleteWriter(
          EncryptedOutputFile file, PartitionSpec spec, StructLike partition) {
        return open(() -> writers.newEqualityDeleteWriter(file, spec, partition));
      }

      @Override
      public PositionDeleteWriter<T> newPositionDeleteWriter(
          EncryptedOutputFile file, PartitionSpec spec, StructLike partition) {
        return open(() -> writers.newPositionDeleteWriter(file, spec, partition));
      }
    };
  }

  /**
   * Writers of Parquet data files of {@code table} in {@code schema}, without a dictionary for
   * columns unique in a file ({@link UniqueColumns#dataFile}), opened without Hadoop's defaults.
   */
  public static FileWriterFactory<Record> dataWriters(Table table, Schema schema) {
    return writers(new GenericFileWriterFactory.Builder(table)
        .dataFileFormat(FileFormat.PARQUET)
        .dataSchema(schema)
        .writerProperties(UniqueColumns.dataFile(schema))
        .build());
  }

  /** Runs {@code open} (the call that makes a Parquet writer) without Hadoop's default files. */
  public static <T> T open(Supplier<T> open) {
    Thread thread = Thread.currentThread();
    ClassLoader own = thread.getContextClassLoader();
    thread.setContextClassLoader(
        hidingFor(own != null ? own : WithoutHadoopDefaults.class.getClassLoader()));
    try {
      return open.get();
    } finally {
      thread.setContextClassLoader(own);
    }
  }

  private static Hiding hidingFor(ClassLoader parent) {
    Hiding hiding = last;
    if (hiding == null || hiding.getParent() != parent) {
      hiding = new Hiding(parent);
      last = hiding;
    }
    return hiding;
  }

  /** Delegates everything to its parent except Hadoop's two default configuration files. */
  private static final class Hiding extends ClassLoader {

    static {
      registerAsParallelCapable();
    }

    Hiding(ClassLoader parent) {
      super(parent);
    }

    @Override
    public URL getResource(String name) {
      return FILES.contains(name) ? null : super.getResource(name);
    }

    @Override
    public Enumeration<URL> getResources(String name) throws IOException {
      return FILES.contains(name) ? Collections.emptyEnumeration() : super.getResources(name);
    }

    @Override
    public InputStream getResourceAsStream(String name) {
      return FILES.contains(name) ? null : super.getResourceAsStream(name);
    }
  }
}
