package dev.lakestream.common.debezium;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A change's row image (Debezium's {@code after}) as its top-level columns in the order the record
 * holds them: each name with the node a tree of the row would hold for it, a name that occurs twice
 * held twice. No tree is built until one is asked for: most changes never need it (their row is
 * converted from the columns as they are, and their placeholders looked for there too). Building
 * a tree of the row (a map of its columns) was a third of decoding a change.
 *
 * <p>The tree is what {@link ChangeEvent#after()} returns, built once from the columns, as a tree
 * read from the record would be: a name that occurs twice takes its place of the first time and
 * the value of the last. Equal images are equal trees. Not thread-safe while its tree is built (a
 * change is read by one thread).
 */
public final class RowImage {

  private String[] names;
  private JsonNode[] values;
  private int size;
  private ObjectNode tree;

  private RowImage(String[] names, JsonNode[] values, int size, ObjectNode tree) {
    this.names = names;
    this.values = values;
    this.size = size;
    this.tree = tree;
  }

  /** An image that is a tree already. */
  public static RowImage of(ObjectNode tree) {
    return new RowImage(null, null, 0, tree);
  }

  /** The image of the first {@code size} columns of {@code names} and {@code values}, as read. */
  static RowImage ofColumns(String[] names, JsonNode[] values, int size) {
    return new RowImage(names, values, size, null);
  }

  /**
   * True while no tree is built: a reader then reads the columns ({@link #size()}, {@link
   * #name(int)}, {@link #value(int)}) and, should anything there be out of the ordinary, the tree,
   * which gives the answer its exact form.
   */
  public boolean flat() {
    return tree == null;
  }

  /** The columns as the record holds them, a name twice if it occurs twice; 0 once not flat. */
  public int size() {
    return size;
  }

  public String name(int i) {
    return names[i];
  }

  public JsonNode value(int i) {
    return values[i];
  }

  /** Whether the row holds a column of that name, null or not. */
  public boolean has(String column) {
    if (tree != null) {
      return tree.has(column);
    }
    for (int i = 0; i < size; i++) {
      if (names[i].equals(column)) {
        return true;
      }
    }
    return false;
  }

  /** The first column {@code schema} has no field for, or null when it declares them all. */
  public String undeclaredIn(ConnectSchema schema) {
    if (tree != null) {
      for (var it = tree.fieldNames(); it.hasNext(); ) {
        String name = it.next();
        if (schema.field(name) == null) {
          return name;
        }
      }
      return null;
    }
    for (int i = 0; i < size; i++) {
      if (schema.field(names[i]) == null) {
        return names[i];
      }
    }
    return null;
  }

  /** The image as a tree, built the first time. */
  public ObjectNode tree() {
    if (tree == null) {
      ObjectNode built = RecordJson.JSON.createObjectNode();
      for (int i = 0; i < size; i++) {
        built.set(names[i], values[i]);
      }
      tree = built;
      names = null;
      values = null;
      size = 0;
    }
    return tree;
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
