package dev.lakestream.testkit;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Generates a random but reproducible (per seed) stream of source changes for one table, the way
 * Debezium reports them: inserts, updates, deletes each followed by a tombstone, primary-key updates
 * (a delete of the old key, its tombstone, a create of the new key), deletes of keys that never
 * existed, re-inserts of deleted keys, and snapshot reads. Updates favour recently touched keys, so
 * one key changes several times within a batch.
 */
public final class ChangeStreamGenerator {

  /** Relative weights of the kinds of change. */
  public record Mix(
      int insert, int update, int delete, int deleteAbsent, int keyUpdate, int reinsert) {
    public static Mix defaults() {
      return new Mix(35, 35, 12, 4, 5, 9);
    }

    int total() {
      return insert + update + delete + deleteAbsent + keyUpdate + reinsert;
    }
  }

  private final Random random;
  private final Mix mix;
  private TestTable table;
  private final List<List<Object>> live = new ArrayList<>();
  private final Map<List<Object>, Integer> liveIndex = new LinkedHashMap<>();
  private final Map<List<Object>, Map<String, Object>> rows = new LinkedHashMap<>();
  private final Deque<List<Object>> recent = new ArrayDeque<>();
  private final List<List<Object>> deleted = new ArrayList<>();
  private final Set<List<Object>> used = new HashSet<>();
  private long nextId = 1;
  private long clockMs = 1_700_000_000_000L;
  private long lsn = 10_000_000L;
  private double keepChance;

  public ChangeStreamGenerator(TestTable table, long seed) {
    this(table, seed, Mix.defaults());
  }

  public ChangeStreamGenerator(TestTable table, long seed, Mix mix) {
    this.table = table;
    this.random = new Random(seed);
    this.mix = mix;
  }

  /**
   * Updates keep each non-key column's value with this probability, as applications that change a
   * few columns of a row do (and what makes PostgreSQL leave a TOASTed value out of an update).
   */
  public ChangeStreamGenerator keepingValues(double chance) {
    this.keepChance = chance;
    return this;
  }

  public TestTable table() {
    return table;
  }

  /** Later changes use the table's new shape (for example after a column was added). */
  public void alter(TestTable altered) {
    this.table = altered;
  }

