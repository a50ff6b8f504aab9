package dev.lakestream.common.debezium;

/**
 * Where in the source database a change was committed, from the envelope's {@code source} block.
 *
 * @param tsMs commit time in the source database (ms since epoch), -1 when absent
 * @param lsn PostgreSQL log sequence number, or null
 * @param binlogFile MySQL binlog file name, or null
 * @param binlogPosition MySQL binlog position, -1 when absent
 * @param snapshot true for rows read by a connector snapshot
 */
public record SourcePosition(long tsMs, Long lsn, String binlogFile, long binlogPosition, boolean snapshot) {

  public static final SourcePosition UNKNOWN = new SourcePosition(-1, null, null, -1, false);
}
