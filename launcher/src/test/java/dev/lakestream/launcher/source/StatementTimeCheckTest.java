package dev.lakestream.launcher.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A server's limit on statements against the connector's initial statements. */
class StatementTimeCheckTest {

  private static List<Finding> check(String variable, String value, String statements) {
    List<Finding> findings = new ArrayList<>();
    StatementTimeCheck.check(
        variable,
        value,
        statements == null ? Map.of() : Map.of("database.initial.statements", statements),
        findings);
    return findings;
  }

  @Test
  void noLimitIsNoFinding() {
    assertThat(check("max_statement_time", "0.000000", null)).isEmpty();
    assertThat(check("max_execution_time", "0", null)).isEmpty();
    assertThat(check("max_statement_time", null, null)).isEmpty();
  }

  @Test
  void aLimitTheConnectorKeepsIsABlockerAndOneItLiftsIsNot() {
    assertThat(check("max_statement_time", "2.000000", null))
        .singleElement()
        .satisfies(f -> assertThat(f.toString())
            .startsWith("BLOCKER  max_statement_time: max_statement_time=2.000000 s: the server"
                + " stops a statement that runs longer"));
    assertThat(check("max_execution_time", "30000", "SET SESSION sql_mode = ''"))
        .singleElement()
        .satisfies(f -> assertThat(f.level()).isEqualTo(Finding.Level.BLOCKER));
    assertThat(check("max_execution_time", "30000", "SET SESSION max_execution_time = 0.5"))
        .singleElement()
        .satisfies(f -> assertThat(f.level()).isEqualTo(Finding.Level.BLOCKER));
    assertThat(check("max_statement_time", "2", "SET x = 1;SET SESSION MAX_STATEMENT_TIME=0"))
        .singleElement()
        .satisfies(f -> assertThat(f.level()).isEqualTo(Finding.Level.OK));
  }
}
