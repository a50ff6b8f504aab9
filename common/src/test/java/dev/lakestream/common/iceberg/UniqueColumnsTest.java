package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.iceberg.Schema;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

class UniqueColumnsTest {

  @Test
  void aSmallFirstPageIsLookedAtWhole() {
    assertThat(UniqueColumns.sample(50, 20_000))
        .containsExactly(IntStream.range(0, 50).toArray());
    // A batch longer than its first page: only the page's rows.
    assertThat(UniqueColumns.sample(5_000, 700)).hasSize(700).endsWith(699);
  }

  @Test
  void aLargeFirstPageIsSampledAtRandomWithoutARowTwice() {
    int[] sample = UniqueColumns.sample(30_000, 20_000);

    assertThat(sample).hasSize(UniqueColumns.SAMPLE_ROWS);
    assertThat(Arrays.stream(sample).distinct().count()).isEqualTo(UniqueColumns.SAMPLE_ROWS);
    assertThat(Arrays.stream(sample).min().orElseThrow()).isGreaterThanOrEqualTo(0);
    assertThat(Arrays.stream(sample).max().orElseThrow()).isLessThan(20_000);
    // Spread over the page, not its first rows.
    assertThat(Arrays.stream(sample).filter(i -> i >= 10_000).count()).isBetween(400L, 600L);
    // The same draw for the same sizes: a batch written again is written the same way.
    assertThat(UniqueColumns.sample(30_000, 20_000)).containsExactly(sample);
  }

  @Test
  void aPageRowLimitThatIsNotANumberIsLeftToIcebergsWriter() {
    Schema schema = new Schema(
        List.of(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "v", Types.LongType.get())),
        Set.of(1));
    List<Record> rows = new ArrayList<>();
    for (long i = 0; i < 3; i++) {
      Record row = GenericRecord.create(SourcePositions.withPosition(schema));
      row.setField("id", i);
      row.setField("v", i * 10);
      rows.add(row);
    }
    // Iceberg's writer rejects the value when it writes a file; a flush that writes none (a
    // TRUNCATE's) must not fail on it here, at every retry.
    Map<String, String> table = Map.of(TableProperties.PARQUET_PAGE_ROW_LIMIT, "many");

    assertThat(UniqueColumns.dataFile(schema, List.of(), table))
        .isEqualTo(UniqueColumns.dataFile(schema));
    assertThat(UniqueColumns.dataFile(schema, rows, table))
        .containsEntry(TableProperties.PARQUET_DICT_ENCODING_ENABLED_COLUMN_PREFIX + "v", "false");
  }
}
