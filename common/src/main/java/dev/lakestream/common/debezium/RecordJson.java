package dev.lakestream.common.debezium;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;

/**
 * The JSON mapper records are read with, and the nodes it makes: the decoder makes a row's columns
 * ({@link RowImage}) as the nodes a tree of the row would hold, so that a row converted from its
 * columns and one converted from its tree see the same values.
 */
public final class RecordJson {

  /**
   * Parsers take their buffers from a pool of this mapper's own, not from Jackson's default (one
   * per thread, found through a {@code ThreadLocal}): on ingest's stream threads that lookup was a
   * fifth of decoding, a {@code ThreadLocal} map crowded by the other libraries on the thread.
   */
  public static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
      .recyclerPool(JsonRecyclerPools.newConcurrentDequePool())
      .build());

  private RecordJson() {}

  /**
   * The value the parser is at ({@code token}, its current token), as the node a tree read by
   * {@link #JSON} would hold there: a scalar made directly (reading a tree per scalar costs more than
   * the scalar), anything else read as a tree. Jackson's tree reader makes an int, a long or a big
   * integer by the number's size, and a double of any other number but a big decimal or a 32-bit
   * float, which text never gives (those two are read as a tree).
   */
  public static JsonNode node(JsonParser parser, JsonToken token) throws IOException {
    switch (token) {
      case VALUE_STRING:
        return TextNode.valueOf(parser.getText());
      case VALUE_NUMBER_INT:
        switch (parser.getNumberType()) {
          case INT:
            return IntNode.valueOf(parser.getIntValue());
          case LONG:
            return LongNode.valueOf(parser.getLongValue());
          default:
            return BigIntegerNode.valueOf(parser.getBigIntegerValue());
        }
      case VALUE_NUMBER_FLOAT:
        switch (parser.getNumberTypeFP()) {
          case BIG_DECIMAL:
          case FLOAT32:
            return JSON.readTree(parser);
          default:
            return DoubleNode.valueOf(parser.getDoubleValue());
        }
      case VALUE_TRUE:
        return BooleanNode.TRUE;
      case VALUE_FALSE:
        return BooleanNode.FALSE;
      case VALUE_NULL:
        return NullNode.getInstance();
      default:
        return JSON.readTree(parser);
    }
  }
}
