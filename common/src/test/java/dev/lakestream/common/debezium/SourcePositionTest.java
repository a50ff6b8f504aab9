package dev.lakestream.common.debezium;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SourcePositionTest {

  private final DebeziumDecoder decoder = new DebeziumDecoder();

  @Test
  void postgresOrdersByLastCommitThenChangeLsn() {
    SourcePosition p =
        decode("{\"ts_ms\":1,\"lsn\":200,\"sequence\":\"[\\\"100\\\",\\\"200\\\"]\"}");
    assertThat(p.commitLsn()).isEqualTo(100L);
    assertThat(p.order()).hasValueSatisfying(o -> assertThat(o).containsExactly(100L, 200L));
    assertThat(p.describe()).isEqualTo("lsn 200 (after commit 100)");
  }

  @Test
  void postgresWithoutACommitLsnHasNoOrder() {
    assertThat(decode("{\"ts_ms\":1,\"lsn\":200,\"sequence\":\"[null,\\\"200\\\"]\"}")
            .order())
        .isEmpty();
    assertThat(decode("{\"ts_ms\":1,\"lsn\":200}").order()).isEmpty();
  }

  /** The form {@code firstOfTwoLsns} reads, as a pattern: the reference it is checked against. */
  private static final Pattern SEQUENCE =
      Pattern.compile("\\[(?:\"(\\d{1,18})\"|null),(?:\"\\d{1,18}\"|null)]");

  @Test
  void theSequenceScannerReadsWhatItsPatternMatchesAndNothingElse() {
    Random random = new Random(3);
    String[] parts = {
      "[",
      "]",
      ",",
      "\"",
      "null",
      "nul",
      "0",
      "7",
      "22212912",
      "123456789012345678",
      "1234567890123456789",
      " ",
      "x",
      "\u0661",
      "-1",
      "\"\"",
      "[null,"
    };
    long[] first = new long[1];
    int numbers = 0;
    for (int i = 0; i < 200_000; i++) {
      StringBuilder text = new StringBuilder();
      if (random.nextInt(3) > 0) {
        // Near the form: two elements, each quoted digits or null, sometimes bent.
        text.append('[')
            .append(element(random, parts))
            .append(',')
            .append(element(random, parts))
            .append(']');
        if (random.nextInt(8) == 0) {
          text.insert(random.nextInt(text.length() + 1), parts[random.nextInt(parts.length)]);
        }
      } else {
        for (int n = random.nextInt(7); n > 0; n--) {
          text.append(parts[random.nextInt(parts.length)]);
        }
      }
      Matcher m = SEQUENCE.matcher(text);
      DebeziumDecoder.Read read = DebeziumDecoder.firstOfTwoLsns(text.toString(), first);
      if (!m.matches()) {
        assertThat(read).as(text.toString()).isEqualTo(DebeziumDecoder.Read.OTHER);
      } else if (m.group(1) == null) {
        assertThat(read).as(text.toString()).isEqualTo(DebeziumDecoder.Read.NULL);
      } else {
        assertThat(read).as(text.toString()).isEqualTo(DebeziumDecoder.Read.NUMBER);
        assertThat(first[0]).as(text.toString()).isEqualTo(Long.parseLong(m.group(1)));
        numbers++;
      }
    }
    assertThat(numbers).isGreaterThan(10_000);
  }

  private static String element(Random random, String[] parts) {
    switch (random.nextInt(4)) {
      case 0:
        return "null";
      case 1:
        return parts[random.nextInt(parts.length)];
      default:
        return "\""
            + (random.nextInt(20) == 0
                ? ""
                : Long.toString(Math.abs(
                    random.nextLong() % (random.nextBoolean() ? 1_000_000_000L : Long.MAX_VALUE))))
            + "\"";
    }
  }

  @Test
  void debeziumsSequenceFormReadsAsJsonWouldReadIt() {
    long[] first = new long[1];
    assertThat(DebeziumDecoder.firstOfTwoLsns("[\"22212912\",\"22217936\"]", first))
        .isEqualTo(DebeziumDecoder.Read.NUMBER);
    assertThat(first[0]).isEqualTo(22212912L);
    assertThat(DebeziumDecoder.firstOfTwoLsns("[null,\"7\"]", first))
        .isEqualTo(DebeziumDecoder.Read.NULL);
    for (String other : new String[] {
      "[\"1\", \"2\"]",
      "[\"1\"]",
      "[\"1\",\"2\",\"3\"]",
      "[\"x\",\"2\"]",
      "[1,2]",
      "[\"\",\"2\"]",
      "[\"1234567890123456789\",\"2\"]",
      "[\"1\",\"2\"] ",
      "[]"
    }) {
      assertThat(DebeziumDecoder.firstOfTwoLsns(other, first))
          .as(other)
          .isEqualTo(DebeziumDecoder.Read.OTHER);
    }
    // What the JSON reading makes of the other forms stays as it was.
    assertThat(decode("{\"ts_ms\":1,\"lsn\":2,\"sequence\":\"[\\\"1\\\", \\\"2\\\"]\"}")
            .commitLsn())
        .isEqualTo(1L);
    assertThat(decode("{\"ts_ms\":1,\"lsn\":2,\"sequence\":\"[\\\"1\\\"]\"}").commitLsn())
        .isNull();
    assertThat(decode("{\"ts_ms\":1,\"lsn\":2,\"sequence\":\"[\\\"x\\\",\\\"2\\\"]\"}")
            .commitLsn())
        .isNull();
  }

  @Test
  void mysqlOrdersByBinlogFileNumberPositionAndRow() {
    SourcePosition p = decode("{\"ts_ms\":1,\"file\":\"mysql-bin.000003\",\"pos\":154,\"row\":2}");
    assertThat(p.order()).hasValueSatisfying(o -> assertThat(o).containsExactly(3L, 154L, 2L));
    assertThat(decode("{\"ts_ms\":1,\"file\":\"binlog\",\"pos\":154}").order()).isEmpty();
  }

  @Test
  void snapshotReadsAreMarked() {
    assertThat(decode("{\"ts_ms\":1,\"lsn\":5,\"snapshot\":\"incremental\"}").snapshot())
        .isTrue();
    assertThat(decode("{\"ts_ms\":1,\"lsn\":5,\"snapshot\":\"false\"}").snapshot())
        .isFalse();
  }

  private SourcePosition decode(String source) {
    String value =
        "{\"before\":null,\"after\":{\"id\":1},\"source\":" + source + ",\"op\":\"c\",\"ts_ms\":2}";
    return decoder
        .decode(
            "{\"id\":1}".getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8))
        .orElseThrow()
        .source();
  }
}
