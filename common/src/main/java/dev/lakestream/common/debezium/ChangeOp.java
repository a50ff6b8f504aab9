package dev.lakestream.common.debezium;

/** The row-level operations of a Debezium change event ({@code op} field). */
public enum ChangeOp {
  CREATE('c'),
  UPDATE('u'),
  DELETE('d'),
  /** A row read by the connector's initial or incremental snapshot: its current state. */
  READ('r'),
  /** A TRUNCATE of the whole table: every row changed before it is gone. It has no key and no row. */
  TRUNCATE('t');

  private final char code;

  ChangeOp(char code) {
    this.code = code;
  }

  public char code() {
    return code;
  }

  /** True when the change leaves a row with this key behind (its after-image). */
  public boolean leavesRow() {
    return this != DELETE && this != TRUNCATE;
  }

  public static ChangeOp fromCode(String code) {
    if (code != null && code.length() == 1) {
      for (ChangeOp op : values()) {
        if (op.code == code.charAt(0)) {
          return op;
        }
      }
    }
    return null;
  }
}
