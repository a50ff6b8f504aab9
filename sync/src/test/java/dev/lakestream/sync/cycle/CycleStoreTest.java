package dev.lakestream.sync.cycle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.common.event.ConvertResult;
import dev.lakestream.common.event.CyclePlan;
import dev.lakestream.common.event.EventSerdes;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * A cycle's idle clock, which times out a cycle whose convert results are lost, survives its task
 * being initialized again (a restart, a rebalance, a task revived after an aborted transaction):
 * tasks initialized again more often than the timeout would otherwise hold the table's cycle in
 * flight, and its main behind realtime, for ever.
 */
class CycleStoreTest {

  private static final long TIMEOUT_MS = Duration.ofMinutes(10).toMillis();
  private static final String TABLE = "inventory.orders";

  private final MockProcessorContext<String, Object> context = new MockProcessorContext<>();

  CycleStoreTest() {
    store(CycleStore.CYCLES, EventSerdes.cyclePlan());
    store(CycleStore.RESULTS, EventSerdes.convertResult());
    store(CycleStore.TABLES, Serdes.Long());
  }

  private <V> void store(String name, Serde<V> values) {
    KeyValueStore<String, V> store = Stores.keyValueStoreBuilder(
            Stores.inMemoryKeyValueStore(name), Serdes.String(), values)
        .withLoggingDisabled()
        .build();
    store.init(context.getStateStoreContext(), store);
    context.addStateStore(store);
  }

  @Test
  void aCycleWithoutResultsTimesOutThoughItsTaskIsInitializedAgainEveryFewMinutes() {
    long t0 = 1_000_000_000L;
    CyclePlan plan = plan(t0);
    CycleStore store = inFlight(plan);
    store.addResult(plan, result(plan, "a.parquet"), t0);

    // No result comes back for the other files. The backstop asks every 10 s; the task is
    // initialized again every 4 minutes.
    long now = t0;
    long idle = 0;
    for (int restart = 1; restart <= 4; restart++) {
      for (int check = 0; check < 24; check++) {
        now += 10_000;
        idle = store.idleMs(TABLE, now);
      }
      store = new CycleStore(context, false);
      assertThat(store.plan(TABLE)).as("the cycle resumed").isEqualTo(plan);
    }
    idle = store.idleMs(TABLE, now); // the first ask after the last restart, at once

    assertThat(idle)
        .as("16 minutes without a result, less the 10 s between each of the first three restarts"
            + " and the next ask")
        .isEqualTo(Duration.ofMinutes(16).toMillis() - 3 * 10_000)
        .isGreaterThanOrEqualTo(TIMEOUT_MS);
    assertThat(store.isKnown(TABLE)).isTrue();
  }

  @Test
  void timeTheAppWasDownDoesNotCountAndAResultStartsTheClockAgain() {
    long t0 = 2_000_000_000L;
    CyclePlan plan = plan(t0);
    CycleStore store = inFlight(plan);
    assertThat(store.idleMs(TABLE, t0 + 180_000)).isEqualTo(180_000);

    // Down for an hour.
    long back = t0 + 180_000 + Duration.ofHours(1).toMillis();
    CycleStore again = new CycleStore(context, false);
    assertThat(again.idleMs(TABLE, back))
        .as("the idle time stored before the stop")
        .isEqualTo(180_000);
    assertThat(again.idleMs(TABLE, back + 10_000)).isEqualTo(190_000);

    again.addResult(plan, result(plan, "a.parquet"), back + 20_000);
    assertThat(again.idleMs(TABLE, back + 30_000)).isEqualTo(10_000);
    CycleStore third = new CycleStore(context, false);
    assertThat(third.idleMs(TABLE, back + 40_000))
        .as("idle since the result, as last asked: the hour before it is gone")
        .isEqualTo(10_000);
    assertThat(third.isKnown(TABLE)).isTrue();
  }

  /** A task's store with {@code plan} in flight, its tasks sent at the time it was planned. */
  private CycleStore inFlight(CyclePlan plan) {
    CycleStore store = new CycleStore(context, false);
    store.know(TABLE, plan.plannedAtMs());
    store.keep(plan, plan.plannedAtMs());
    store.tasksSent(plan);
    return store;
  }

  private static CyclePlan plan(long plannedAtMs) {
    return new CyclePlan(
        TABLE,
        "c1",
        1L,
        2L,
        0L,
        List.of(),
        List.of(),
        List.of(),
        List.of("a.parquet", "b.parquet", "c.parquet"),
        1,
        0,
        false,
        plannedAtMs);
  }

  private static ConvertResult result(CyclePlan plan, String file) {
    return new ConvertResult(plan.table(), plan.cycleId(), file, null, List.of(), 0, 0, 0);
  }
}
