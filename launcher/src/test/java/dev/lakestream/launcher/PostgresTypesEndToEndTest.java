package dev.lakestream.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.lakestream.common.app.StreamsApp;
import dev.lakestream.common.config.PipelineConfig;
import dev.lakestream.common.debezium.ChangeEvent;
import dev.lakestream.common.debezium.ChangeOp;
import dev.lakestream.common.debezium.ConnectSchema;
import dev.lakestream.common.debezium.DebeziumDecoder;
import dev.lakestream.common.iceberg.Branches;
import dev.lakestream.common.kafka.DeadLetters;
import dev.lakestream.common.schema.RowConverter;
import dev.lakestream.common.schema.RowShape;
import dev.lakestream.embedded.EmbeddedConnect;
import dev.lakestream.embedded.EmbeddedKafka;
import dev.lakestream.embedded.EmbeddedPostgres;
import dev.lakestream.ingest.IngestApp;
import dev.lakestream.ingest.IngestConfig;
import dev.lakestream.ingest.toast.UnavailableValues;
import dev.lakestream.sync.SyncApp;
import dev.lakestream.sync.maintenance.RealtimeCompaction;
import dev.lakestream.sync.verify.Verifier;
import dev.lakestream.testkit.Eventually;
import dev.lakestream.testkit.KafkaChangeFeed;
import dev.lakestream.testkit.KafkaHeaders;
import dev.lakestream.testkit.SourceTableModel;
import dev.lakestream.testkit.TableComparison;
import dev.lakestream.testkit.TableRows;
import dev.lakestream.testkit.TemporaryWarehouse;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.Period;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.types.Types;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PGInterval;

