package dev.lakestream.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Compares a table's rows with the model, value for value, and describes every difference: keys
 * missing, keys extra, and columns that differ (at most a few of each, with the total counts).
 */
public final class TableComparison {

  private static final int SHOWN = 5;

  private TableComparison() {}

  /** Null when equal, otherwise what differs. Columns of the table that the model lacks are ignored. */
  public static String differences(
      Map<List<Object>, Map<String, Object>> expected,
      Map<List<Object>, Map<String, Object>> actual) {
    List<String> missing = new ArrayList<>();
    List<String> extra = new ArrayList<>();
    List<String> changed = new ArrayList<>();
    for (var e : expected.entrySet()) {
      Map<String, Object> row = actual.get(e.getKey());
      if (row == null) {
        missing.add(e.getKey().toString());
        continue;
      }
      for (var column : e.getValue().entrySet()) {
        Object have = row.get(column.getKey());
        if (!Objects.equals(column.getValue(), have)) {
          changed.add(e.getKey() + "." + column.getKey() + ": expected " + column.getValue()
              + " but was " + have);
        }
      }
    }
    for (var key : actual.keySet()) {
      if (!expected.containsKey(key)) {
        extra.add(key.toString());
      }
    }
    if (missing.isEmpty() && extra.isEmpty() && changed.isEmpty()) {
      return null;
    }
    return String.format(
        "%d rows expected, %d found; %d missing %s; %d unexpected %s; %d values differ %s",
        expected.size(),
        actual.size(),
        missing.size(),
        first(missing),
        extra.size(),
        first(extra),
        changed.size(),
        first(changed));
  }

  private static String first(List<String> items) {
    return new TreeSet<>(items).stream().limit(SHOWN).toList().toString();
  }
}
