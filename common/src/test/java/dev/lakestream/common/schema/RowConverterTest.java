package dev.lakestream.common.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.debezium.BadChangeException;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.TestTable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * A row converted from its image's columns, without a tree, is the record its tree converts to;
 * what the columns alone cannot say is converted from the tree.
 */
class RowConverterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TestTable WIDE = TestTable.wide("inventory", "customers");

  @Test
  void aRowMadeFromItsColumnsIsTheRecordItsTreeMakesAndBuildsNoTree() {
    ChangeStreamGenerator gen = new ChangeStreamGenerator(WIDE, 11);
    List<Change> changes = gen.snapshot(5);
    changes.addAll(gen.next(300));
    int compared = 0;
    for (Change change : changes) {
      ChangeEvent event = decode(change);
      if (event == null || event.afterImage() == null) {
        continue;
      }
      Types.StructType type = typeOf(event);
      // The table's own type, one lacking a column the row holds, and one with a column it lacks.
      List<Types.StructType> types = List.of(
          type,
          Types.StructType.of(type.fields().subList(0, type.fields().size() - 1)),
          withExtraColumn(type));
      for (Types.StructType target : types) {
        ChangeEvent fresh = decode(change);
        GenericRecord fromColumns =
            RowConverter.toRecord(fresh.afterImage(), fresh.rowSchema(), target);
        assertThat(fresh.afterImage().flat()).as("no tree built").isTrue();
        assertThat(fromColumns)
            .as(change.toString())
            .isEqualTo(RowConverter.toRecord(treeOf(change), fresh.rowSchema(), target));
        compared++;
      }
    }
    assertThat(compared).isGreaterThan(500);
  }

  @Test
  void aRowItsColumnsCannotSayIsConvertedFromItsTree() throws Exception {
    Change change = new ChangeStreamGenerator(WIDE, 12).snapshot(1).get(0);
    String value = new String(DebeziumJson.value(change, true), StandardCharsets.UTF_8);
    List<String> values = new ArrayList<>();
    // A column twice: the tree holds the last value, even when the first would not convert.
    values.add(value.replace("\"after\":{", "\"after\":{\"qty\":\"not a number\","));
    // A required column null: the tree's error.
    values.add(withAfter(value, after -> after.putNull("id")));
    // Two errors: the bytes meet the value that does not convert first, the tree the null key
    // (it reads the columns in the table's order).
    values.add(withAfter(value, after -> {
      after.put("qty", "not a number");
      after.remove("id");
      after.putNull("id");
    }));
    for (String edited : values) {
      byte[] bytes = edited.getBytes(StandardCharsets.UTF_8);
      ChangeEvent event =
          new DebeziumDecoder().decode(DebeziumJson.key(change, true), bytes).orElseThrow();
      ObjectNode tree = (ObjectNode) JSON.readTree(bytes).get("payload").get("after");
      Types.StructType type = typeOf(event);
      Object fromImage =
          outcome(() -> RowConverter.toRecord(event.afterImage(), event.rowSchema(), type));
      assertThat(fromImage)
          .as(edited.substring(edited.indexOf("\"payload\"")))
          .isEqualTo(outcome(() -> RowConverter.toRecord(tree, event.rowSchema(), type)));
      assertThat(event.afterImage().flat()).as("the tree was asked").isFalse();
    }
  }

  /**
   * Connect sends a map with keys other than strings as [key, value] pairs. Iceberg's map keys are
   * required, so a null key (which would fail the batch's data file at every flush) is refused with
   * the change, as is a pair of another shape.
   */
  @Test
  void aMapOfPairsWithANullKeyOrAPairOfAnotherShapeIsRefusedNamingTheColumn() throws Exception {
    Types.MapType type =
        Types.MapType.ofOptional(1, 2, Types.IntegerType.get(), Types.StringType.get());
    Map<Object, Object> expected = new LinkedHashMap<>();
    expected.put(1, "a");
    expected.put(2, null);
    assertThat(RowConverter.value(JSON.readTree("[[1,\"a\"],[2,null]]"), null, type, "m"))
        .isEqualTo(expected);
    for (String value : List.of("[[null,\"a\"]]", "[[1,\"a\"],[null,\"b\"]]")) {
      assertThatThrownBy(() -> RowConverter.value(JSON.readTree(value), null, type, "m"))
          .isInstanceOf(BadChangeException.class)
          .hasMessageContaining("column \"m\"")
          .hasMessageContaining("has a null key");
    }
    for (String value : List.of("[5]", "[[1]]", "[[1,\"a\",3]]")) {
      assertThatThrownBy(() -> RowConverter.value(JSON.readTree(value), null, type, "m"))
          .isInstanceOf(BadChangeException.class)
          .hasMessageContaining("column \"m\"");
    }
  }

  /**
   * A table made by another hand can hold arrays of required elements and maps of required values
   * (Spark makes them so); a null element or value would fail the batch's data file at every flush,
   * so the change is refused naming the column. Optional ones take the null.
   */
  @Test
  void aNullElementOrMapValueWhereTheTableRequiresOneIsRefusedNamingTheColumn() throws Exception {
    Types.ListType required = Types.ListType.ofRequired(1, Types.IntegerType.get());
    Types.ListType optional = Types.ListType.ofOptional(1, Types.IntegerType.get());
    assertThat(RowConverter.value(JSON.readTree("[1,null]"), null, optional, "a"))
        .isEqualTo(Arrays.asList(1, null));
    assertThat(RowConverter.value(JSON.readTree("[1,2]"), null, required, "a"))
        .isEqualTo(List.of(1, 2));
    assertThatThrownBy(() -> RowConverter.value(JSON.readTree("[1,null]"), null, required, "a"))
        .isInstanceOf(BadChangeException.class)
        .hasMessageContaining("column \"a\"")
        .hasMessageContaining("has a null element");

    Types.MapType requiredValues =
        Types.MapType.ofRequired(1, 2, Types.StringType.get(), Types.StringType.get());
    Types.MapType requiredPairs =
        Types.MapType.ofRequired(1, 2, Types.IntegerType.get(), Types.StringType.get());
    for (var refused : List.of(
        Map.entry("{\"k\":\"v\",\"n\":null}", requiredValues),
        Map.entry("[[1,\"a\"],[2,null]]", requiredPairs))) {
      assertThatThrownBy(() ->
              RowConverter.value(JSON.readTree(refused.getKey()), null, refused.getValue(), "m"))
          .isInstanceOf(BadChangeException.class)
          .hasMessageContaining("column \"m\"")
          .hasMessageContaining("has a null value");
    }
    Map<Object, Object> expected = new LinkedHashMap<>();
    expected.put("k", "v");
    expected.put("n", null);
    assertThat(RowConverter.value(
            JSON.readTree("{\"k\":\"v\",\"n\":null}"),
            null,
            Types.MapType.ofOptional(1, 2, Types.StringType.get(), Types.StringType.get()),
            "m"))
        .isEqualTo(expected);
  }

  @Test
  void aColumnTwiceEndsWithItsLastValueAsInTheTree() throws Exception {
    Change change = new ChangeStreamGenerator(WIDE, 13).snapshot(1).get(0);
    String value = new String(DebeziumJson.value(change, true), StandardCharsets.UTF_8);
    byte[] bytes = value
        .replace("\"after\":{", "\"after\":{\"qty\":7,\"name\":null,")
        .getBytes(StandardCharsets.UTF_8);
    ChangeEvent event =
        new DebeziumDecoder().decode(DebeziumJson.key(change, true), bytes).orElseThrow();
    Types.StructType type = typeOf(event);
    GenericRecord fromColumns = RowConverter.toRecord(event.afterImage(), event.rowSchema(), type);
    assertThat(event.afterImage().flat()).isTrue();
    assertThat(fromColumns)
        .isEqualTo(RowConverter.toRecord(
            (ObjectNode) JSON.readTree(bytes).get("payload").get("after"), event.rowSchema(), type))
        .isEqualTo(RowConverter.toRecord(treeOf(change), event.rowSchema(), type));
  }

  /** The value with its after row edited. */
  private static String withAfter(String value, Consumer<ObjectNode> edit) {
    try {
      ObjectNode envelope = (ObjectNode) JSON.readTree(value);
      edit.accept((ObjectNode) envelope.get("payload").get("after"));
      return JSON.writeValueAsString(envelope);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The record a conversion makes (run once), or its error's class and message. */
  private static Object outcome(Supplier<GenericRecord> conversion) {
    try {
      return conversion.get();
    } catch (RuntimeException e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  private static ChangeEvent decode(Change change) {
    if (change.isTombstone()) {
      return null;
    }
    return new DebeziumDecoder()
        .decode(DebeziumJson.key(change, true), DebeziumJson.value(change, true))
        .orElse(null);
  }

  /** The change's row as a tree of its record's whole JSON, read apart from the decoder. */
  private static ObjectNode treeOf(Change change) {
    try {
      return (ObjectNode)
          JSON.readTree(DebeziumJson.value(change, true)).get("payload").get("after");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Types.StructType typeOf(ChangeEvent event) {
    return new RowShape.Resolver().of(event).type();
  }

  private static Types.StructType withExtraColumn(Types.StructType type) {
    List<Types.NestedField> fields = new ArrayList<>(type.fields());
    fields.add(Types.NestedField.optional(10_000, "added_later", Types.StringType.get()));
    return Types.StructType.of(fields);
  }
}
