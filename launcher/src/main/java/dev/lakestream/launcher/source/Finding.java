package dev.lakestream.launcher.source;

import java.util.List;

/**
 * One thing a source check found.
 *
 * @param level how much it matters
 * @param subject what it is about: a setting, a slot, a table
 * @param message what was found and what to do
 */
public record Finding(Level level, String subject, String message) {

  /** BLOCKER: the pipeline (or the source application) breaks; WARNING: data is refused or changed. */
  public enum Level {
    OK,
    INFO,
    WARNING,
    BLOCKER
  }

  /** Up to five names, comma-separated, then how many more there are. */
  static String names(List<String> names) {
    return names.size() <= 5
        ? String.join(", ", names)
        : String.join(", ", names.subList(0, 5)) + " and " + (names.size() - 5) + " more";
  }

  @Override
  public String toString() {
    return String.format("%-8s %s: %s", level, subject, message);
  }
}
