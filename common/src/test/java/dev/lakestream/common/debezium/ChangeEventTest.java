package dev.lakestream.common.debezium;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ChangeEventTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aKeysTextIsTheTextJacksonWritesForIt() {
    Random random = new Random(8);
    int written = 0;
    for (int i = 0; i < 100_000; i++) {
      ObjectNode key = JSON.createObjectNode();
      for (int c = 1 + random.nextInt(3); c > 0; c--) {
        String name = text(random);
        switch (random.nextInt(10)) {
          case 0 -> key.put(name, random.nextInt());
          case 1, 2 -> key.put(name, random.nextLong());
          case 3 -> key.put(name, (long) random.nextInt(1000));
          case 4 -> key.put(name, new BigDecimal(random.nextInt()).movePointLeft(2));
          case 5 -> key.put(name, random.nextDouble());
          case 6 -> key.put(name, new BigInteger(70, random));
          case 7 -> key.put(name, random.nextBoolean());
          default -> key.put(name, text(random));
        }
      }
      assertThat(ChangeEvent.keyJson(key)).as("%s", key).isEqualTo(key.toString());
      written++;
    }
    assertThat(written).isEqualTo(100_000);
  }

  /** Short strings from the characters escaping treats apart, and others. */
  private static String text(Random random) {
    StringBuilder out = new StringBuilder();
    for (int n = random.nextInt(12); n > 0; n--) {
      out.append(
          switch (random.nextInt(8)) {
            case 0 -> (char) random.nextInt(0x20); // control characters
            case 1 -> "\"\\/\u007f".charAt(random.nextInt(4));
            case 2 -> (char) (0x80 + random.nextInt(0x780)); // two UTF-8 bytes
            case 3 -> (char) (0xD800 + random.nextInt(0x800)); // surrogates, paired or not
            case 4 -> (char) (0x2028 + random.nextInt(2)); // line and paragraph separators
            case 5 -> (char) (0xE000 + random.nextInt(0x2000));
            default -> (char) (0x20 + random.nextInt(0x5f)); // printable ASCII
          });
    }
    return out.toString();
  }
}
