package dev.lakestream.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lakestream.testkit.KafkaHeaders;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

/** A dead letter fits its topic: what does not fit is left out, and says so. */
class DeadLettersTest {

  private static final int LIMIT = DeadLetters.MAX_RECORD_BYTES;

  @Test
  void aRecordThatFitsIsKeptWhole() {
    Record<byte[], byte[]> letter = letter(new byte[100], new byte[LIMIT - 100], "bad");
    assertThat(letter.key()).hasSize(100);
    assertThat(letter.value()).hasSize(LIMIT - 100);
    assertThat(letter.headers().lastHeader(DeadLetters.OMITTED)).isNull();
  }

  @Test
  void aValueThatDoesNotFitIsLeftOutAndTheKeyKept() {
    Record<byte[], byte[]> letter = letter(new byte[100], new byte[LIMIT - 99], "bad");
    assertThat(letter.key()).hasSize(100);
    assertThat(letter.value()).isNull();
    assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.OMITTED))
        .isEqualTo("value " + (LIMIT - 99) + " bytes");
    assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.OFFSET)).isEqualTo("42");
  }

  @Test
  void aKeyThatDoesNotFitAloneIsLeftOutToo() {
    Record<byte[], byte[]> letter = letter(new byte[LIMIT + 1], new byte[10], "bad");
    assertThat(letter.key()).isNull();
    assertThat(letter.value()).isNull();
    assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.OMITTED))
        .isEqualTo("key " + (LIMIT + 1) + " bytes, value 10 bytes");
  }

  /**
   * A dead letter forwarded as the event it was (an unreadable internal record, as its bytes) is
   * measured when serialized: one too large goes without its value; records of the sink's other
   * topics go as they are, whatever their size.
   */
  @Test
  void aSerializedDeadLetterThatDoesNotFitIsLeftOutAndOtherTopicsAreNot() {
    Serializer<byte[]> capped = DeadLetters.capped(new ByteArraySerializer(), "dlq");
    RecordHeaders headers = new RecordHeaders();
    assertThat(capped.serialize("dlq", headers, new byte[LIMIT])).hasSize(LIMIT);
    assertThat(headers.lastHeader(DeadLetters.OMITTED)).isNull();
    assertThat(capped.serialize("dlq", headers, new byte[LIMIT + 1])).isNull();
    assertThat(KafkaHeaders.text(headers, DeadLetters.OMITTED))
        .isEqualTo("value " + (LIMIT + 1) + " bytes");
    RecordHeaders other = new RecordHeaders();
    assertThat(capped.serialize("commits", other, new byte[LIMIT + 1])).hasSize(LIMIT + 1);
    assertThat(other.lastHeader(DeadLetters.OMITTED)).isNull();
  }

  @Test
  void aLongReasonIsCutAndSaysHowLongItWas() {
    String reason = "x".repeat(DeadLetters.MAX_REASON_CHARS + 5);
    Record<byte[], byte[]> letter = letter(new byte[1], new byte[1], reason);
    assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
        .startsWith("x".repeat(DeadLetters.MAX_REASON_CHARS))
        .endsWith("... (" + reason.length() + " characters)")
        .hasSize(
            DeadLetters.MAX_REASON_CHARS + ("... (" + reason.length() + " characters)").length());
    Record<byte[], byte[]> exact =
        letter(new byte[1], new byte[1], "y".repeat(DeadLetters.MAX_REASON_CHARS));
    assertThat(KafkaHeaders.text(exact.headers(), DeadLetters.REASON))
        .isEqualTo("y".repeat(DeadLetters.MAX_REASON_CHARS));
  }

  private static Record<byte[], byte[]> letter(byte[] key, byte[] value, String reason) {
    return DeadLetters.of(
        new Record<>(key, value, 7L, new RecordHeaders()), "t", 3, 42, "ingest", reason);
  }
}
