package dev.lakestream.common.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.debezium.BadChangeException;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.types.Types.NestedField;
import org.junit.jupiter.api.Test;

class SchemaEvolutionTest {

  private static final Types.StructType TABLE = Types.StructType.of(
      NestedField.required(1, "id", Types.LongType.get()),
      NestedField.optional(2, "qty", Types.IntegerType.get()),
      NestedField.optional(3, "score", Types.FloatType.get()),
      NestedField.optional(4, "price", Types.DecimalType.of(10, 2)),
      NestedField.optional(5, "name", Types.StringType.get()),
      NestedField.optional(
          6, "addr", Types.StructType.of(NestedField.optional(7, "city", Types.StringType.get()))));

  @Test
  void sameTypeNeedsNoChange() {
    assertThat(SchemaEvolution.plan(TABLE, TABLE)).isEmpty();
  }

  @Test
  void addsNewColumnsAtTopLevelAndInsideStructs() {
    Types.StructType incoming = Types.StructType.of(
        NestedField.required(1, "id", Types.LongType.get()),
        NestedField.optional(2, "email", Types.StringType.get()),
        NestedField.optional(
            3,
            "addr",
            Types.StructType.of(
                NestedField.optional(4, "city", Types.StringType.get()),
                NestedField.optional(5, "zip", Types.StringType.get()))));
    assertThat(SchemaEvolution.plan(TABLE, incoming))
        .containsExactly(
            new SchemaEvolution.AddColumn(null, "email", Types.StringType.get()),
            new SchemaEvolution.AddColumn("addr", "zip", Types.StringType.get()));
  }

  @Test
  void widensWhereIcebergAllows() {
    Types.StructType incoming = Types.StructType.of(
        NestedField.optional(2, "qty", Types.LongType.get()),
        NestedField.optional(3, "score", Types.DoubleType.get()),
        NestedField.optional(4, "price", Types.DecimalType.of(14, 2)));
    assertThat(SchemaEvolution.plan(TABLE, incoming))
        .containsExactly(
            new SchemaEvolution.WidenColumn("qty", Types.LongType.get()),
            new SchemaEvolution.WidenColumn("score", Types.DoubleType.get()),
            new SchemaEvolution.WidenColumn("price", Types.DecimalType.of(14, 2)));
  }

  @Test
  void acceptsNarrowerTypeThatFitsTheColumn() {
    Types.StructType incoming =
        Types.StructType.of(NestedField.optional(1, "id", Types.IntegerType.get()));
    assertThat(SchemaEvolution.plan(TABLE, incoming)).isEmpty();
  }

  @Test
  void rejectsChangeIcebergCannotExpressNamingColumnAndTypes() {
    Types.StructType incoming =
        Types.StructType.of(NestedField.optional(1, "name", Types.IntegerType.get()));
    assertThatThrownBy(() -> SchemaEvolution.plan(TABLE, incoming))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining(
            "column \"name\" is string in the table but the source now sends int");
  }

  @Test
  void rejectsDecimalScaleChange() {
    Types.StructType incoming =
        Types.StructType.of(NestedField.optional(1, "price", Types.DecimalType.of(10, 3)));
    assertThatThrownBy(() -> SchemaEvolution.plan(TABLE, incoming))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("price");
  }
}
