package dev.lakestream.common.debezium;

import java.util.Optional;

/**
 * Where in the source database a change happened, from the envelope's {@code source} block.
 *
 * @param tsMs commit time in the source database (ms since epoch), -1 when absent
 * @param lsn PostgreSQL log sequence number of the change, or null
 * @param commitLsn PostgreSQL: the LSN of the last commit before the change ({@code source.sequence}
 *     [0]), or null when the connector does not send {@code sequence}
 * @param binlogFile MySQL binlog file name, or null
 * @param binlogPosition MySQL binlog position, -1 when absent
 * @param binlogRow MySQL row within the binlog event, 0 when absent
 * @param snapshot true for rows read by a connector snapshot (initial, re-snapshot or incremental)
 * @param txId PostgreSQL's ID of the transaction the change is part of ({@code source.txId}), -1
 *     when absent
 */
public record SourcePosition(
    long tsMs,
    Long lsn,
    Long commitLsn,
    String binlogFile,
    long binlogPosition,
    long binlogRow,
    boolean snapshot,
    long txId) {

  public static final SourcePosition UNKNOWN =
      new SourcePosition(-1, null, null, null, -1, 0, false, -1);

  /**
   * The change's place in the order the connector emits changes, as a tuple to compare
   * lexicographically: PostgreSQL (last commit LSN, LSN), MySQL (binlog file number, position,
   * row). Empty when the source gives no total order: no {@code sequence} from PostgreSQL (the LSN
   * of a change alone is not ordered across interleaved transactions), or an unknown connector.
   */
  public Optional<long[]> order() {
    if (lsn != null) {
      return commitLsn == null ? Optional.empty() : Optional.of(new long[] {commitLsn, lsn});
    }
    if (binlogFile != null && binlogPosition >= 0) {
      long fileNumber = binlogFileNumber(binlogFile);
      return fileNumber < 0
          ? Optional.empty()
          : Optional.of(new long[] {fileNumber, binlogPosition, binlogRow});
    }
    return Optional.empty();
  }

  /** The position as a person reads it in a log line. */
  public String describe() {
    if (lsn != null) {
      return "lsn " + lsn + (commitLsn == null ? "" : " (after commit " + commitLsn + ")");
    }
    if (binlogFile != null) {
      return binlogFile + ":" + binlogPosition + (binlogRow > 0 ? " row " + binlogRow : "");
    }
    return "unknown position";
  }

  /** The numeric suffix of a binlog file name ({@code mysql-bin.000042} is 42), or -1. */
  static long binlogFileNumber(String file) {
    int dot = file.lastIndexOf('.');
    try {
      return Long.parseLong(file.substring(dot + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
