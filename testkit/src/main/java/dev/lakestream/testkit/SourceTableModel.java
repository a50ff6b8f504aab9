package dev.lakestream.testkit;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An independent in-memory model of a source table: the rows the table holds after a sequence of
 * changes. It knows nothing of Iceberg or of the pipeline; tests compare the pipeline's output to it.
 */
public final class SourceTableModel {

  private final Map<List<Object>, Map<String, Object>> rows = new HashMap<>();

  public void apply(Change change) {
    switch (change.op()) {
      case 'c', 'u', 'r' -> rows.put(change.key(), new LinkedHashMap<>(change.after()));
      case 'd' -> rows.remove(change.key());
      case 't' -> {}
      case 'T' -> rows.clear();
      default -> throw new IllegalArgumentException("unknown op " + change.op());
    }
  }

  /** Forgets every row (the table was dropped). */
  public void clear() {
    rows.clear();
  }

  public void applyAll(List<Change> changes) {
    changes.forEach(this::apply);
  }

  public boolean contains(List<Object> key) {
    return rows.containsKey(key);
  }

  public Map<String, Object> row(List<Object> key) {
    return rows.get(key);
  }

  public List<List<Object>> keys() {
    return new ArrayList<>(rows.keySet());
  }

  public int size() {
    return rows.size();
  }

  /** The rows by key, each row a column-name to value map. */
  public Map<List<Object>, Map<String, Object>> rows() {
    Map<List<Object>, Map<String, Object>> copy = new HashMap<>();
    rows.forEach((k, v) -> copy.put(k, new LinkedHashMap<>(v)));
    return copy;
  }
}
