package dev.lakestream.sync.cycle;

import java.util.List;
import java.util.function.Consumer;

/**
 * The backstop's rounds over the known tables: each round checks them in name order from the one
 * after the table the previous round checked last, until its time budget is spent (the first
 * table is always checked). A round cut short is continued by the next, so every table is checked
 * in turn however many there are and however slow the catalog, and no round holds the stream
 * thread, and its transaction, past its limits.
 */
final class BackstopRounds {

  private String last;

  /**
   * Checks {@code tables} (in name order) from the one after the last checked, until {@code
   * budgetNanos} have passed; returns how many were left for the next round.
   */
  int run(List<String> tables, long budgetNanos, Consumer<String> check) {
    int start = 0;
    if (last != null) {
      while (start < tables.size() && tables.get(start).compareTo(last) <= 0) {
        start++;
      }
    }
    long started = System.nanoTime();
    for (int i = 0; i < tables.size(); i++) {
      if (i > 0 && System.nanoTime() - started >= budgetNanos) {
        return tables.size() - i;
      }
      String table = tables.get((start + i) % tables.size());
      last = table;
      check.accept(table);
    }
    return 0;
  }
}
