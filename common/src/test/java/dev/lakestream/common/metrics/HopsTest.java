package dev.lakestream.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.metrics.Hops.Hop;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HopsTest {

  /**
   * A hop's ends come from records: a producer's timestamp centuries ahead of the source's commit
   * time is recorded (as the longest span a timer holds), not thrown on the stream thread.
   */
  @Test
  void aSpanLongerThanATimerHoldsIsRecordedAsTheLongestNotThrown() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Hops hops = new Hops(meters, Hop.SOURCE_TO_KAFKA);

    hops.record(Hop.SOURCE_TO_KAFKA, 1, Long.MAX_VALUE);
    hops.record(Hop.SOURCE_TO_KAFKA, 1_000, 1_250);

    assertThat(hops.timer(Hop.SOURCE_TO_KAFKA).count()).isEqualTo(2);
    assertThat(hops.timer(Hop.SOURCE_TO_KAFKA).max(TimeUnit.MILLISECONDS))
        .isEqualTo((double) Hops.MAX_SPAN_MS);
  }
}
