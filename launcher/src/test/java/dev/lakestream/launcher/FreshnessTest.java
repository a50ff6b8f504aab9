package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.launcher.Freshness.Covered;
import dev.lakestream.launcher.Freshness.SourceChange;
import dev.lakestream.launcher.Freshness.Window;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FreshnessTest {

  @Test
  void aChangeIsFreshWhenACommitHoldsItsOwnPartitionsOffsetNotAnothers() {
    // Partition 0 is committed promptly; partition 1's change waits for a later commit.
    List<SourceChange> changes = List.of(
        new SourceChange(0, 10, 1_000),
        new SourceChange(1, 4, 1_000),
        new SourceChange(0, 11, 2_000));
    List<Covered> commits = List.of(
        new Covered(Map.of(0, 10L), 1_500),
        new Covered(Map.of(0, 11L, 1, 3L), 2_300),
        new Covered(Map.of(1, 4L), 6_000));
    assertThat(Freshness.perChange(changes, commits)).containsExactly(300L, 500L, 5_000L);
  }

  @Test
  void theSourcesPartIsEachChangesCommitTimeToItsRecordInKafka() {
    List<SourceChange> changes = List.of(
        new SourceChange(0, 1, 1_000, 1_250),
        new SourceChange(1, 1, 1_000, 1_040),
        new SourceChange(0, 2, 2_000), // no record time: left out
        new SourceChange(1, 2, 3_000, 2_990)); // stamped before its commit (two clocks): 0
    assertThat(Freshness.toKafka(changes)).containsExactly(0L, 40L, 250L);
  }

  @Test
  void aCommitListedOutOfOrderOrHoldingLessStillCountsFromTheEarliestThatHoldsIt() {
    List<SourceChange> changes = List.of(new SourceChange(0, 7, 100));
    List<Covered> commits = List.of(
        new Covered(Map.of(0, 9L), 900), // listed first, made later
        new Covered(Map.of(0, 7L), 400),
        new Covered(Map.of(0, 3L), 200));
    assertThat(Freshness.perChange(changes, commits)).containsExactly(300L);
  }

  @Test
  void changesNoCommitHoldsYetAreLeftOut() {
    List<SourceChange> changes = List.of(new SourceChange(0, 50, 100), new SourceChange(2, 0, 100));
    List<Covered> commits = List.of(new Covered(Map.of(0, 49L), 400));
    assertThat(Freshness.perChange(changes, commits)).isEmpty();
  }

  @Test
  void overTimeGroupsChangesByTheirSourceCommitSoAStallShowsWhereItIs() {
    // A change every 100 ms for 3 s; the first second's are committed 200 ms later each, then
    // nothing is committed until 15 s, when one commit holds all the rest.
    List<SourceChange> changes = new ArrayList<>();
    List<Covered> commits = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      long at = 10_000 + i * 100L;
      changes.add(new SourceChange(0, i, at));
      if (i < 10) {
        commits.add(new Covered(Map.of(0, (long) i), at + 200));
      }
    }
    commits.add(new Covered(Map.of(0, 29L), 15_000));
    assertThat(Freshness.overTime(changes, commits, 1_000))
        .containsExactly(
            new Window(0, 1_000, 10, 200, 200, 200),
            new Window(1_000, 2_000, 10, 3_600, 4_000, 4_000),
            new Window(2_000, 3_000, 10, 2_600, 3_000, 3_000));
  }
}
