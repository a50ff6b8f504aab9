package dev.lakestream.common.debezium;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;

/**
 * A change's row image (Debezium's {@code after}): the JSON object where it lies in the record's
 * bytes, its tree built only when one is asked for. Most changes never need the tree: their row is
 * converted straight from the bytes ({@code RowConverter}), and their placeholders looked for there
 * too. The tree is what {@link ChangeEvent#after()} returns, built once.
 *
 * <p>The bytes are the record's own, not copied: a holder keeps the whole record alive. One kept
 * for long takes {@link #detached()}. Equal images are equal trees. Not thread-safe while its tree
 * is built (a change is read by one thread).
 */
public final class RowImage {

  private final byte[] bytes;
  private final int from;
  private final int length;
  /** The object's top-level field names, in order (as Jackson gives them: shared instances). */
  private final List<String> names;

  private ObjectNode tree;

  private RowImage(byte[] bytes, int from, int length, List<String> names, ObjectNode tree) {
    this.bytes = bytes;
    this.from = from;
    this.length = length;
    this.names = names;
    this.tree = tree;
  }

  /** An image that is a tree already. */
  public static RowImage of(ObjectNode tree) {
    return new RowImage(null, 0, 0, null, tree);
  }

  /**
   * The image whose JSON text is {@code bytes[from, from + length)}: a JSON object, its syntax
   * checked by the caller, who read past it and noted its top-level field {@code names}.
   */
  static RowImage inBytes(byte[] bytes, int from, int length, List<String> names) {
    return new RowImage(bytes, from, length, names, null);
  }

  /** Whether the row holds a column of that name, null or not. */
  public boolean has(String column) {
    return tree != null ? tree.has(column) : names.contains(column);
  }

  /**
   * True while no tree is built: a reader then reads the bytes ({@link #parser()}) and, should
   * anything there be out of the ordinary, the tree, which gives the answer its exact form.
   */
  public boolean unparsed() {
    return tree == null;
  }

  /** A parser at the start of the image's bytes; only while {@link #unparsed()}. */
  public JsonParser parser() throws IOException {
    if (bytes == null) {
      throw new IllegalStateException("a row image made from a tree has no bytes");
    }
    return RecordJson.JSON.getFactory().createParser(bytes, from, length);
  }

  /** The image as a tree, built the first time. */
  public ObjectNode tree() {
    if (tree == null) {
      JsonNode read;
      try (JsonParser parser = parser()) {
        read = RecordJson.JSON.readTree(parser);
      } catch (JsonProcessingException e) {
        throw new BadChangeException(
            "malformed JSON in the record's \"after\" row: " + e.getOriginalMessage(), e);
      } catch (IOException e) {
        throw new BadChangeException("unreadable \"after\" row: " + e.getMessage(), e);
      }
      if (!(read instanceof ObjectNode object)) {
        throw new BadChangeException("the record's \"after\" row is not a JSON object");
      }
      tree = object;
    }
    return tree;
  }

  /** The same image holding only its own bytes (or its tree), not the record around them. */
  public RowImage detached() {
    if (tree != null) {
      return bytes == null ? this : of(tree);
    }
    if (from == 0 && length == bytes.length) {
      return this;
    }
    return new RowImage(Arrays.copyOfRange(bytes, from, from + length), 0, length, names, null);
  }

  @Override
  public boolean equals(Object o) {
    return o == this || (o instanceof RowImage other && tree().equals(other.tree()));
  }

  @Override
  public int hashCode() {
    return tree().hashCode();
  }

  @Override
  public String toString() {
    return tree().toString();
  }
}
