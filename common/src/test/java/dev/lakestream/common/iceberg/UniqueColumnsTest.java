package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.stream.IntStream;
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
}
