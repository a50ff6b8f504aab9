package dev.lakestream.common.schema;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IsoTimestampsTest {

  /** What the general parser makes of {@code text}: the instant, or null when it refuses it. */
  private static Instant general(String text, boolean offsetRequired) {
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeException e) {
      if (offsetRequired) {
        return null;
      }
      try {
        return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
      } catch (DateTimeException e2) {
        return null;
      }
    }
  }

  @Test
  void readsWhatDebeziumWritesAsTheGeneralParserDoes() {
    Random random = new Random(17);
    long min = LocalDateTime.of(1, 1, 1, 0, 0).toEpochSecond(ZoneOffset.UTC);
    long max = LocalDateTime.of(9999, 12, 31, 23, 59, 59).toEpochSecond(ZoneOffset.UTC);
    for (int i = 0; i < 200_000; i++) {
      long seconds = min + (long) (random.nextDouble() * (max - min));
      int nanos =
          switch (random.nextInt(4)) {
            case 0 -> 0;
            case 1 -> random.nextInt(1_000) * 1_000_000;
            case 2 -> random.nextInt(1_000_000) * 1_000;
            default -> random.nextInt(1_000_000_000);
          };
      ZoneOffset offset = random.nextBoolean()
          ? ZoneOffset.UTC
          : ZoneOffset.ofTotalSeconds((random.nextInt(2 * 18 * 60 + 1) - 18 * 60) * 60);
      OffsetDateTime value = Instant.ofEpochSecond(seconds, nanos).atOffset(offset);
      String text = DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(value);
      Instant parsed = IsoTimestamps.parse(text, true);
      assertThat(parsed).as(text).isEqualTo(general(text, true)).isEqualTo(value.toInstant());
      String local = DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(value.toLocalDateTime());
      assertThat(IsoTimestamps.parse(local, false)).as(local).isEqualTo(general(local, false));
      assertThat(IsoTimestamps.parse(local, true)).as(local).isNull();
    }
  }

  @Test
  void leavesEveryOtherShapeToTheGeneralParser() {
    String[] others = {
      "2024-02-30T10:00:00Z", // no such day
      "2023-02-29T10:00:00Z",
      "2024-01-01T24:00:00Z", // the source's 24:00
      "2024-01-01T23:59:60Z", // a leap second
      "2024-13-01T00:00:00Z",
      "2024-01-01T00:00:00.Z",
      "2024-01-01T00:00:00.1234567891Z", // ten digits
      "2024-01-01T00:00:00+0530",
      "2024-01-01T00:00:00+05:30:15",
      "2024-01-01T00:00:00+19:00",
      "2024-01-01 00:00:00Z",
      "2024-01-01T00:00Z",
      "+12024-01-01T00:00:00Z",
      "-0001-01-01T00:00:00Z",
      "2024-01-01T00:00:00z",
      "infinity",
      "-infinity",
      "",
      "2024-1-01T00:00:00Z",
      "２０２４-01-01T00:00:00Z",
    };
    for (String text : others) {
      assertThat(IsoTimestamps.parse(text, true)).as(text).isNull();
      assertThat(IsoTimestamps.parse(text, false)).as(text).isNull();
    }
  }

  @Test
  void readsTheExtremesOfFourDigitYearsAndOffsets() {
    for (String text : new String[] {
      "0000-01-01T00:00:00Z",
      "9999-12-31T23:59:59.999999999Z",
      "1970-01-01T00:00:00-18:00",
      "1970-01-01T00:00:00+18:00",
      "2024-02-29T12:00:00.5+05:45",
    }) {
      assertThat(IsoTimestamps.parse(text, true)).as(text).isEqualTo(general(text, true));
    }
  }
}
