package dev.lakestream.launcher;

import dev.lakestream.ingest.IngestApp;
import java.util.Arrays;

/** The command line: {@code lakestream <command> [options]}. Each command is one app or tool. */
public final class Lakestream {

  private Lakestream() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0 || "--help".equals(args[0]) || "help".equals(args[0])) {
      usage();
      System.exit(args.length == 0 ? 2 : 0);
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    switch (args[0]) {
      case "ingest" -> IngestApp.main(rest);
      default -> {
        System.err.println("unknown command: " + args[0]);
        usage();
        System.exit(2);
      }
    }
  }

  private static void usage() {
    System.err.println(
        """
        usage: lakestream <command> [--config FILE]

        commands:
          ingest   Debezium change topics -> the realtime branch of each table (Kafka Streams app)

        Settings come from the properties file and from LAKESTREAM_* environment variables
        (LAKESTREAM_BOOTSTRAP_SERVERS sets bootstrap.servers); see README.md.""");
  }
}
