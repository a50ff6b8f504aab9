package dev.lakestream.launcher.source;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.launcher.source.SnapshotTimeZoneCheck.Server;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The connector's time zone settings judged against servers in several zones, as MySQL's driver
 * (Connector/J) reads them. The end-to-end test shows the readings on a real MariaDB in Berlin;
 * this one covers the settings and servers it does not run.
 */
class SnapshotTimeZoneCheckTest {

  private static final List<String> COLUMNS = List.of("inventory.t.ts");
  private static final Map<String, String> SHIPPED = Map.of(
      "database.connectionTimeZone", "UTC", "database.forceConnectionTimeZoneToSession", "true");

  private static Server server(String timeZone, String systemTimeZone, String actual) {
    return new Server(timeZone, systemTimeZone, SnapshotTimeZoneCheck.offsetsOf(ZoneId.of(actual)));
  }

  private static final Server UTC = server("SYSTEM", "UTC", "UTC");
  private static final Server BERLIN = server("Europe/Berlin", "UTC", "Europe/Berlin");

  private static Finding judge(Map<String, String> connector, Server server) {
    return SnapshotTimeZoneCheck.judge(connector, server, true, COLUMNS);
  }

  @Test
  void theShippedSettingsReadRightOnAnyServerWithoutAskingItsZone() {
    for (Server server : List.of(UTC, BERLIN, new Server("Europe/Berlin", "CEST", null))) {
      assertThat(judge(SHIPPED, server).level()).isEqualTo(Finding.Level.OK);
    }
    assertThat(judge(
                Map.of(
                    "database.connectionTimeZone", "+00:00",
                    "database.forceConnectionTimeZoneToSession", "YES"),
                BERLIN)
            .level())
        .as("Connector/J's yes")
        .isEqualTo(Finding.Level.OK);
  }

  @Test
  void debeziumsDefaultIsRightAtAFixedOffsetAndMisreadsTheRepeatedHourWhereClocksGoBack() {
    assertThat(judge(Map.of(), UTC).toString())
        .isEqualTo("OK       database.connectionTimeZone: SERVER (Debezium's default): snapshots"
            + " read TIMESTAMP values in SYSTEM, the operating system's UTC, a fixed offset (Z)");
    assertThat(judge(Map.of(), server("+05:30", "UTC", "Asia/Kolkata")).level())
        .isEqualTo(Finding.Level.OK);
    Finding berlin = judge(Map.of(), BERLIN);
    assertThat(berlin.level()).isEqualTo(Finding.Level.BLOCKER);
    assertThat(berlin.message())
        .contains("in Europe/Berlin, whose clocks go back: a value in an hour that repeats"
            + " arrives an hour off")
        .contains("captured TIMESTAMP column(s): inventory.t.ts");
    assertThat(SnapshotTimeZoneCheck.judge(Map.of(), BERLIN, true, List.of()).level())
        .as("no TIMESTAMP column captured yet")
        .isEqualTo(Finding.Level.WARNING);
    assertThat(judge(Map.of("database.connectionTimeZone", "SERVER"), BERLIN).level())
        .isEqualTo(Finding.Level.BLOCKER);
  }

  @Test
  void aServerInTheOperatingSystemsZoneIsReadInTheZoneTheDriverMakesOfItsAbbreviation() {
    // China's CST, which the driver takes for Chicago's.
    Finding china = judge(Map.of(), server("SYSTEM", "CST", "Asia/Shanghai"));
    assertThat(china.level()).isEqualTo(Finding.Level.BLOCKER);
    assertThat(china.message())
        .contains("SYSTEM, the operating system's CST")
        .contains("reads them as America/Chicago")
        .contains("arrives shifted by +13 h or +14 h");
    // An abbreviation of summer time the driver refuses: the connector fails.
    Finding cest = judge(Map.of(), server("SYSTEM", "CEST", "Europe/Berlin"));
    assertThat(cest.level()).isEqualTo(Finding.Level.BLOCKER);
    assertThat(cest.message())
        .contains("The server time zone value 'CEST' is unrecognized")
        .contains("the connector fails");
  }

  @Test
  void aZoneWithoutForcingItOnTheSessionsShiftsEveryValueByTheDifference() {
    Finding utcAlone = judge(Map.of("database.connectionTimeZone", "UTC"), BERLIN);
    assertThat(utcAlone.level()).isEqualTo(Finding.Level.BLOCKER);
    assertThat(utcAlone.message())
        .startsWith("UTC, without database.forceConnectionTimeZoneToSession=true: the server"
            + " prints a session's TIMESTAMP values in its zone (Europe/Berlin) and the"
            + " connector's driver reads them as UTC, so every TIMESTAMP a snapshot reads arrives"
            + " shifted by +1 h or +2 h");
    // The zone the server is in, named without forcing it: right, but for the repeated hour.
    assertThat(judge(Map.of("database.connectionTimeZone", "Europe/Berlin"), BERLIN)
            .message())
        .contains("whose clocks go back");
    // Java's TimeZone, which the driver makes of the setting, knows no "UTC+01:00": it reads GMT.
    assertThat(judge(
                Map.of("database.connectionTimeZone", "UTC+01:00"),
                server("+01:00", "UTC", "+01:00"))
            .message())
        .contains("arrives shifted by +1 h");
  }

  @Test
  void aNamedZoneForcedOnTheSessionsNeedsTheServersTimeZoneTablesAndMisreadsTheRepeatedHour() {
    Map<String, String> berlin = Map.of(
        "database.connectionTimeZone", "Europe/Berlin",
        "database.forceConnectionTimeZoneToSession", "true");
    assertThat(SnapshotTimeZoneCheck.judge(berlin, UTC, false, COLUMNS).message())
        .contains("which the server does not know");
    assertThat(judge(berlin, UTC).message()).contains("whose clocks go back");
  }

  @Test
  void settingsTheDriverCannotReadAndTheWorkersOwnZoneAreReported() {
    assertThat(judge(Map.of("database.connectionTimeZone", "server"), UTC).toString())
        .startsWith("BLOCKER  database.connectionTimeZone: server: not a time zone MySQL's driver"
            + " reads");
    assertThat(judge(Map.of("database.connectionTimeZone", "LOCAL"), UTC).level())
        .isEqualTo(Finding.Level.WARNING);
    assertThat(judge(Map.of(), new Server("SYSTEM", "UTC", null)).level())
        .isEqualTo(Finding.Level.INFO);
  }

  @Test
  void aDatabaseSettingComesBeforeTheSameDriverSetting() {
    Map<String, String> both = Map.of(
        "database.connectionTimeZone", "SERVER",
        "driver.connectionTimeZone", "UTC",
        "driver.forceConnectionTimeZoneToSession", "true");
    assertThat(judge(both, BERLIN).level()).isEqualTo(Finding.Level.BLOCKER);
    assertThat(judge(
                Map.of(
                    "driver.connectionTimeZone", "UTC",
                    "driver.forceConnectionTimeZoneToSession", "true"),
                BERLIN)
            .level())
        .isEqualTo(Finding.Level.OK);
  }
}
