package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

/**
 * A table whose replica identity is a unique index other than its primary key, on real PostgreSQL,
 * Debezium and Kafka. PostgreSQL then sends only the index's columns of a deleted or key-changed
 * row, and Debezium fills the primary key with zeros: the delete of row 7 reaches Kafka as the
 * delete of key 0. {@code check-source} reports it with the fix; with the index's columns as the
 * record key ({@code message.key.columns}), the table equals the source through deletes, updates
 * of the primary key and updates of the index's columns.
 */
class PostgresReplicaIdentityIndexEndToEndTest {

  private static final TableIdentifier ACCOUNTS = TableIdentifier.of("inventory", "accounts");

  @Test
  void aReplicaIdentityIndexAsTheRecordKeyKeepsTheTableEqualToTheSource() throws Exception {
    Map<String, String> keyedByIndex = Map.of("message.key.columns", "inventory.accounts:code");
    try (PostgresPipeline p = PostgresPipeline.start(
        keyedByIndex,
        "CREATE TABLE inventory.accounts (id int PRIMARY KEY, code text NOT NULL, v text)",
        "CREATE UNIQUE INDEX accounts_code ON inventory.accounts (code)",
        "ALTER TABLE inventory.accounts REPLICA IDENTITY USING INDEX accounts_code",
        "INSERT INTO inventory.accounts SELECT g, 'k' || g, 'v' || g"
            + " FROM generate_series(0, 40) g")) {
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, Map.of()).output())
          .contains("BLOCKER  inventory.accounts: REPLICA IDENTITY USING INDEX accounts_code: of a"
              + " deleted or key-changed row PostgreSQL sends [code], not the record key's [id]")
          .contains("\"message.key.columns\": \"inventory\\\\.accounts:code\"");
      assertThat(CheckSourceCommandTest.checkSource(p.postgres, keyedByIndex).output())
          .doesNotContain("BLOCKER  inventory.accounts");

      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      p.postgres.execute(
          "DELETE FROM inventory.accounts WHERE id % 7 = 0 AND id > 0",
          "UPDATE inventory.accounts SET id = id + 100 WHERE id % 5 = 1",
          "UPDATE inventory.accounts SET code = code || 'x' WHERE id % 6 = 2",
          "UPDATE inventory.accounts SET v = 'changed' WHERE id % 4 = 3",
          "INSERT INTO inventory.accounts VALUES (500, 'k500', 'new')");
      Eventually.noDifference(Duration.ofSeconds(120), () -> differs(p));
      PostgresEndToEndTest.assertInvariants(p.reader, List.of("accounts"));
    }
  }

  private static String differs(PostgresPipeline p) throws Exception {
    return p.differs("SELECT * FROM inventory.accounts", ACCOUNTS, List.of("code"));
  }
}
