package dev.lakestream.launcher;

import dev.lakestream.common.event.MainCommitted;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Freshness per source transaction: PostgreSQL's own commit time (with {@code
 * track_commit_timestamp=on}) to the commit time of the first main snapshot whose newest source
 * commit time reaches it. Transactions no main snapshot reaches yet are left out.
 */
final class Freshness {

  private Freshness() {}

  static List<Long> perTransaction(Connection c, List<Long> txids, List<MainCommitted> mainCommits) throws SQLException {
    List<Long> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT (extract(epoch FROM pg_xact_commit_timestamp(?::text::xid8::xid)) * 1000)::bigint")) {
      for (long txid : txids) {
        ps.setLong(1, txid);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          long committed = rs.getLong(1);
          mainCommits.stream()
              .filter(m -> m.maxSourceTsMs() >= committed)
              .mapToLong(MainCommitted::committedAtMs)
              .min()
              .ifPresent(at -> out.add(at - committed));
        }
      }
    }
    return out;
  }
}
