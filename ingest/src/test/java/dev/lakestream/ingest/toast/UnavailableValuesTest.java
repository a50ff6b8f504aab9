package dev.lakestream.ingest.toast;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ConnectSchema;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.testkit.Change;
import dev.lakestream.testkit.ChangeStreamGenerator;
import dev.lakestream.testkit.DebeziumJson;
import dev.lakestream.testkit.TestTable;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The placeholder in each of the forms Debezium writes it, and what fills it. */
class UnavailableValuesTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final UnavailableValues VALUES =
      new UnavailableValues(UnavailableValues.DEBEZIUM_DEFAULT);

  /** The row schema of the probe table: text, jsonb, bytea and text[] columns, as Debezium declares them. */
  private static final ConnectSchema ROW = schema(
      "{\"type\":\"struct\",\"fields\":["
          + "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},"
          + "{\"type\":\"int32\",\"optional\":true,\"field\":\"small\"},"
          + "{\"type\":\"string\",\"optional\":true,\"field\":\"big\"},"
          + "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Json\",\"field\":\"doc\"},"
          + "{\"type\":\"bytes\",\"optional\":true,\"field\":\"bin\"},"
          + "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true},\"optional\":true,\"field\":\"arr\"}]}");

  @Test
  void findsThePlaceholderAsTextJsonBytesAndArrayElementTheWayDebeziumWritesIt() throws Exception {
    // Copied from a real Debezium 3.6.1 update event of PostgreSQL 15 (REPLICA IDENTITY DEFAULT).
    ObjectNode after = (ObjectNode)
        JSON.readTree("{\"id\": 1, \"small\": 2, \"big\": \"__debezium_unavailable_value\","
            + " \"doc\": \"__debezium_unavailable_value\", \"bin\": \"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==\","
            + " \"arr\": [\"__debezium_unavailable_value\"]}");
    assertThat(VALUES.columns(after, ROW)).containsExactly("big", "doc", "bin", "arr");
  }

  /** The row schema of a table of int[], bigint[], date[], uuid[], text[] and hstore columns. */
  private static final ConnectSchema COLLECTIONS = schema(
      "{\"type\":\"struct\",\"fields\":["
          + "{\"type\":\"int32\",\"optional\":false,\"field\":\"id\"},"
          + "{\"type\":\"int32\",\"optional\":true,\"field\":\"small\"},"
          + "{\"type\":\"array\",\"items\":{\"type\":\"int32\",\"optional\":true},\"optional\":true,\"field\":\"nums\"},"
          + "{\"type\":\"array\",\"items\":{\"type\":\"int64\",\"optional\":true},\"optional\":true,\"field\":\"bigs\"},"
          + "{\"type\":\"array\",\"items\":{\"type\":\"int32\",\"optional\":true,\"name\":\"io.debezium.time.Date\"},\"optional\":true,\"field\":\"days\"},"
          + "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Uuid\"},\"optional\":true,\"field\":\"ids\"},"
          + "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"optional\":true},\"optional\":true,\"field\":\"words\"},"
          + "{\"type\":\"string\",\"optional\":true,\"name\":\"io.debezium.data.Json\",\"field\":\"tags\"},"
          + "{\"type\":\"map\",\"keys\":{\"type\":\"string\",\"optional\":false},\"values\":{\"type\":\"string\",\"optional\":true},\"optional\":true,\"field\":\"tagmap\"}]}");

  @Test
  void findsThePlaceholderOfIntBigintDateAndUuidArraysAndOfHstores() throws Exception {
    // The update of a real Debezium 3.6.1 connector on PostgreSQL 15 (REPLICA IDENTITY DEFAULT),
    // with an hstore as a map too (hstore.handling.mode=map).
    String bytes = "[95,95,100,101,98,101,122,105,117,109,95,117,110,97,118,97,105,108,97,98,"
        + "108,101,95,118,97,108,117,101]";
    ObjectNode after = (ObjectNode) JSON.readTree("{\"id\":1,\"small\":1001,\"nums\":" + bytes
        + ",\"bigs\":" + bytes + ",\"days\":" + bytes
        + ",\"ids\":[\"b68a35a7-17ad-35b3-af2a-ae46edb4545a\"],"
        + "\"words\":[\"__debezium_unavailable_value\"],"
        + "\"tags\":\"{\\\"__debezium_unavailable_value\\\":\\\"__debezium_unavailable_value\\\"}\","
        + "\"tagmap\":{\"__debezium_unavailable_value\":\"__debezium_unavailable_value\"}}");
    assertThat(VALUES.columns(after, COLLECTIONS))
        .containsExactly("nums", "bigs", "days", "ids", "words", "tags", "tagmap");
  }

  @Test
  void collectionsThatOnlyLookLikeThePlaceholderAreValues() throws Exception {
    ObjectNode after = (ObjectNode) JSON.readTree("{\"id\":1,\"small\":1001,"
        // One byte off, one byte short.
        + "\"nums\":[95,95,100,101,98,101,122,105,117,109,95,117,110,97,118,97,105,108,97,98,"
        + "108,101,95,118,97,108,117,102],"
        + "\"bigs\":[95,95,100,101,98,101,122,105,117,109,95,117,110,97,118,97,105,108,97,98,"
        + "108,101,95,118,97,108,117],"
        + "\"days\":[],"
        + "\"ids\":[\"b68a35a7-17ad-35b3-af2a-ae46edb4545b\"],"
        + "\"words\":[\"__debezium_unavailable_value\", \"x\"],"
        + "\"tags\":\"{\\\"__debezium_unavailable_value\\\":\\\"x\\\"}\","
        + "\"tagmap\":{\"__debezium_unavailable_value\":\"__debezium_unavailable_value\","
        + "\"k\":\"v\"}}");
    assertThat(VALUES.columns(after, COLLECTIONS)).isEmpty();
  }

  @Test
  void realValuesAndNullsAreNotPlaceholders() throws Exception {
    ObjectNode after =
        (ObjectNode) JSON.readTree("{\"id\": 1, \"small\": 2, \"big\": \"x\", \"doc\": null,"
            + " \"bin\": \"AP8A\", \"arr\": [\"__debezium_unavailable_value\", \"b\"]}");
    assertThat(VALUES.columns(after, ROW)).isEmpty();
  }

  @Test
  void withoutSchemasTheHexAndBase64FormsOfTheBytesCount() throws Exception {
    ObjectNode after = (ObjectNode)
        JSON.readTree(
            "{\"id\": 1, \"a\": \"5f5f646562657a69756d5f756e617661696c61626c655f76616c7565\","
                + " \"b\": \"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==\", \"c\": \"__debezium_unavailable_value\", \"d\": \"plain\"}");
    assertThat(VALUES.columns(after, null)).containsExactly("a", "b", "c");
  }

  @Test
  void aConfiguredPlaceholderIsTheOneLookedFor() throws Exception {
    UnavailableValues custom = new UnavailableValues("__toasted");
    ObjectNode after = (ObjectNode) JSON.readTree(
        "{\"id\": 1, \"big\": \"__toasted\", \"doc\": \"__debezium_unavailable_value\"}");
    assertThat(custom.columns(after, ROW)).containsExactly("big");
  }

  @Test
  void fillTakesOnlyRealValuesFromThePreviousRow() throws Exception {
    ObjectNode after = (ObjectNode)
        JSON.readTree("{\"id\": 1, \"small\": 3, \"big\": \"__debezium_unavailable_value\","
            + " \"doc\": \"__debezium_unavailable_value\"}");
    ObjectNode previous =
        (ObjectNode) JSON.readTree("{\"id\": 1, \"small\": 2, \"big\": \"the text\","
            + " \"doc\": \"__debezium_unavailable_value\"}");
    ObjectNode filled = VALUES.fill(after, ROW, previous, ROW, VALUES.columns(after, ROW));
    assertThat(filled.get("small").asInt()).isEqualTo(3);
    assertThat(filled.get("big").asText()).isEqualTo("the text");
    assertThat(VALUES.columns(filled, ROW)).containsExactly("doc");
  }

  @Test
  void thePlaceholdersInARowsColumnsAreThoseOfItsTreeAndOnlyAPlaceholderBuildsTheTree()
      throws Exception {
    TestTable table = TestTable.wide("inventory", "documents");
    ChangeStreamGenerator gen = new ChangeStreamGenerator(table, 21);
    List<Change> changes = gen.snapshot(20);
    changes.addAll(gen.next(400));
    int withPlaceholders = 0;
    int without = 0;
    for (Change change : changes) {
      if (change.isTombstone() || change.op() != 'u') {
        continue;
      }
      byte[] key = DebeziumJson.key(change, true);
      // Every column but the key stored out of line: an update carries the placeholder in each it
      // leaves unchanged.
      byte[] value = DebeziumJson.value(
          change, true, Set.of("name", "qty", "price", "active", "born", "doc", "blob", "score"));
      ChangeEvent event = new DebeziumDecoder().decode(key, value).orElseThrow();
      Set<String> fromColumns = VALUES.columns(event.afterImage(), event.rowSchema());
      // The reference: the row as a tree of the record's whole JSON, read apart from the decoder.
      ObjectNode tree = (ObjectNode) JSON.readTree(value).get("payload").get("after");
      assertThat(fromColumns).containsExactlyElementsOf(VALUES.columns(tree, event.rowSchema()));
      assertThat(event.afterImage().flat()).isEqualTo(fromColumns.isEmpty());
      if (fromColumns.isEmpty()) {
        without++;
      } else {
        withPlaceholders++;
      }
    }
    assertThat(withPlaceholders).isGreaterThan(20);
    assertThat(without).isGreaterThan(20);
  }

  private static ConnectSchema schema(String json) {
    try {
      return ConnectSchema.parse(JSON.readTree(json));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
