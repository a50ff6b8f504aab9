package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.lakestream.common.debezium.SourceTable;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

class TableNamingTest {

  private static Supplier<Optional<SourceTable>> source(String schema, String table) {
    return () -> Optional.of(new SourceTable(schema, table));
  }

  @Test
  void debeziumsThreePartTopicsMapByThePatternAlone() {
    TableNaming naming = TableNaming.debeziumDefault();
    assertThat(naming.tableFor("dbserver1.inventory.customers", source("other", "t")))
        .isEqualTo(TableIdentifier.of("inventory", "customers"));
    assertThat(naming.tableFor("dbserver1.inventory.Order_Items"))
        .isEqualTo(TableIdentifier.of("inventory", "Order_Items"));
  }

  @Test
  void topicsOfMoreDotsMapToTheTableTheirSourceNamesWhenTheyEndWithIt() {
    TableNaming naming = TableNaming.debeziumDefault();
    assertThat(naming.tableFor("prod.pg1.inventory.customers", source("inventory", "customers")))
        .isEqualTo(TableIdentifier.of("inventory", "customers"));
    assertThat(
            naming.tableFor("dbserver1.inventory.order.items", source("inventory", "order.items")))
        .isEqualTo(TableIdentifier.of("inventory", "order_items"));
    assertThat(naming.tableFor("dbserver1.my.schema.t", source("my.schema", "t")))
        .isEqualTo(TableIdentifier.of(Namespace.of("my_schema"), "t"));
    // Debezium replaces what Kafka does not allow in a topic name with '_'; the table takes the
    // topic's spelling, as the pattern gives it for three-part topics (and '_' for a dot in a
    // name).
    assertThat(naming.tableFor("a.b.inventory.Order_It_ms", source("inventory", "Order It€ms")))
        .isEqualTo(TableIdentifier.of("inventory", "Order_It_ms"));
    // Once named, the topic keeps its table: the flush asks without a record.
    assertThat(naming.tableFor("prod.pg1.inventory.customers"))
        .isEqualTo(TableIdentifier.of("inventory", "customers"));
  }

  @Test
  void aTopicThatDoesNotEndWithItsRecordsSourceIsNotTakenForIt() {
    TableNaming naming = TableNaming.debeziumDefault();
    assertThatThrownBy(
            () -> naming.tableFor("prod.pg1.routed.all_tables", source("inventory", "customers")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not end with the schema and table")
        .hasMessageContaining("ingest.table.name.regex");
    assertThatThrownBy(
            () -> naming.tableFor("inventory.customers", source("inventory", "customers")))
        .as("no prefix before them")
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> naming.tableFor("__debezium-heartbeat.prod.pg1.eu", Optional::empty))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aUsersOwnPatternIsNeverOverruledBySources() {
    TableNaming naming =
        new TableNaming(TableNaming.DEFAULT_REGEX, TableNaming.DEFAULT_REPLACEMENT);
    assertThatThrownBy(
            () -> naming.tableFor("prod.pg1.inventory.customers", source("inventory", "customers")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not match the table naming pattern");
  }

  @Test
  void theSourceTableIsReadFromEitherEnvelopeAndFromMySqlsDatabase() {
    String payload = "{\"op\":\"c\",\"source\":{\"db\":\"postgres\",\"schema\":\"inventory\","
        + "\"table\":\"order.items\"},\"after\":{\"id\":1}}";
    assertThat(SourceTable.of(utf8(payload))).contains(new SourceTable("inventory", "order.items"));
    assertThat(
            SourceTable.of(utf8("{\"schema\":{\"type\":\"struct\"},\"payload\":" + payload + "}")))
        .contains(new SourceTable("inventory", "order.items"));
    assertThat(SourceTable.of(utf8(
            "{\"op\":\"u\",\"source\":{\"db\":\"shop\",\"table\":\"orders\",\"file\":\"b.1\"}}")))
        .contains(new SourceTable("shop", "orders"));
    assertThat(SourceTable.of(utf8("{\"ts_ms\":1700000000000}"))).isEmpty();
    assertThat(SourceTable.of(utf8("{not json"))).isEmpty();
    assertThat(SourceTable.of(null)).isEmpty();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
