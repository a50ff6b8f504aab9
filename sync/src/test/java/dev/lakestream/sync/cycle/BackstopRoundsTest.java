package dev.lakestream.sync.cycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackstopRoundsTest {

  private static final List<String> TABLES = List.of("a.one", "a.three", "a.two", "b.four");

  @Test
  void aRoundWithTimeChecksEveryTableFromWhereTheLastStopped() {
    BackstopRounds rounds = new BackstopRounds();
    List<String> checked = new ArrayList<>();
    assertThat(rounds.run(TABLES, Long.MAX_VALUE, checked::add)).isZero();
    assertThat(rounds.run(TABLES, Long.MAX_VALUE, checked::add)).isZero();
    assertThat(checked)
        .containsExactly(
            "a.one", "a.three", "a.two", "b.four", "a.one", "a.three", "a.two", "b.four");
  }

  @Test
  void roundsWithoutTimeCheckOneTableEachInTurn() {
    BackstopRounds rounds = new BackstopRounds();
    List<String> checked = new ArrayList<>();
    List<Integer> left = new ArrayList<>();
    for (int round = 0; round < 6; round++) {
      left.add(rounds.run(TABLES, 0, checked::add));
    }
    assertThat(checked)
        .as("one table per round, each in turn")
        .containsExactly("a.one", "a.three", "a.two", "b.four", "a.one", "a.three");
    assertThat(left).containsOnly(3);
  }

  @Test
  void aTableGoneSinceTheLastRoundDoesNotRestartTheTurn() {
    BackstopRounds rounds = new BackstopRounds();
    List<String> checked = new ArrayList<>();
    rounds.run(TABLES, 0, checked::add);
    rounds.run(TABLES, 0, checked::add); // a.three last
    rounds.run(List.of("a.one", "a.two", "b.four"), 0, checked::add);
    rounds.run(List.of("a.one", "a.two", "b.four", "c.five"), 0, checked::add);
    rounds.run(List.of("a.one", "a.two", "b.four", "c.five"), 0, checked::add);
    assertThat(checked).containsExactly("a.one", "a.three", "a.two", "b.four", "c.five");
    assertThat(rounds.run(List.of(), 0, checked::add)).isZero();
  }
}
