package dev.lakestream.common.iceberg;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.util.Tasks;

/**
 * Runs a commit that can lose a race to another writer (a {@code ValidationException} from a row
 * delta's conflict checks, a {@code CommitFailedException} from a schema update) again, through
 * Iceberg's own {@link Tasks}: up to {@link #ATTEMPTS} attempts with a short exponential backoff and
 * jitter. Each attempt must start from the table as it is now (refresh, re-read, plan again); the
 * attempt number is passed in so that the first attempt can use what the caller already read.
 * Any other exception, and the conflict of the last attempt, reaches the caller unchanged.
 */
public final class CommitRetry {

  public static final int ATTEMPTS = 5;

  private static final long MIN_SLEEP_MS = 20;
  private static final long MAX_SLEEP_MS = 1_000;
  private static final long MAX_DURATION_MS = 60_000;

  /** One attempt of a commit; {@code attempt} counts from 1. */
  @FunctionalInterface
  public interface Attempt<T> {
    T run(int attempt);
  }

  private CommitRetry() {}

  public static <T> T onConflict(Class<? extends Exception> conflict, Attempt<T> attempt) {
    AtomicInteger attempts = new AtomicInteger();
    AtomicReference<T> result = new AtomicReference<>();
    Tasks.range(1)
        .retry(ATTEMPTS - 1)
        .onlyRetryOn(conflict)
        .exponentialBackoff(MIN_SLEEP_MS, MAX_SLEEP_MS, MAX_DURATION_MS, 2.0)
        .throwFailureWhenFinished()
        .run(unused -> result.set(attempt.run(attempts.incrementAndGet())));
    return result.get();
  }
}
