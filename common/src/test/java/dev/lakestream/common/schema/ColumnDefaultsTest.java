package dev.lakestream.common.schema;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.lakestream.common.debezium.ConnectSchema;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** The defaults a Debezium row schema states, as Iceberg literals of the columns' types. */
class ColumnDefaultsTest {

  private static final String ROW =
      """
      {"type": "struct", "optional": true, "name": "dbserver1.inventory.items.Value", "fields": [
        {"type": "int64", "optional": false, "field": "id"},
        {"type": "int32", "optional": false, "default": 7, "field": "qty"},
        {"type": "string", "optional": true, "default": "new", "field": "status"},
        {"type": "bytes", "optional": true, "name": "org.apache.kafka.connect.data.Decimal",
         "parameters": {"scale": "2", "connect.decimal.precision": "10"}, "default": "AJY=",
         "field": "price"},
        {"type": "int32", "optional": true, "name": "io.debezium.time.Date", "default": 18263,
         "field": "born"},
        {"type": "int64", "optional": true, "name": "io.debezium.time.MicroTimestamp",
         "default": 1614834367250000, "field": "seen"},
        {"type": "string", "optional": true, "name": "io.debezium.time.ZonedTimestamp",
         "default": "2021-03-04T05:06:07.5Z", "field": "at"},
        {"type": "string", "optional": true, "name": "io.debezium.data.Uuid",
         "default": "0b7c9c3e-1f0a-4a8e-9d7a-3c2b1a0f9e8d", "field": "uid"},
        {"type": "boolean", "optional": true, "default": true, "field": "flag"},
        {"type": "string", "optional": true, "field": "note"},
        {"type": "int32", "optional": true, "default": "abc", "field": "odd"},
        {"type": "array", "optional": true, "items": {"type": "int32", "optional": true},
         "default": [1, 2], "field": "tags"}
      ]}
      """;

  @Test
  void eachStatedDefaultIsALiteralOfItsColumnsTypeAndOthersAreLeftOut() throws Exception {
    ConnectSchema row = ConnectSchema.parse(new ObjectMapper().readTree(ROW));
    Types.StructType type = TypeMapping.rowType(row, List.of("id"));
    Map<String, Literal<?>> defaults = ColumnDefaults.of(row, type);

    assertThat(defaults)
        .containsOnlyKeys("qty", "status", "price", "born", "seen", "at", "uid", "flag");
    assertThat(defaults.get("qty").value()).isEqualTo(7);
    assertThat(defaults.get("status").value()).hasToString("new");
    assertThat(defaults.get("price").value()).isEqualTo(new BigDecimal("1.50"));
    assertThat(defaults.get("born").value())
        .isEqualTo((int) LocalDate.of(2020, 1, 2).toEpochDay());
    assertThat(defaults.get("seen").value())
        .isEqualTo(micros(LocalDateTime.of(2021, 3, 4, 5, 6, 7, 250_000_000)));
    assertThat(defaults.get("at").value())
        .isEqualTo(micros(LocalDateTime.of(2021, 3, 4, 5, 6, 7, 500_000_000)));
    assertThat(defaults.get("uid").value())
        .isEqualTo(UUID.fromString("0b7c9c3e-1f0a-4a8e-9d7a-3c2b1a0f9e8d"));
    assertThat(defaults.get("flag").value()).isEqualTo(true);
  }

  private static long micros(LocalDateTime t) {
    return ChronoUnit.MICROS.between(
        LocalDateTime.of(1970, 1, 1, 0, 0).atOffset(ZoneOffset.UTC), t.atOffset(ZoneOffset.UTC));
  }
}
