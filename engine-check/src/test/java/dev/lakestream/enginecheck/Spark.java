package dev.lakestream.enginecheck;

import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/** A local Spark session with the pipeline's warehouse as the Iceberg catalog {@code lakestream}. */
final class Spark {

  static final String CATALOG = "lakestream";

  private Spark() {}

  /**
   * The pipeline's default catalog: Iceberg's JDBC catalog on SQLite in the warehouse. Spark's
   * catalog name must be the writer's (the JDBC catalog keys its rows by it).
   */
  static SparkSession open(Path warehouse) {
    return builder(warehouse).getOrCreate();
  }

  static SparkSession.Builder builder(Path warehouse) {
    return SparkSession.builder()
        .master("local[2]")
        .appName("lakestream-engine-check")
        .config("spark.ui.enabled", "false")
        .config(
            "spark.sql.warehouse.dir",
            Path.of(System.getProperty("java.io.tmpdir"), "spark-warehouse").toString())
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config(
            "spark.sql.extensions",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog." + CATALOG, "org.apache.iceberg.spark.SparkCatalog")
        .config(
            "spark.sql.catalog." + CATALOG + ".catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog")
        .config(
            "spark.sql.catalog." + CATALOG + ".uri",
            "jdbc:sqlite:" + warehouse.resolve("catalog.db"))
        .config("spark.sql.catalog." + CATALOG + ".warehouse", warehouse.toString())
        .config("spark.sql.catalog." + CATALOG + ".jdbc.schema-version", "V1");
  }
}
