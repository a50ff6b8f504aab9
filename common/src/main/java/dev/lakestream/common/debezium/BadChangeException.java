package dev.lakestream.common.debezium;

/**
 * A change record that cannot be applied: malformed, incomplete, or not expressible in the table.
 * The message is the reason a user reads in the dead-letter record's headers.
 */
public class BadChangeException extends RuntimeException {

  public BadChangeException(String reason) {
    super(reason);
  }

  public BadChangeException(String reason, Throwable cause) {
    super(reason, cause);
  }
}
