package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SourcePositionsTest {

  @Test
  void ordersAreComparedAsTheirEncodingsAre() {
    Random random = new Random(17);
    long[] edges = {0, 1, 255, 256, Long.MAX_VALUE, Long.MIN_VALUE, -1, 22212912L, 22217936L};
    int compared = 0;
    for (int i = 0; i < 20_000; i++) {
      long[] a = order(random, edges);
      long[] b = random.nextInt(4) == 0 ? a.clone() : order(random, edges);
      if (b.length == a.length && random.nextBoolean()) {
        b[b.length - 1] = a[a.length - 1]; // share a suffix, differ (or not) before it
      }
      int bytes = Integer.signum(
          SourcePositions.compare(SourcePositions.encode(a), SourcePositions.encode(b)));
      assertThat(Integer.signum(SourcePositions.compare(a, b)))
          .as("%s against %s", Arrays.toString(a), Arrays.toString(b))
          .isEqualTo(bytes);
      compared++;
    }
    assertThat(compared).isEqualTo(20_000);
  }

  private static long[] order(Random random, long[] edges) {
    long[] order = new long[2 + random.nextInt(2)];
    for (int i = 0; i < order.length; i++) {
      order[i] = random.nextBoolean() ? edges[random.nextInt(edges.length)] : random.nextLong();
    }
    return order;
  }
}
