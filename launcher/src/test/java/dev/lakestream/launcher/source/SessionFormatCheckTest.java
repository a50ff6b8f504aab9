package dev.lakestream.launcher.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

/**
 * Money as PostgreSQL prints it in several locales, read the way Debezium 3.6.1 reads it (the end
 * to end test shows Debezium failing on the de_DE form and reading the C form).
 */
class SessionFormatCheckTest {

  @Test
  void theCFormIsReadWithItsSignAndCents() {
    assertThat(SessionFormatCheck.readAsDebezium("-$1,234,567.89"))
        .contains(new BigDecimal("-1234567.89"));
    assertThat(SessionFormatCheck.readAsDebezium("$1,234,567.89"))
        .contains(new BigDecimal("1234567.89"));
    assertThat(SessionFormatCheck.readAsDebezium("($0.01)")).contains(new BigDecimal("-0.01"));
    // As Debezium's parser: each parenthesis dropped where it is, the sign put before the rest.
    assertThat(SessionFormatCheck.readAsDebezium("$1.00)")).contains(new BigDecimal("1.00"));
    assertThat(SessionFormatCheck.readAsDebezium("-($1)")).isEmpty();
  }

  @Test
  void aCurrencyAfterTheAmountOrACommaForCentsIsNotReadOrMisread() {
    // de_DE and fr_FR: Debezium cannot read them.
    assertThat(SessionFormatCheck.readAsDebezium("1.234.567,89 €")).isEmpty();
    assertThat(SessionFormatCheck.readAsDebezium("-1 234 567,89 €")).isEmpty();
    // A one-character symbol before a comma for cents: read, as another amount.
    assertThat(SessionFormatCheck.readAsDebezium("€1.234,56")).contains(new BigDecimal("1.23456"));
  }
}