  /** A connector snapshot: {@code rows} new rows read with op {@code r}. */
  public List<Change> snapshot(int count) {
    List<Change> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      List<Object> key = freshKey();
      Map<String, Object> row = randomRow(key);
      out.add(change('r', key, null, row));
      put(key, row);
    }
    return out;
  }

  /**
   * A bulk load ({@code COPY}, a multi-row {@code INSERT}): {@code rows} inserts, each run of {@code
   * perRecord} of them sharing one source position, as PostgreSQL logs a heap page of a multi-row
   * insert in one WAL record.
   */
  public List<Change> copy(int rows, int perRecord) {
    List<Change> out = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      List<Object> key = freshKey();
      Map<String, Object> row = randomRow(key);
      Change change = change('c', key, null, row);
      if (i % perRecord != 0) {
        Change first = out.get(out.size() - 1);
        change = new Change('c', table, key, null, row, first.sourceTsMs(), first.lsn());
        lsn = first.lsn();
      }
      out.add(change);
      put(key, row);
    }
    return out;
  }

  /**
   * The source starts over: later changes come from another database holding the same rows (a
   * blue/green upgrade, a restore into a new cluster), whose log is at {@code lsn}, lower than this
   * one's, and whose first change commits {@code laterMs} after the last one here.
   */
  public void startOver(long lsn, long laterMs) {
    this.lsn = lsn;
    this.clockMs += laterMs;
  }

  /** A TRUNCATE of the table: every row goes. */
  public Change truncate() {
    for (List<Object> key : new ArrayList<>(live)) {
      remove(key);
      deleted.add(key);
    }
    clockMs += 1;
    lsn += 1 + random.nextInt(200);
    return new Change('T', table, List.of(), null, null, clockMs, lsn);
  }

  /** Deletes one live row of the generator's choosing: the delete and its tombstone. */
  public List<Change> deleteOne() {
    List<Change> out = new ArrayList<>();
    delete(pickLive(), out);
    return out;
  }

  /**
   * Updates of {@code count} distinct live rows: keys drawn across the whole table ({@code
   * clustered} false), or a run of adjacent live rows from a random start (in the order they were
   * inserted, so a run of neighbouring keys for a table that was loaded in key order).
   */
  public List<Change> updates(int count, boolean clustered) {
    int n = Math.min(count, live.size());
    List<List<Object>> keys = new ArrayList<>(n);
    if (clustered) {
      int start = random.nextInt(Math.max(1, live.size() - n + 1));
      keys.addAll(live.subList(start, start + n));
    } else {
      Set<Integer> picked = new HashSet<>();
      while (picked.size() < n) {
        int i = random.nextInt(live.size());
        if (picked.add(i)) {
          keys.add(live.get(i));
        }
      }
    }
    return updates(keys);
  }

  /** An update of each of {@code keys} (live keys of this generator's table). */
  public List<Change> updates(List<List<Object>> keys) {
    List<Change> out = new ArrayList<>(keys.size());
    for (List<Object> key : keys) {
      Map<String, Object> after = updatedRow(key);
      out.add(change('u', key, rows.get(key), after));
      put(key, after);
    }
    return out;
  }

  /** At least {@code count} changes (tombstones and the parts of a key update come on top). */
  public List<Change> next(int count) {
    List<Change> out = new ArrayList<>();
    while (out.size() < count) {
      int pick = random.nextInt(mix.total());
      if ((pick -= mix.insert()) < 0 || live.isEmpty()) {
        insert(freshKey(), out);
      } else if ((pick -= mix.update()) < 0) {
        List<Object> key = pickLive();
        Map<String, Object> before = rows.get(key);
        Map<String, Object> after = updatedRow(key);
        out.add(change('u', key, before, after));
        put(key, after);
      } else if ((pick -= mix.delete()) < 0) {
        delete(pickLive(), out);
      } else if ((pick -= mix.deleteAbsent()) < 0) {
        List<Object> key = freshKey();
        out.add(change('d', key, keyOnly(key), null));
        out.add(change('t', key, null, null));
      } else if ((pick -= mix.keyUpdate()) < 0) {
        List<Object> oldKey = pickLive();
        Map<String, Object> row = new LinkedHashMap<>(rows.get(oldKey));
        delete(oldKey, out);
        List<Object> newKey = freshKey();
        for (int i = 0; i < table.key().size(); i++) {
          row.put(table.key().get(i), newKey.get(i));
        }
        out.add(change('c', newKey, null, row));
        put(newKey, row);
      } else if (!deleted.isEmpty()) {
        List<Object> key = deleted.remove(random.nextInt(deleted.size()));
        if (!liveIndex.containsKey(key)) {
          insert(key, out);
        }
      }
    }
    return out;
  }

  private void insert(List<Object> key, List<Change> out) {
    Map<String, Object> row = randomRow(key);
    out.add(change('c', key, null, row));
    put(key, row);
  }

  private void delete(List<Object> key, List<Change> out) {
    out.add(change('d', key, keyOnly(key), null));
    out.add(change('t', key, null, null));
    remove(key);
    deleted.add(key);
  }

  private List<Object> pickLive() {
    if (!recent.isEmpty() && random.nextBoolean()) {
      List<Object> hot = new ArrayList<>(recent).get(random.nextInt(recent.size()));
      if (liveIndex.containsKey(hot)) {
        return hot;
      }
    }
    return live.get(random.nextInt(live.size()));
  }

  private List<Object> freshKey() {
    while (true) {
      List<Object> key = new ArrayList<>();
      for (String column : table.key()) {
        ColumnType type = table.column(column).type();
        if (type != ColumnType.INT32 && type != ColumnType.INT64) {
          // A UUID (random: version 4's spread), a date, a timestamp: unique with the others.
          key.add(type.random(random));
          continue;
        }
        long id = table.key().size() > 1 && column.equals(table.key().get(0))
            ? 1 + random.nextInt(5)
            : nextId++;
        key.add(type == ColumnType.INT32 ? (Object) (int) id : (Object) id);
      }
      if (used.add(key)) {
        return List.copyOf(key);
      }
    }
  }

  private Map<String, Object> randomRow(List<Object> key) {
    Map<String, Object> row = new LinkedHashMap<>();
    for (TestTable.Column column : table.columns()) {
      int k = table.key().indexOf(column.name());
      row.put(column.name(), k >= 0 ? key.get(k) : column.type().random(random));
    }
    return row;
  }

  private Map<String, Object> updatedRow(List<Object> key) {
    Map<String, Object> after = randomRow(key);
    if (keepChance > 0) {
      Map<String, Object> before = rows.get(key);
      for (TestTable.Column column : table.columns()) {
        if (!table.key().contains(column.name()) && random.nextDouble() < keepChance) {
          after.put(column.name(), before.get(column.name()));
        }
      }
    }
    return after;
  }

  private Map<String, Object> keyOnly(List<Object> key) {
    Map<String, Object> row = new LinkedHashMap<>();
    for (TestTable.Column column : table.columns()) {
      int k = table.key().indexOf(column.name());
      row.put(column.name(), k >= 0 ? key.get(k) : null);
    }
    return row;
  }

  private Change change(
      char op, List<Object> key, Map<String, Object> before, Map<String, Object> after) {
    clockMs += random.nextInt(3);
    lsn += 1 + random.nextInt(200);
    recent.addFirst(key);
    if (recent.size() > 16) {
      recent.removeLast();
    }
    return new Change(op, table, key, before, after, clockMs, lsn);
  }

  private void put(List<Object> key, Map<String, Object> row) {
    if (!liveIndex.containsKey(key)) {
      liveIndex.put(key, live.size());
      live.add(key);
    }
    rows.put(key, row);
  }

  private void remove(List<Object> key) {
    Integer index = liveIndex.remove(key);
    List<Object> last = live.remove(live.size() - 1);
    if (!last.equals(key)) {
      live.set(index, last);
      liveIndex.put(last, index);
    }
    rows.remove(key);
  }
}
