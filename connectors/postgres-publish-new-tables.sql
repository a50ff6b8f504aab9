-- Tables created while the connector runs join its publication in the statement that creates them.
--
-- With publication.autocreate.mode=filtered (the shipped connectors), Debezium makes its
-- publication of the captured tables when it starts, and PostgreSQL publishes only the tables a
-- publication holds: a table created later publishes nothing until the connector restarts, and
-- what was written to it until then never reaches Kafka (README, "Tables created while the
-- connector runs"). This event trigger adds such a table to the publication at the end of its
-- CREATE TABLE, in the same transaction, so its first row is published as any other.
--
-- Run it once in the captured database as a superuser (event triggers need one), after editing
-- the settings in the DECLARE block below to match the connector's JSON:
--
--   psql "$DATABASE_URL" -f connectors/postgres-publish-new-tables.sql
--
-- A table is added when it is in a captured schema (and matches the table patterns, if set), is a
-- regular table or (PostgreSQL 13+) a partitioned one, not a partition (with
-- publish.via.partition.root its root publishes its rows), not unlogged or temporary, and has a
-- replica identity its UPDATEs and DELETEs can be published with: an immediate (not DEFERRABLE)
-- primary key, or for a regular table REPLICA IDENTITY FULL or USING INDEX. Any other table is
-- left out, because PostgreSQL refuses the UPDATEs and DELETEs of a published table without one;
-- the ALTER TABLE that gives it one adds it (rows written before that need an incremental
-- snapshot). Only the table itself is added (ONLY), never tables that inherit from it.
-- An error in adding a table is raised as a WARNING and the table is left out; the user's
-- statement goes on. Remove it with: DROP EVENT TRIGGER lakestream_publish_new_tables;

BEGIN;

-- Made afresh, so that it is owned by the superuser running this file.
DROP EVENT TRIGGER IF EXISTS lakestream_publish_new_tables;
DROP FUNCTION IF EXISTS public.lakestream_publish_new_tables() CASCADE;

CREATE FUNCTION public.lakestream_publish_new_tables() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $body$
DECLARE
  -- The connector's publication.name.
  publication_name text := 'lakestream';
  -- The connector's schema.include.list as it is there (comma-separated patterns, each matching a
  -- whole name, ignoring case, as Debezium matches them; '.*' if it has none; a comma escaped
  -- with a backslash is not supported), and its table.include.list (patterns of schema.table),
  -- or NULL if it has none.
  schema_patterns text := 'inventory';
  table_patterns text := NULL;
  created record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_publication
                 WHERE pubname = publication_name AND NOT puballtables) THEN
    RETURN;
  END IF;
  FOR created IN
    SELECT DISTINCT c.oid, n.nspname, c.relname
    FROM pg_catalog.pg_event_trigger_ddl_commands() d
    JOIN pg_catalog.pg_class c ON c.oid = d.objid
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
      AND (c.relkind = 'r'
           OR (c.relkind = 'p'
               AND pg_catalog.current_setting('server_version_num')::int >= 130000))
      AND NOT c.relispartition
      AND c.relpersistence = 'p'
      AND EXISTS (SELECT 1 FROM pg_catalog.regexp_split_to_table(schema_patterns, ',') s(p)
                  WHERE n.nspname ~* ('^(' || pg_catalog.btrim(s.p) || ')$'))
      AND (table_patterns IS NULL
           OR EXISTS (SELECT 1 FROM pg_catalog.regexp_split_to_table(table_patterns, ',') t(p)
                      WHERE (n.nspname || '.' || c.relname) ~* ('^(' || pg_catalog.btrim(t.p) || ')$')))
      AND ((c.relreplident = 'd' AND EXISTS
             (SELECT 1 FROM pg_catalog.pg_index i
              WHERE i.indrelid = c.oid AND i.indisprimary AND i.indimmediate AND i.indisvalid))
           OR (c.relkind = 'r' AND c.relreplident = 'f')
           OR (c.relkind = 'r' AND c.relreplident = 'i' AND EXISTS
             (SELECT 1 FROM pg_catalog.pg_index i
              WHERE i.indrelid = c.oid AND i.indisreplident AND i.indimmediate AND i.indisvalid)))
      AND NOT EXISTS
        (SELECT 1 FROM pg_catalog.pg_publication_rel r
         JOIN pg_catalog.pg_publication p ON p.oid = r.prpubid
         WHERE p.pubname = publication_name AND r.prrelid = c.oid)
  LOOP
    BEGIN
      EXECUTE pg_catalog.format('ALTER PUBLICATION %I ADD TABLE ONLY %I.%I',
          publication_name, created.nspname, created.relname);
      RAISE NOTICE 'lakestream: %.% added to publication %',
          created.nspname, created.relname, publication_name;
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING 'lakestream: %.% not added to publication %: %',
          created.nspname, created.relname, publication_name, SQLERRM;
    END;
  END LOOP;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'lakestream: tables not added to publication %: %', publication_name, SQLERRM;
END
$body$;

CREATE EVENT TRIGGER lakestream_publish_new_tables ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE')
  EXECUTE PROCEDURE public.lakestream_publish_new_tables();

COMMIT;
