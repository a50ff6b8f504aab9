package dev.lakestream.launcher;

import dev.lakestream.ingest.IngestApp;
import dev.lakestream.sync.SyncApp;
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
      case "sync" -> SyncApp.main(rest);
      case "verify" -> System.exit(VerifyCommand.run(rest, System.out));
      case "check-source" -> System.exit(CheckSourceCommand.run(rest, System.out, System.getenv()));
      case "demo" -> System.exit(DemoCommand.run(rest, System.out));
      case "version", "schema", "snapshot", "changes" ->
          System.exit(VersionsCommand.run(args[0], rest, System.out, System.err));
      case "compact", "expire-snapshots", "remove-orphan-files" ->
          System.exit(MaintenanceCommand.run(args[0], rest, System.out));
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
          sync     realtime's equality deletes -> deletion vectors on main, one snapshot per cycle (Kafka Streams app)
          verify   check the invariants of pipeline tables [--table NAMESPACE.TABLE]...; exit 0 when all hold
          check-source  check a PostgreSQL database before capturing it: keys, replica identity, types, TOAST,
                   wal_level, slots, publications --jdbc URL [--user U] [--password P] [--connector FILE];
                   exit 1 when something blocks
          compact  compact a table's realtime branch by the compaction policy --table NAMESPACE.TABLE [--all];
                   sync mirrors it on main
          expire-snapshots     expire both branches' snapshots by their retention --table NAMESPACE.TABLE
          remove-orphan-files  remove files no snapshot references --table NAMESPACE.TABLE [--older-than-ms MS]
          version  the current version of a table's main branch --table NAMESPACE.TABLE
          schema   the schema at a version --table NAMESPACE.TABLE [--version V]
          snapshot the rows at a version --table NAMESPACE.TABLE [--version V] [--output PATH] [--format json|parquet]
          changes  the rows that changed between two versions, with __weight +1/-1
                   --table NAMESPACE.TABLE --from V1 [--to V2] [--output PATH] [--format json|parquet]
          demo     everything in one process: PostgreSQL, Kafka, Kafka Connect with Debezium, ingest, sync
                   [--duration SECONDS] [--rate CHANGES_PER_SECOND] [--warehouse DIR]

        Settings come from the properties file and from LAKESTREAM_* environment variables
        (LAKESTREAM_BOOTSTRAP_SERVERS sets bootstrap.servers); see README.md.""");
  }
}
