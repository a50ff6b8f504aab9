package dev.lakestream.launcher.source;

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

  @Override
  public String toString() {
    return String.format("%-8s %s: %s", level, subject, message);
  }
}
