package dev.lakestream.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * A benchmark's result: a Markdown table printed to stdout and appended to {@code
 * docs/benchmarks.md} with the command that produced it and the machine it ran on.
 */
final class Report {

  private final String title;
  private final String command;
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  Report(String title, String command, String... header) {
    this.title = title;
    this.command = command;
    this.header = List.of(header);
  }

  void row(Object... cells) {
    List<String> row = new ArrayList<>();
    for (Object c : cells) {
      row.add(String.valueOf(c));
    }
    rows.add(row);
    System.out.println("| " + String.join(" | ", row) + " |");
  }

  void note(String note) {
    notes.add(note);
  }

  String markdown() {
    StringBuilder b = new StringBuilder();
    b.append("## ").append(title).append("\n\n");
    b.append("Run ")
        .append(ZonedDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE))
        .append(" on ")
        .append(machine())
        .append(".\n\n");
    b.append("```\n").append(command).append("\n```\n\n");
    b.append("| ").append(String.join(" | ", header)).append(" |\n");
    b.append("|").append(" --- |".repeat(header.size())).append("\n");
    for (List<String> row : rows) {
      b.append("| ").append(String.join(" | ", row)).append(" |\n");
    }
    for (String n : notes) {
      b.append("\n").append(n).append("\n");
    }
    return b.append("\n").toString();
  }

  /** Prints the table and appends it to docs/benchmarks.md of the project. */
  void publish() throws IOException {
    String md = markdown();
    System.out.println();
    System.out.println(md);
    Path file = projectRoot().resolve("docs").resolve("benchmarks.md");
    Files.createDirectories(file.getParent());
    if (!Files.exists(file)) {
      Files.writeString(
          file,
          "# Benchmarks\n\nEach section is one run of one benchmark, appended by the benchmark itself"
              + " (module `benchmarks`; commands below). Numbers from different machines are not comparable.\n\n",
          StandardCharsets.UTF_8);
    }
    Files.writeString(file, md, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    System.out.println("appended to " + file);
  }

  static String machine() {
    String cpu = "unknown CPU";
    long memKb = 0;
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          cpu = line.substring(line.indexOf(':') + 1).trim();
          break;
        }
      }
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          memKb = Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: leave what is known
    }
    return String.format(
        "%d cores (%s), %d GB RAM, Java %s, %s %s, max heap %d GB",
        Runtime.getRuntime().availableProcessors(),
        cpu,
        Math.round(memKb / 1024.0 / 1024.0),
        System.getProperty("java.version"),
        System.getProperty("os.name"),
        System.getProperty("os.version"),
        Math.round(Runtime.getRuntime().maxMemory() / 1024.0 / 1024 / 1024));
  }

  static Path projectRoot() {
    Path dir = Path.of("").toAbsolutePath();
    for (Path d = dir; d != null; d = d.getParent()) {
      if (Files.exists(d.resolve("benchmarks").resolve("pom.xml"))) {
        return d;
      }
    }
    return dir;
  }

  static String ms(double millis) {
    return String.format("%,.0f", millis);
  }

  static String seconds(double millis) {
    return String.format("%.2f", millis / 1000.0);
  }
}