/**
 * Real PostgreSQL shapes, end to end on real parts (PostgreSQL 15 → Debezium 3.6.1 in Kafka Connect
 * with the shipped connector JSON → ingest → sync): a table with a column of every type PostgreSQL
 * offers, edge values included, and a table whose large values PostgreSQL stores out of line
 * (TOAST). {@code main} is compared with {@code SELECT *} value for value; the expected values are
 * derived here from PostgreSQL's own output, independently of the pipeline's type mapping.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresTypesEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration SYNCED = Duration.ofSeconds(180);
  /** Debezium's values for 'infinity' and '-infinity' timestamps (µs since 1970), which the pipeline keeps. */
  private static final long INFINITY_MICROS = 9_223_372_036_825_200_000L;

  private static final long MINUS_INFINITY_MICROS = -9_223_372_036_832_400_000L;

  private EmbeddedKafka kafka;
  private EmbeddedPostgres postgres;
  private TemporaryWarehouse warehouse;
  private EmbeddedConnect connect;
  private StreamsApp ingest;
  private StreamsApp sync;
  private KafkaChangeFeed feed;
  private Catalog reader;

  @BeforeAll
  void startTheStack() throws Exception {
    kafka = EmbeddedKafka.start();
    postgres = EmbeddedPostgres.start();
    warehouse = new TemporaryWarehouse();
    postgres.execute(
        "CREATE SCHEMA inventory",
        "CREATE EXTENSION citext",
        "CREATE EXTENSION hstore",
        "CREATE TYPE inventory.mood AS ENUM ('sad', 'ok', 'happy')",
        "CREATE DOMAIN inventory.positive AS integer CHECK (VALUE > 0)",
        ZOO_TABLE,
        ZOO_TABLE.replace("inventory.zoo", "inventory." + ZOO_SNAPSHOT),
        TOAST_TABLE,
        TOAST_STORAGE,
        "CREATE TABLE inventory.unsupported (id int PRIMARY KEY, v numeric(60,40))",
        "CREATE TABLE inventory.positions (id int PRIMARY KEY, name text, n numeric(10,2))",
        READINGS_TABLE,
        TOASTED_COLLECTIONS_TABLE,
        TOASTED_COLLECTIONS_STORAGE);
    // Read by the connector's snapshot, through JDBC: the others' rows are all streamed.
    for (String row : ZOO_ROWS) {
      postgres.execute("INSERT INTO inventory." + ZOO_SNAPSHOT + " VALUES " + row);
    }
    postgres.execute(
        "INSERT INTO inventory." + ZOO_SNAPSHOT + " (id, n, nv) VALUES (10, 'NaN', 'Infinity')");
    postgres.execute("INSERT INTO inventory." + ZOO_SNAPSHOT + " " + CALENDAR_SWITCH);
    PipelineConfig shared = PostgresEndToEndTest.shared(kafka, warehouse);
    connect = EmbeddedConnect.start(kafka.bootstrapServers());
    // Rounds of 1 ms: each lookup of previous rows (unchanged TOAST values) goes on over several
    // flush attempts, its partition held back meanwhile, as a lookup on a large table does.
    ingest = IngestApp.create(
        PostgresEndToEndTest.app(shared, "ingest").with(IngestConfig.FLUSH_ROUND_BUDGET_MS, "1"));
    sync = SyncApp.create(PostgresEndToEndTest.app(shared, "sync"));
    feed = new KafkaChangeFeed(kafka.bootstrapServers(), new SourceTableModel());
    reader = warehouse.catalog();
    ingest.start();
    sync.start();
    PostgresEndToEndTest.registerConnector(connect, postgres);
  }

  @AfterAll
  void stopTheStack() throws Exception {
    for (AutoCloseable part :
        new AutoCloseable[] {feed, sync, ingest, connect, warehouse, postgres, kafka}) {
      if (part != null) {
        part.close();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // What ingest's decoder reads without a JSON parser, on what Debezium really publishes

  @Test
  void whatDebeziumPublishesDecodesToTheKeysCommitPositionsAndColumnsItsJsonHolds()
      throws Exception {
    postgres.execute(
        "INSERT INTO inventory.positions SELECT g, 'row ' || g, g * 1.5 FROM generate_series(1, 20) g",
        "UPDATE inventory.positions SET name = 'changed' WHERE id <= 5",
        "DELETE FROM inventory.positions WHERE id > 15");
    String topic = "dbserver1.inventory.positions";
    List<ConsumerRecord<byte[], byte[]>> changes = new ArrayList<>();
    Eventually.until(SYNCED, "Debezium to publish the 30 changes of " + topic, () -> {
      changes.clear();
      feed.readAvailable(topic).stream().filter(r -> r.value() != null).forEach(changes::add);
      return changes.size() >= 30;
    });

    DebeziumDecoder decoder = new DebeziumDecoder();
    Map<String, Integer> ops = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> record : changes) {
      String where = topic + "@" + record.offset();
      ChangeEvent event = decoder.decode(record.key(), record.value()).orElseThrow();
      JsonNode payload = JSON.readTree(record.value()).get("payload");
      String sequence = payload.get("source").get("sequence").asText();
      assertThat(sequence)
          .as("%s: the form the decoder reads without a JSON parser", where)
          .matches("\\[(\"\\d{1,18}\"|null),\"\\d{1,18}\"]");
      JsonNode first = JSON.readTree(sequence).get(0);
      assertThat(event.source().commitLsn())
          .as("%s: commit LSN of %s", where, sequence)
          .isEqualTo(first.isNull() ? null : Long.parseLong(first.asText()));
      assertThat(event.keyJson())
          .as("%s: key text", where)
          .isEqualTo(JSON.readTree(record.key()).get("payload").toString());
      // The decoder reads the payload field by field; it holds what the whole tree holds.
      JsonNode source = payload.get("source");
      assertThat(event.source().lsn())
          .as("%s: LSN", where)
          .isEqualTo(source.get("lsn").asLong());
      assertThat(event.source().tsMs())
          .as("%s: source commit time", where)
          .isEqualTo(source.get("ts_ms").asLong());
      assertThat(event.after())
          .as("%s: the after image", where)
          .isEqualTo(payload.get("after").isNull() ? null : payload.get("after"));
      if (!payload.get("after").isNull()) {
        payload.get("after").fieldNames().forEachRemaining(column -> assertThat(
                event.rowSchema().field(column))
            .as("%s: column %s in the row schema", where, column)
            .isNotNull()
            .extracting(ConnectSchema.Field::name)
            .isEqualTo(column));
      }
      if (!event.op().leavesRow() || event.op() == ChangeOp.UPDATE) {
        assertThat(event.source().commitLsn())
            .as("%s: a change after an earlier commit has its commit LSN", where)
            .isNotNull();
      }
      assertReadFromPayloadsAsWhole(record, where);
      ops.merge(event.op().name(), 1, Integer::sum);
    }
    assertThat(ops)
        .containsEntry("CREATE", 20)
        .containsEntry("UPDATE", 5)
        .containsEntry("DELETE", 5);
  }

  /**
   * The record decoded from its key's and value's payloads alone, with each schema parsed from its
   * text (as ingest reads a held change at flush), is the change its whole bytes decode to. Its row,
   * made from its columns without a tree (as ingest reads every row), converts to the record its tree
   * converts to, or fails as the tree's conversion does, and holds the placeholders its tree holds.
   * Returns the columns holding the placeholder.
   */
  private static Set<String> assertReadFromPayloadsAsWhole(
      ConsumerRecord<byte[], byte[]> record, String where) throws Exception {
    DebeziumDecoder decoder = new DebeziumDecoder();
    ChangeEvent whole =
        new DebeziumDecoder().decode(record.key(), record.value()).orElseThrow();
    assertThat(decoder.decode(
            framed(decoder, record.key(), "key"), framed(decoder, record.value(), "value")))
        .as("%s: decoded from its payloads", where)
        .isEqualTo(whole);
    if (whole.afterImage() == null) {
      return Set.of();
    }
    Types.StructType type = new RowShape.Resolver().of(whole).type();
    // The reference: the row as a tree of the record's whole JSON, read apart from the decoder.
    ObjectNode tree = (ObjectNode) JSON.readTree(record.value()).get("payload").get("after");
    ChangeEvent flat =
        new DebeziumDecoder().decode(record.key(), record.value()).orElseThrow();
    assertThat(flat.afterImage().flat())
        .as("%s: a row image as its columns", where)
        .isTrue();
    UnavailableValues unavailable = new UnavailableValues(UnavailableValues.DEBEZIUM_DEFAULT);
    Set<String> placeholders = unavailable.columns(flat.afterImage(), flat.rowSchema());
    assertThat(placeholders)
        .as("%s: placeholders looked for in its columns", where)
        .containsExactlyElementsOf(unavailable.columns(tree, whole.rowSchema()));
    ChangeEvent converted = placeholders.isEmpty()
        ? flat
        : new DebeziumDecoder().decode(record.key(), record.value()).orElseThrow();
    Object fromColumns = conversion(
        () -> RowConverter.toRecord(converted.afterImage(), converted.rowSchema(), type));
    assertThat(fromColumns)
        .as("%s: its row converted from its columns", where)
        .isEqualTo(conversion(() -> RowConverter.toRecord(tree, whole.rowSchema(), type)));
    if (fromColumns instanceof GenericRecord && placeholders.isEmpty()) {
      assertThat(converted.afterImage().flat())
          .as("%s: converted without a tree", where)
          .isTrue();
    }
    return placeholders;
  }

  /** The record a conversion makes, or its error's class and message. */
  private static Object conversion(Supplier<GenericRecord> conversion) {
    try {
      return conversion.get();
    } catch (RuntimeException e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  /** A JsonConverter record ({"schema":S,"payload":P}) with S parsed from its text. */
  private static DebeziumDecoder.Framed framed(DebeziumDecoder decoder, byte[] record, String what)
      throws Exception {
    try (JsonParser parser = JSON.getFactory().createParser(record)) {
      assertThat(parser.nextToken()).isEqualTo(JsonToken.START_OBJECT);
      assertThat(parser.nextFieldName()).isEqualTo("schema");
      assertThat(parser.nextToken()).isEqualTo(JsonToken.START_OBJECT);
      int from = (int) parser.currentTokenLocation().getByteOffset();
      parser.skipChildren();
      int to = (int) parser.currentTokenLocation().getByteOffset() + 1;
      byte[] payloadField = ",\"payload\":".getBytes(StandardCharsets.UTF_8);
      assertThat(Arrays.copyOfRange(record, to, to + payloadField.length)).isEqualTo(payloadField);
      return new DebeziumDecoder.Framed(
          decoder.schemaOfText(Arrays.copyOfRange(record, from, to), what),
          record,
          to + payloadField.length);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Every type

  private static final String ZOO_TABLE = "CREATE TABLE inventory.zoo (id int PRIMARY KEY,"
      + " i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, n numeric(38,10), nv numeric,"
      + " m money, c char(5), vc varchar(20), t text, ci citext, b bytea, bo boolean, d date, tm time,"
      + " tm3 time(3), ttz timetz, ts timestamp, ts3 timestamp(3), tstz timestamptz, iv interval, u uuid,"
      + " j json, jb jsonb, x xml, ine inet, cid cidr, mac macaddr, mac8 macaddr8, ia integer[], ta text[],"
      + " na numeric[], e inventory.mood, dm inventory.positive, bt bit(1), bt4 bit(4), vb varbit,"
      + " r int4range, tsr tsrange, nr numrange, pt point, hs hstore, tv tsvector, o oid, ser serial,"
      + " big bigserial, bx box, ci3 circle, ln line, ls lseg, pa path, po polygon)";

  /** The zoo's table whose rows the connector reads in its snapshot. */
  private static final String ZOO_SNAPSHOT = "zoo_snapshot";

  /** Columns Debezium's connector leaves out of its events (it has no mapping for them). */
  private static final Set<String> NOT_CAPTURED = Set.of("bx", "ci3", "ln", "ls", "pa", "po");

  private static final String[] ZOO_ROWS = {
    // Minimums and specials.
    "(1, -32768, -2147483648, -9223372036854775808, 'NaN', '-Infinity', -9999999999999999999999999999.9999999999,"
        + " -12345678901234567890.123456789012345678, '-92233720368547758.08', 'ab', 'v', 'emoji 😀 עברית مرحبا',"
        + " 'CaSe', '\\x00ff00', false, '4713-01-01 BC', '00:00:00', '00:00:00.001', '00:00:00+14', '4713-01-01 00:00:00 BC',"
        + " '-infinity', '-infinity', '-178000000 years', '00000000-0000-0000-0000-000000000000', '{\"a\": [1, 2.5, null]}',"
        + " '{\"b\": {\"c\": \"d\"}, \"a\": 1}', '<a>x</a>', '::1', '10.0.0.0/8', '08:00:2b:01:02:03',"
        + " '08:00:2b:01:02:03:04:05', '{1,NULL,-3}', '{\"a\",NULL,\"\"}', '{1.5,-2.25}', 'sad', 1, B'0', B'0000', B'0011',"
        + " '[1,10)', '[2020-01-01,infinity)', '(,5.5]', '(-1.5,2.5)', 'a=>1, b=>NULL', 'a fat cat', 0, DEFAULT, DEFAULT,"
        + " '((0,0),(1,1))', '<(1,1),2>', '{1,2,3}', '[(0,0),(1,1)]', '((0,0),(1,1),(2,0))', '((0,0),(1,1),(2,0))')",
    // Maximums and the other specials.
    "(2, 32767, 2147483647, 9223372036854775807, 'Infinity', 'NaN', 9999999999999999999999999999.9999999999,"
        + " 12345678901234567890.123456789012345678, '92233720368547758.07', 'abcde', 'twenty characters!!!', 'x',"
        + " 'x', '\\xffffffff', true, '5874897-12-31', '23:59:59.999999', '23:59:59.999', '23:59:59.999999-12',"
        + " '294246-12-31 23:59:59.999999', 'infinity', 'infinity', '178000000 years 11 mons 30 days 23:59:59.999999',"
        + " 'ffffffff-ffff-ffff-ffff-ffffffffffff', '[]', '[]', '<b/>', '255.255.255.255', '::/0', 'ff:ff:ff:ff:ff:ff',"
        + " 'ff:ff:ff:ff:ff:ff:ff:ff', '{2147483647}', '{\"}\"}', '{0}', 'happy', 2147483647, B'1', B'1111', B'1',"
        + " 'empty', '(,)', '[-1e10,1e10]', '(1e300,-1e-300)', '', '', 4294967295, DEFAULT, DEFAULT,"
        + " NULL, NULL, NULL, NULL, NULL, NULL)",
    // Every column NULL.
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
        + " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
        + " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DEFAULT, DEFAULT, NULL, NULL, NULL, NULL, NULL, NULL)",
    // Empty values and negative zero.
    "(4, 0, 0, 0, '-0', '-0', 0, 0, 0, '', '', '', '', '\\x', false, '1970-01-01', '12:00:00', '12:00:00', '12:00:00+00',"
        + " '1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', '0', gen_random_uuid(), '{}', '{}',"
        + " '', '0.0.0.0', '0.0.0.0/32', '00:00:00:00:00:00', '00:00:00:00:00:00:00:00', '{}', '{}', '{}', 'ok', 3, B'0',"
        + " B'0000', B'', 'empty', 'empty', 'empty', '(0,0)', '', '', 0, DEFAULT, DEFAULT, NULL, NULL, NULL, NULL, NULL, NULL)",
    // Ordinary values.
    "(5, 7, 8, 9, 1.5, 2.25, 3.5, 4.125, 5.75, 'abc', 'def', 'ghi', 'JKL', '\\x0102', true, '2024-02-29', '10:15:30.123456',"
        + " '10:15:30.123', '10:15:30.123456+05:30', '2024-02-29 10:15:30.123456', '2024-02-29 10:15:30.123',"
        + " '2024-02-29 10:15:30.123456+02', '1 year 2 mons 3 days 04:05:06.789', gen_random_uuid(), '{\"k\": \"v\"}',"
        + " '{\"k\": [true, false]}', '<doc><p>text</p></doc>', '192.168.0.1/24', '192.168.0.0/24', '01:23:45:67:89:ab',"
        + " '01:23:45:67:89:ab:cd:ef', '{1,2,3}', '{\"x\",\"y z\"}', '{0.001,1000}', 'ok', 42, B'1', B'1010', B'10110111011',"
        + " '[5,7)', '[2024-01-01 00:00,2024-02-01 00:00)', '[1.5,2.5)', '(3,4)', 'k=>v', 'the quick brown fox', 12345,"
        + " DEFAULT, DEFAULT, '((0,0),(2,2))', '<(0,0),1>', '{1,-1,0}', '[(0,0),(2,2)]', '[(0,0),(1,1)]', '((0,0),(0,1),(1,0))')",
  };

  /** Days around the switch from the Julian calendar to the Gregorian, in 1582, and before it. */
  private static final String CALENDAR_SWITCH = "(id, d, ts, ts3, tstz) VALUES"
      + " (11, '1582-10-04', '1582-10-04 12:00:00', '1582-10-04 12:00:00', '1582-10-04 12:00:00+00'),"
      + " (12, '1582-10-05', '1582-10-05 12:00:00', '1582-10-05 12:00:00', '1582-10-05 12:00:00+00'),"
      + " (13, '1582-10-14', '1582-10-14 12:00:00', '1582-10-14 12:00:00', '1582-10-14 12:00:00+00'),"
      + " (14, '1582-10-15', '1582-10-15 12:00:00', '1582-10-15 12:00:00', '1582-10-15 12:00:00+00'),"
      + " (15, '1000-03-01', '1000-03-01 12:00:00', '1000-03-01 12:00:00', '1000-03-01 12:00:00+00')";

  /** Values no Iceberg type can hold: each row is refused whole, with the column and value named. */
  private static final Map<Integer, String> REFUSED = Map.of(
      6, "INSERT INTO inventory.zoo (id, tm) VALUES (6, '24:00:00')",
      7, "INSERT INTO inventory.zoo (id, ts) VALUES (7, '294276-12-31 23:59:59.999999')",
      8, "INSERT INTO inventory.zoo (id, nv) VALUES (8, 1e-30)");

  /** A date as Debezium's snapshot sends it: read through JDBC (README's type table). */
  private static LocalDate asSnapshotReadsIt(LocalDate d) {
    if (d.getYear() <= 0) {
      // JDBC's date drops the era: a BC date arrives as the same date AD.
      return LocalDate.of(1 - d.getYear(), d.getMonth(), d.getDayOfMonth());
    }
    if (!d.isBefore(LocalDate.of(1582, 10, 5)) && !d.isAfter(LocalDate.of(1582, 10, 14))) {
      // JDBC's dates follow the Julian calendar before 1582-10-15 and have no 10-05..10-14 (the
      // days the switch skipped): the snapshot sends these ten days ten days later.
      return d.plusDays(10);
    }
    return d;
  }

  /**
   * The zoo's rows as the connector's snapshot reads them, through JDBC rather than from the
   * replication stream: every value as the stream gives it, but for a BC date, which Debezium's
   * snapshot sends as the same date AD, and the dates 1582-10-05 to 1582-10-14, which it sends ten
   * days later (timestamps on those days, and AD dates before them, arrive right).
   */
  @Test
  void everyPostgresTypeReadBySnapshotMirrorsValueForValue() throws Exception {
    TableIdentifier zoo = TableIdentifier.of("inventory", ZOO_SNAPSHOT);
    Eventually.noDifference(SYNCED, () -> zooDiffers(zoo));
  }

  @Test
  void everyPostgresTypeMirrorsValueForValueAndWhatIcebergCannotHoldIsDeadLettered()
      throws Exception {
    try (Connection c = postgres.connect();
        Statement s = c.createStatement()) {
      for (String row : ZOO_ROWS) {
        s.execute("INSERT INTO inventory.zoo VALUES " + row);
      }
      s.execute("INSERT INTO inventory.zoo (id, n, nv) VALUES (10, 'NaN', 'Infinity')");
      s.execute("INSERT INTO inventory.zoo " + CALENDAR_SWITCH);
      for (String insert : REFUSED.values()) {
        s.execute(insert);
      }
      s.execute("INSERT INTO inventory.unsupported VALUES (1, 1.5)");
    }
    TableIdentifier zoo = TableIdentifier.of("inventory", "zoo");
    Eventually.noDifference(SYNCED, () -> zooDiffers(zoo));

    // Updates, deletes, a row inserted and updated in one transaction, a row updated to NULLs.
    postgres.execute(
        "UPDATE inventory.zoo SET f8 = '-0', t = 'changed ✓', ia = '{7}', d = '-infinity', tstz = now() WHERE id = 1",
        "DELETE FROM inventory.zoo WHERE id = 2",
        "BEGIN; INSERT INTO inventory.zoo (id, t, nv) VALUES (9, 'new', 0.5); UPDATE inventory.zoo SET nv = 7 WHERE id = 9;"
            + " COMMIT",
        "UPDATE inventory.zoo SET (i2, t, jb, na, pt) = (NULL, NULL, NULL, NULL, NULL) WHERE id = 5");
    Eventually.noDifference(SYNCED, () -> zooDiffers(zoo));
    // Every type as ingest reads a held change at flush: from its payloads alone.
    int read = 0;
    for (ConsumerRecord<byte[], byte[]> record : feed.readAvailable("dbserver1.inventory.zoo")) {
      if (record.value() != null) {
        assertReadFromPayloadsAsWhole(record, "dbserver1.inventory.zoo@" + record.offset());
        read++;
      }
    }
    assertThat(read).as("zoo changes read from their payloads").isGreaterThanOrEqualTo(10);

    Table table = reader.loadTable(zoo);
    assertThat(table.schema().columns())
        .extracting(f -> f.name())
        .doesNotContainAnyElementsOf(NOT_CAPTURED);
    Verifier.Report report = Verifier.verify(table, zoo.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();

    Map<String, String> reasons = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> letter : feed.read("lakestream.dlq", REFUSED.size() + 1)) {
      String key = letter.key() == null
          ? "null"
          : JSON.readTree(letter.key()).path("payload").toString();
      reasons.put(
          KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC) + " " + key,
          KafkaHeaders.text(letter.headers(), DeadLetters.REASON));
    }
    assertThat(reasons.get("dbserver1.inventory.zoo {\"id\":6}"))
        .contains("column \"tm\"")
        .contains("24:00:00");
    assertThat(reasons.get("dbserver1.inventory.zoo {\"id\":7}"))
        .contains("column \"ts\"")
        .contains("overflowed");
    assertThat(reasons.get("dbserver1.inventory.zoo {\"id\":8}"))
        .contains("column \"nv\"")
        .contains("0.000000000000000000000000000001");
    assertThat(reasons.get("dbserver1.inventory.unsupported {\"id\":1}"))
        .contains("column \"v\"")
        .contains("decimal(60,40)");
  }

  /** Null when main of inventory.zoo equals SELECT * (less the refused rows), else what differs. */
  private String zooDiffers(TableIdentifier id) throws Exception {
    if (!reader.tableExists(id)) {
      return "no table " + id + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT *, m::numeric AS m_numeric, encode(b, 'hex') AS b_hex,"
                + " CASE WHEN isfinite(d) THEN d - DATE '1970-01-01' END AS d_days, d::text AS d_text,"
                + " CASE WHEN isfinite(ts) THEN (extract(epoch FROM ts) * 1000000)::bigint END AS ts_micros, ts::text AS ts_text,"
                + " CASE WHEN isfinite(ts3) THEN (extract(epoch FROM ts3) * 1000000)::bigint END AS ts3_micros, ts3::text AS ts3_text,"
                + " CASE WHEN isfinite(tstz) THEN (extract(epoch FROM tstz) * 1000000)::bigint END AS tstz_micros,"
                + " tstz::text AS tstz_text, tm::text AS tm_text, tm3::text AS tm3_text, ttz::text AS ttz_text,"
                + " f4::text AS f4_text, f8::text AS f8_text, n::text AS n_text, nv::text AS nv_text, na::text[] AS na_text,"
                + " bt4::text AS bt4_text, vb::text AS vb_text, pt[0] AS pt_x, pt[1] AS pt_y, hstore_to_json(hs)::text AS hs_json,"
                + " r::text AS r_text, tsr::text AS tsr_text, nr::text AS nr_text, tv::text AS tv_text, x::text AS x_text,"
                + " cid::text AS cid_text, mac::text AS mac_text, mac8::text AS mac8_text,"
                + " e::text AS e_text, o::bigint AS o_long"
                + " FROM inventory." + id.name() + " WHERE id NOT IN (6, 7, 8)")) {
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", rs.getInt("id"));
        row.put("i2", intOrNull(rs, "i2"));
        row.put("i4", intOrNull(rs, "i4"));
        row.put("i8", rs.getObject("i8") == null ? null : rs.getLong("i8"));
        row.put("f4", text(rs, "f4_text", Float::parseFloat));
        row.put("f8", text(rs, "f8_text", Double::parseDouble));
        row.put(
            "n", text(rs, "n_text", t -> notANumber(t) ? null : new BigDecimal(t).setScale(10)));
        row.put(
            "nv", text(rs, "nv_text", t -> notANumber(t) ? null : new BigDecimal(t).setScale(18)));
        row.put(
            "m",
            rs.getBigDecimal("m_numeric") == null
                ? null
                : rs.getBigDecimal("m_numeric").setScale(2));
        row.put("c", rs.getString("c"));
        row.put("vc", rs.getString("vc"));
        row.put("t", rs.getString("t"));
        row.put("ci", rs.getString("ci"));
        row.put("b", text(rs, "b_hex", h -> ByteBuffer.wrap(HexFormat.of().parseHex(h))));
        row.put("bo", rs.getObject("bo") == null ? null : rs.getBoolean("bo"));
        row.put(
            "d",
            rs.getObject("d_days") != null
                ? LocalDate.ofEpochDay(rs.getInt("d_days"))
                : text(
                    rs,
                    "d_text",
                    t -> LocalDate.ofEpochDay(Math.floorDiv(infinity(t), 86_400_000_000L))));
        row.put("tm", text(rs, "tm_text", LocalTime::parse));
        row.put("tm3", text(rs, "tm3_text", LocalTime::parse));
        row.put("ttz", text(rs, "ttz_text", PostgresTypesEndToEndTest::utcTime));
        row.put(
            "ts",
            micros(rs, "ts_micros", "ts_text")
                .map(m -> utc(m).toLocalDateTime())
                .orElse(null));
        row.put(
            "ts3",
            micros(rs, "ts3_micros", "ts3_text")
                .map(m -> utc(m).toLocalDateTime())
                .orElse(null));
        row.put(
            "tstz",
            micros(rs, "tstz_micros", "tstz_text")
                .map(PostgresTypesEndToEndTest::utc)
                .orElse(null));
        row.put(
            "iv", rs.getObject("iv") == null ? null : interval((PGInterval) rs.getObject("iv")));
        row.put("u", rs.getObject("u", UUID.class));
        row.put("j", text(rs, "j", PostgresTypesEndToEndTest::json));
        row.put("jb", text(rs, "jb", PostgresTypesEndToEndTest::json));
        row.put("x", rs.getString("x_text"));
        row.put("ine", rs.getString("ine"));
        row.put("cid", rs.getString("cid_text"));
        row.put("mac", rs.getString("mac_text"));
        row.put("mac8", rs.getString("mac8_text"));
        row.put("ia", list(rs.getArray("ia"), v -> v));
        row.put("ta", list(rs.getArray("ta"), v -> v));
        row.put("na", list(rs.getArray("na_text"), v -> new BigDecimal((String) v).setScale(18)));
        row.put("e", rs.getString("e_text"));
        row.put("dm", intOrNull(rs, "dm"));
        row.put("bt", rs.getObject("bt") == null ? null : rs.getBoolean("bt"));
        row.put("bt4", rs.getString("bt4_text"));
        // Debezium encodes a varbit as the bytes of its value: leading zeros are not kept.
        row.put("vb", text(rs, "vb_text", t -> t.isEmpty() ? "" : t.replaceFirst("^0+(?=.)", "")));
        row.put("r", rs.getString("r_text"));
        row.put("tsr", rs.getString("tsr_text"));
        row.put("nr", rs.getString("nr_text"));
        row.put(
            "pt",
            rs.getObject("pt_x") == null
                ? null
                : point(rs.getDouble("pt_x"), rs.getDouble("pt_y")));
        row.put("hs", text(rs, "hs_json", PostgresTypesEndToEndTest::json));
        row.put("tv", rs.getString("tv_text"));
        row.put("o", rs.getObject("o_long") == null ? null : rs.getLong("o_long"));
        row.put("ser", rs.getInt("ser"));
        row.put("big", rs.getLong("big"));
        if (id.name().equals(ZOO_SNAPSHOT) && row.get("d") instanceof LocalDate d) {
          row.put("d", asSnapshotReadsIt(d));
        }
        expected.put(List.of(rs.getInt("id")), row);
      }
    }
    Map<List<Object>, Map<String, Object>> main = new HashMap<>();
    for (Map<String, Object> row : TableRows.read(reader.loadTable(id), Branches.MAIN)) {
      Map<String, Object> normal = new LinkedHashMap<>(row);
      normal.computeIfPresent("j", (k, v) -> json((String) v));
      normal.computeIfPresent("jb", (k, v) -> json((String) v));
      normal.computeIfPresent("hs", (k, v) -> json((String) v));
      normal.computeIfPresent("ttz", (k, v) -> utcTime((String) v));
      normal.computeIfPresent("iv", (k, v) -> isoInterval((String) v));
      main.put(List.of(row.get("id")), normal);
    }
    return TableComparison.differences(expected, main);
  }

  /** Debezium sends a numeric NaN or infinity as null: no decimal holds it. */
  private static boolean notANumber(String numeric) {
    return numeric.equals("NaN") || numeric.endsWith("Infinity");
  }

  private static Integer intOrNull(ResultSet rs, String column) throws Exception {
    return rs.getObject(column) == null ? null : rs.getInt(column);
  }

  private static <T> T text(ResultSet rs, String column, Function<String, T> parse)
      throws Exception {
    String text = rs.getString(column);
    return text == null ? null : parse.apply(text);
  }

  private static List<Object> list(Array array, Function<Object, Object> element) throws Exception {
    if (array == null) {
      return null;
    }
    List<Object> out = new ArrayList<>();
    for (Object v : (Object[]) array.getArray()) {
      out.add(v == null ? null : element.apply(v));
    }
    return out;
  }

  /** Microseconds since 1970, from the finite value or Debezium's sentinel for an infinite one. */
  private static Optional<Long> micros(ResultSet rs, String micros, String text) throws Exception {
    if (rs.getObject(micros) != null) {
      return Optional.of(rs.getLong(micros));
    }
    String t = rs.getString(text);
    return t == null ? Optional.empty() : Optional.of(infinity(t));
  }

  private static long infinity(String text) {
    return switch (text) {
      case "infinity" -> INFINITY_MICROS;
      case "-infinity" -> MINUS_INFINITY_MICROS;
      default -> throw new IllegalArgumentException("not an infinity: " + text);
    };
  }

  private static OffsetDateTime utc(long micros) {
    return Instant.ofEpochSecond(
            Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L)
        .atOffset(ZoneOffset.UTC);
  }

  /** A time with offset, as the instant of day in UTC ({@code timetz} is kept as text). */
  private static String utcTime(String text) {
    String iso = text.replaceFirst("([+-]\\d\\d)$", "$1:00");
    return OffsetTime.parse(iso)
        .withOffsetSameInstant(ZoneOffset.UTC)
        .format(DateTimeFormatter.ISO_OFFSET_TIME);
  }

  /** An interval as its parts: PostgreSQL's fields on one side, the ISO-8601 text on the main side. */
  private static String interval(PGInterval v) {
    return parts(
        v.getYears(),
        v.getMonths(),
        v.getDays(),
        v.getHours(),
        v.getMinutes(),
        BigDecimal.valueOf(v.getWholeSeconds()).add(BigDecimal.valueOf(v.getMicroSeconds(), 6)));
  }

  private static final Pattern ISO_INTERVAL =
      Pattern.compile("P(-?\\d+)Y(-?\\d+)M(-?\\d+)DT(-?\\d+)H(-?\\d+)M(-?[\\d.]+)S");

  private static String isoInterval(String text) {
    Matcher m = ISO_INTERVAL.matcher(text);
    if (!m.matches()) {
      return "unparsed " + text;
    }
    return parts(
        Integer.parseInt(m.group(1)),
        Integer.parseInt(m.group(2)),
        Integer.parseInt(m.group(3)),
        Integer.parseInt(m.group(4)),
        Integer.parseInt(m.group(5)),
        new BigDecimal(m.group(6)));
  }

  private static String parts(
      int years, int months, int days, int hours, int minutes, BigDecimal seconds) {
    return Period.of(years, months, days) + " " + hours + "h " + minutes + "m "
        + seconds.stripTrailingZeros().toPlainString() + "s";
  }

  private static String json(String text) {
    try {
      return JSON.readTree(text).toString();
    } catch (Exception e) {
      return "unparsed " + text;
    }
  }

  /** Debezium's point: x, y, its WKB (little-endian, type 1) and no SRID. */
  private static Map<String, Object> point(double x, double y) {
    ByteBuffer wkb = ByteBuffer.allocate(21).order(ByteOrder.LITTLE_ENDIAN);
    wkb.put((byte) 1).putInt(1).putDouble(x).putDouble(y).flip();
    Map<String, Object> point = new LinkedHashMap<>();
    point.put("x", x);
    point.put("y", y);
    point.put("wkb", wkb);
    point.put("srid", null);
    return point;
  }

  // ---------------------------------------------------------------------------------------------
  // A primary key with date, time and timestamp columns

  private static final String READINGS_TABLE = "CREATE TABLE inventory.readings (site int,"
      + " taken timestamptz, day date, slot time, local_at timestamp, v text,"
      + " PRIMARY KEY (site, taken, day, slot, local_at))";

  private static final List<String> READINGS_KEY =
      List.of("site", "taken", "day", "slot", "local_at");

  /**
   * A key with a column of each of PostgreSQL's date and time types (a partitioned table's key
   * holds its partition column, often a timestamp): updates, deletes and key updates reach main as
   * deletion vectors, so main holds each key's latest row once, as realtime does.
   */
  @Test
  void aKeyWithDateTimeAndTimestampColumnsIsUpdatedAndDeletedOnMain() throws Exception {
    TableIdentifier readings = TableIdentifier.of("inventory", "readings");
    try (Connection c = postgres.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      for (int site = 1; site <= 300; site++) {
        s.execute("INSERT INTO inventory.readings VALUES (" + site
            + ", timestamptz '2026-03-29 00:59:59.123456+00' + " + site
            + " * interval '61.000007 s',"
            + " date '2024-02-28' + " + site + ","
            + " time '00:00:00.000001' + " + site + " * interval '37.5 s',"
            + " timestamp '1999-12-31 23:59:59.999999' + " + site + " * interval '1 hour',"
            + " 'v" + site + "')");
        if (site % 50 == 0) {
          c.commit();
        }
      }
      c.commit();
    }
    Eventually.noDifference(SYNCED, () -> readingsDiffer(readings));

    postgres.execute(
        "UPDATE inventory.readings SET v = v || '+' WHERE site % 3 = 0",
        "DELETE FROM inventory.readings WHERE site % 5 = 0",
        "UPDATE inventory.readings SET taken = taken + interval '1 day' WHERE site % 7 = 0",
        "UPDATE inventory.readings SET slot = slot + interval '1 microsecond' WHERE site % 11 = 0",
        "UPDATE inventory.readings SET v = v || '!' WHERE site % 2 = 0");
    Eventually.noDifference(SYNCED, () -> readingsDiffer(readings));

    Table table = reader.loadTable(readings);
    assertThat(TableRows.read(table, Branches.MAIN)).as("rows on main").hasSize(240);
    Verifier.Report report = Verifier.verify(table, readings.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
  }

  /** Null when realtime and main of inventory.readings equal SELECT *; else what differs. */
  private String readingsDiffer(TableIdentifier id) throws Exception {
    if (!reader.tableExists(id)) {
      return "no table " + id + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT * FROM inventory.readings")) {
      while (rs.next()) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("site", rs.getInt("site"));
        row.put(
            "taken",
            rs.getObject("taken", OffsetDateTime.class).withOffsetSameInstant(ZoneOffset.UTC));
        row.put("day", rs.getObject("day", LocalDate.class));
        row.put("slot", rs.getObject("slot", LocalTime.class));
        row.put("local_at", rs.getObject("local_at", LocalDateTime.class));
        row.put("v", rs.getString("v"));
        List<Object> key = new ArrayList<>();
        READINGS_KEY.forEach(k -> key.add(row.get(k)));
        expected.put(key, row);
      }
    }
    return branchesDiffer(id, expected, READINGS_KEY);
  }

  /** Null when realtime and main of {@code id} hold {@code expected} by {@code key}; else what differs. */
  private String branchesDiffer(
      TableIdentifier id, Map<List<Object>, Map<String, Object>> expected, List<String> key) {
    Table table = reader.loadTable(id);
    for (String branch : List.of(Branches.REALTIME, Branches.MAIN)) {
      String diff = TableComparison.differences(
          expected, TableRows.byKey(TableRows.read(table, branch), key));
      if (diff != null) {
        return branch + ": " + diff;
      }
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------
  // Unchanged TOAST values

  private static final String TOAST_TABLE =
      "CREATE TABLE inventory.documents (id int PRIMARY KEY, small int, body text, doc jsonb, bin bytea)";
  /** Out of line and uncompressed: every value above about 2 kB is TOASTed. */
  private static final String TOAST_STORAGE =
      "ALTER TABLE inventory.documents ALTER body SET STORAGE EXTERNAL,"
          + " ALTER doc SET STORAGE EXTERNAL, ALTER bin SET STORAGE EXTERNAL";

  @Test
  void unchangedToastValuesKeepTheRowsValuesThroughBatchesCompactionAndKeyUpdates()
      throws Exception {
    TableIdentifier documents = TableIdentifier.of("inventory", "documents");
    Random random = new Random(21);
    try (Connection c = postgres.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      for (int id = 1; id <= 200; id++) {
        s.execute(insertDocument(id, random));
        if (id % 2 == 0) {
          // Updated right after its insert: filled from the same batch.
          s.execute("UPDATE inventory.documents SET small = small + 1 WHERE id = " + id);
        }
        if (id % 20 == 0) {
          c.commit();
        }
      }
      c.commit();
    }
    Eventually.noDifference(SYNCED, () -> documentsDiffer(documents, Set.of()));

    // Later batches: every row's TOASTed values are missing from the update.
    var lookups = ingest.meters().timer("lakestream.ingest.previous.row.lookup.duration");
    long lookupsBefore = lookups.count();
    double secondsBefore = lookups.totalTime(TimeUnit.SECONDS);
    double bytesBefore =
        ingest.meters().counter("lakestream.ingest.previous.row.bytes.read").count();
    postgres.execute("UPDATE inventory.documents SET small = small + 10");
    Eventually.noDifference(SYNCED, () -> documentsDiffer(documents, Set.of()));
    assertThat(ingest
            .meters()
            .counter("lakestream.ingest.previous.row.lookup.resumed")
            .count())
        .as("flush attempts whose lookup went on at the next")
        .isPositive();
    System.out.printf(
        "TOAST: 200 updates lacking their TOASTed values filled from realtime in %d lookups,"
            + " %.0f ms and %.1f MB read in all%n",
        lookups.count() - lookupsBefore,
        (lookups.totalTime(TimeUnit.SECONDS) - secondsBefore) * 1000,
        (ingest.meters().counter("lakestream.ingest.previous.row.bytes.read").count() - bytesBefore)
            / 1e6);

    // The updates as ingest reads them: their placeholders found, and their rows converted, from
    // their bytes as from their trees.
    int withPlaceholders = 0;
    for (ConsumerRecord<byte[], byte[]> record :
        feed.readAvailable("dbserver1.inventory.documents")) {
      if (record.value() != null
          && !assertReadFromPayloadsAsWhole(
                  record, "dbserver1.inventory.documents@" + record.offset())
              .isEmpty()) {
        withPlaceholders++;
      }
    }
    assertThat(withPlaceholders)
        .as("updates lacking their TOASTed values")
        .isGreaterThanOrEqualTo(200);

    RealtimeCompaction.prepare(reader.loadTable(documents)).commit();
    postgres.execute(
        "UPDATE inventory.documents SET small = small + 100 WHERE id % 3 = 0",
        "UPDATE inventory.documents SET body = 'short now' WHERE id % 7 = 0",
        "UPDATE inventory.documents SET small = -small WHERE id % 5 = 0");
    Eventually.noDifference(SYNCED, () -> documentsDiffer(documents, Set.of()));

    // Primary-key updates: the new row's TOASTed values are only in the old row.
    postgres.execute("UPDATE inventory.documents SET id = id + 1000 WHERE id <= 30");
    Set<Integer> refused = new TreeSet<>();
    Eventually.noDifference(SYNCED, () -> {
      refused.clear();
      refused.addAll(keyUpdatesDeadLettered());
      return documentsDiffer(documents, refused);
    });
    System.out.printf(
        "TOAST: of 30 primary-key updates, %d refused (their old row was on another partition)%n",
        refused.size());

    // The remedy the refusal names: REPLICA IDENTITY FULL, and the rows sent again.
    postgres.execute(
        "ALTER TABLE inventory.documents REPLICA IDENTITY FULL",
        "UPDATE inventory.documents SET small = small WHERE id > 1000",
        "UPDATE inventory.documents SET id = id + 1000 WHERE id BETWEEN 31 AND 60");
    Eventually.noDifference(SYNCED, () -> documentsDiffer(documents, Set.of()));
    assertThat(keyUpdatesDeadLettered()).isEqualTo(refused);
    Verifier.Report report = Verifier.verify(reader.loadTable(documents), documents.toString());
    assertThat(report.passed()).as(report.toString()).isTrue();
  }

  private static final String TOASTED_COLLECTIONS_TABLE =
      "CREATE TABLE inventory.collections (id int PRIMARY KEY, small int, nums int[], bigs bigint[],"
          + " days date[], ids uuid[], words text[], tags hstore)";
  /** Out of line and uncompressed: every value above about 2 kB is TOASTed. */
  private static final String TOASTED_COLLECTIONS_STORAGE =
      "ALTER TABLE inventory.collections ALTER nums SET STORAGE EXTERNAL,"
          + " ALTER bigs SET STORAGE EXTERNAL, ALTER days SET STORAGE EXTERNAL,"
          + " ALTER ids SET STORAGE EXTERNAL, ALTER words SET STORAGE EXTERNAL,"
          + " ALTER tags SET STORAGE EXTERNAL";

  /**
   * Debezium's placeholder for an unchanged TOASTed value takes the form of its column: for an
   * {@code int[]} or {@code bigint[]} (and a {@code date[]}) the placeholder's bytes as numbers,
   * for a {@code uuid[]} a UUID made from them, for an {@code hstore} a map of the placeholder to
   * itself. Each is found and filled with the row's value: an update of another column leaves
   * them as they were. (A {@code numeric[]} and the other arrays get no placeholder: Debezium sends
   * null, and the source check warns.)
   */
  @Test
  void unchangedToastedArraysAndHstoresKeepTheirValues() throws Exception {
    TableIdentifier collections = TableIdentifier.of("inventory", "collections");
    try (Connection c = postgres.connect();
        Statement s = c.createStatement()) {
      for (int id = 1; id <= 40; id++) {
        s.execute("INSERT INTO inventory.collections VALUES (" + id + ", " + id + ","
            + " ARRAY(SELECT g + " + id + " FROM generate_series(1, 1000) g),"
            + " ARRAY(SELECT g * 10000000000 + " + id + " FROM generate_series(1, 500) g),"
            + " ARRAY(SELECT date '2020-01-01' + g + " + id + " FROM generate_series(1, 700) g),"
            + " ARRAY(SELECT md5(g || '-" + id + "')::uuid FROM generate_series(1, 200) g),"
            + " ARRAY(SELECT 'word' || g || '-" + id + "' FROM generate_series(1, 300) g),"
            + " hstore(ARRAY(SELECT 'k' || g FROM generate_series(1, 200) g),"
            + " ARRAY(SELECT 'v' || g || '-" + id + "' FROM generate_series(1, 200) g)))");
      }
    }
    Eventually.until(
        SYNCED,
        "40 rows on main",
        () -> reader.tableExists(collections)
            && TableRows.read(reader.loadTable(collections), Branches.MAIN).size() == 40);
    Map<List<Object>, Map<String, Object>> before = TableRows.byKey(
        TableRows.read(reader.loadTable(collections), Branches.MAIN), List.of("id"));

    postgres.execute("UPDATE inventory.collections SET small = small + 1000");
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    before.forEach((key, row) -> {
      Map<String, Object> next = new LinkedHashMap<>(row);
      next.put("small", (Integer) row.get("small") + 1000);
      expected.put(key, next);
    });
    // 40 inserts, then 40 updates.
    List<ConsumerRecord<byte[], byte[]>> updates = updates("collections", 80);
    assertThat(updates).hasSize(40);
    for (ConsumerRecord<byte[], byte[]> update : updates) {
      assertThat(assertReadFromPayloadsAsWhole(
              update, "dbserver1.inventory.collections@" + update.offset()))
          .as("the columns of an update that hold the placeholder")
          .containsExactly("nums", "bigs", "days", "ids", "words", "tags");
    }
    Eventually.noDifference(SYNCED, () -> branchesDiffer(collections, expected, List.of("id")));
  }

  /** The updates (op u) among the first {@code records} records of a table of the inventory schema. */
  private List<ConsumerRecord<byte[], byte[]>> updates(String table, int records) throws Exception {
    List<ConsumerRecord<byte[], byte[]>> updates = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record :
        feed.read("dbserver1.inventory." + table, records)) {
      if (record.value() != null
          && "u".equals(JSON.readTree(record.value()).path("payload").path("op").asText())) {
        updates.add(record);
      }
    }
    return updates;
  }

  private static String insertDocument(int id, Random random) {
    String body = randomText(random, 4_000 + random.nextInt(8_000));
    String doc = "{\"id\": " + id + ", \"text\": \"" + randomText(random, 3_000) + "\"}";
    byte[] bin = new byte[3_000 + random.nextInt(3_000)];
    random.nextBytes(bin);
    return "INSERT INTO inventory.documents VALUES (" + id + ", " + id + ", '" + body + "', '" + doc
        + "', '\\x" + HexFormat.of().formatHex(bin) + "')";
  }

  private static String randomText(Random random, int length) {
    StringBuilder out = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      out.append((char) ('a' + random.nextInt(26)));
    }
    return out.toString();
  }

  /** The new keys of primary-key updates that were dead-lettered. */
  private Set<Integer> keyUpdatesDeadLettered() throws Exception {
    Set<Integer> keys = new TreeSet<>();
    for (ConsumerRecord<byte[], byte[]> letter : feed.readAvailable("lakestream.dlq")) {
      if ("dbserver1.inventory.documents"
          .equals(KafkaHeaders.text(letter.headers(), DeadLetters.TOPIC))) {
        assertThat(KafkaHeaders.text(letter.headers(), DeadLetters.REASON))
            .contains("REPLICA IDENTITY FULL");
        keys.add(JSON.readTree(letter.key()).path("payload").path("id").asInt());
      }
    }
    return keys;
  }

  /** Null when main of inventory.documents equals SELECT * but for {@code absent} keys; else what differs. */
  private String documentsDiffer(TableIdentifier id, Set<Integer> absent) throws Exception {
    if (!reader.tableExists(id)) {
      return "no table " + id + " yet";
    }
    Map<List<Object>, Map<String, Object>> expected = new HashMap<>();
    try (Connection c = postgres.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT id, small, body, doc::text, bin FROM inventory.documents")) {
      while (rs.next()) {
        if (absent.contains(rs.getInt(1))) {
          continue;
        }
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", rs.getInt(1));
        row.put("small", rs.getInt(2));
        row.put("body", rs.getString(3));
        row.put("doc", rs.getString(4));
        row.put("bin", ByteBuffer.wrap(rs.getBytes(5)));
        expected.put(List.of(rs.getInt(1)), row);
      }
    }
    return branchesDiffer(id, expected, List.of("id"));
  }
}
