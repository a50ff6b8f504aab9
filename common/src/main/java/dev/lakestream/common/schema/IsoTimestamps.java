package dev.lakestream.common.schema;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * Reads the one timestamp text shape Debezium writes ({@code io.debezium.time.ZonedTimestamp}:
 * {@code 2024-03-05T10:15:30.123456Z}, or with an offset {@code +05:30}) without {@code
 * java.time}'s general parser, which cost a tenth of ingest's time on a table with a few such
 * columns. Anything else (another shape, an invalid field) returns null, and the caller parses it
 * the general way, which accepts or refuses it as before.
 */
final class IsoTimestamps {

  private IsoTimestamps() {}

  /**
   * The instant of {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}]} followed by {@code Z} or {@code ±HH:MM},
   * or with no offset (read as UTC) when {@code offsetRequired} is false; null for any other text.
   */
  static Instant parse(String text, boolean offsetRequired) {
    int length = text.length();
    if (length < 19
        || text.charAt(4) != '-'
        || text.charAt(7) != '-'
        || text.charAt(10) != 'T'
        || text.charAt(13) != ':'
        || text.charAt(16) != ':') {
      return null;
    }
    int year = digits(text, 0, 4);
    int month = digits(text, 5, 2);
    int day = digits(text, 8, 2);
    int hour = digits(text, 11, 2);
    int minute = digits(text, 14, 2);
    int second = digits(text, 17, 2);
    if ((year | month | day | hour | minute | second) < 0) {
      return null;
    }
    int i = 19;
    int nanos = 0;
    if (i < length && text.charAt(i) == '.') {
      int start = ++i;
      while (i < length && i - start < 9 && isDigit(text.charAt(i))) {
        nanos = nanos * 10 + (text.charAt(i) - '0');
        i++;
      }
      int count = i - start;
      if (count == 0 || (i < length && isDigit(text.charAt(i)))) {
        return null;
      }
      for (int k = count; k < 9; k++) {
        nanos *= 10;
      }
    }
    ZoneOffset offset;
    if (i == length) {
      if (offsetRequired) {
        return null;
      }
      offset = ZoneOffset.UTC;
    } else if (i + 1 == length && text.charAt(i) == 'Z') {
      offset = ZoneOffset.UTC;
    } else if (i + 6 == length
        && (text.charAt(i) == '+' || text.charAt(i) == '-')
        && text.charAt(i + 3) == ':') {
      int hours = digits(text, i + 1, 2);
      int minutes = digits(text, i + 4, 2);
      if ((hours | minutes) < 0) {
        return null;
      }
      int sign = text.charAt(i) == '-' ? -1 : 1;
      try {
        offset = ZoneOffset.ofHoursMinutes(sign * hours, sign * minutes);
      } catch (DateTimeException e) {
        return null;
      }
    } else {
      return null;
    }
    try {
      LocalDateTime local = LocalDateTime.of(year, month, day, hour, minute, second, nanos);
      return Instant.ofEpochSecond(local.toEpochSecond(offset), nanos);
    } catch (DateTimeException e) {
      return null;
    }
  }

  /** The value of {@code count} ASCII digits at {@code from}; -1 when one is not a digit. */
  private static int digits(String text, int from, int count) {
    int value = 0;
    for (int i = from; i < from + count; i++) {
      char c = text.charAt(i);
      if (!isDigit(c)) {
        return -1;
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
