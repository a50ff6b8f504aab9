package dev.lakestream.sync.convert;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Vectors kept up to a budget of bytes, the oldest kept dropped first. */
class KeptVectorsTest {

  @Test
  void theOldestKeptGoFirstAndADroppedOneIsGone() {
    // Each entry below costs 2 * 2 + 100 + 96 = 200 bytes.
    KeptVectors kept = new KeptVectors(600);
    kept.keep("v1", new byte[100]);
    kept.keep("v2", new byte[100]);
    kept.keep("v3", new byte[100]);
    assertThat(kept.size()).isEqualTo(3);
    assertThat(kept.bytes()).isEqualTo(600);

    kept.keep("v4", new byte[100]);
    assertThat(kept.get("v1")).as("the oldest, dropped for the newest").isNull();
    assertThat(kept.get("v2")).hasSize(100);
    assertThat(kept.get("v2")).as("asked for again").hasSize(100);
    kept.drop("v2");
    assertThat(kept.get("v2")).isNull();
    assertThat(kept.size()).isEqualTo(2);
    assertThat(kept.bytes()).isEqualTo(400);

    kept.keep("v5", new byte[100]);
    kept.keep("v6", new byte[100]);
    assertThat(kept.get("v3")).isNull();
    assertThat(kept.get("v4")).isNotNull();
    assertThat(kept.get("v5")).isNotNull();
    assertThat(kept.get("v6")).isNotNull();
    assertThat(kept.bytes()).isEqualTo(600);
  }

  @Test
  void aVectorLargerThanTheBudgetIsNotKeptAndDropsNothing() {
    KeptVectors kept = new KeptVectors(600);
    kept.keep("v1", new byte[100]);
    kept.keep("big", new byte[1_000]);
    assertThat(kept.get("big")).isNull();
    assertThat(kept.get("v1")).isNotNull();
    assertThat(kept.fits(504)).isTrue();
    assertThat(kept.fits(505)).isFalse();
    assertThat(new KeptVectors(0).fits(1)).as("a budget of 0 keeps none").isFalse();
  }
}
