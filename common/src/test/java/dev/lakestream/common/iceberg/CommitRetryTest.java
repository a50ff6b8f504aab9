package dev.lakestream.common.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.junit.jupiter.api.Test;

class CommitRetryTest {

  @Test
  void aConflictIsAttemptedAgainWithTheNextAttemptNumberUntilItCommits() {
    List<Integer> seen = new ArrayList<>();
    String result = CommitRetry.onConflict(ValidationException.class, attempt -> {
      seen.add(attempt);
      if (attempt < 3) {
        throw new ValidationException("conflict %s", attempt);
      }
      return "committed at " + attempt;
    });
    assertThat(result).isEqualTo("committed at 3");
    assertThat(seen).containsExactly(1, 2, 3);
  }

  @Test
  void theLastConflictReachesTheCallerUnchangedAfterAllAttempts() {
    List<Integer> seen = new ArrayList<>();
    assertThatThrownBy(() -> CommitRetry.onConflict(CommitFailedException.class, attempt -> {
          seen.add(attempt);
          throw new CommitFailedException("lost race %s", attempt);
        }))
        .isInstanceOf(CommitFailedException.class)
        .hasMessage("lost race " + CommitRetry.ATTEMPTS);
    assertThat(seen).hasSize(CommitRetry.ATTEMPTS);
  }

  @Test
  void anyOtherFailureIsNotAttemptedAgain() {
    List<Integer> seen = new ArrayList<>();
    assertThatThrownBy(() -> CommitRetry.onConflict(ValidationException.class, attempt -> {
          seen.add(attempt);
          throw new IllegalStateException("catalog unreachable");
        }))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("catalog unreachable");
    assertThat(seen).containsExactly(1);
  }
}
