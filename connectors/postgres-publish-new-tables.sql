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
-- the two settings in the DECLARE block below to match the connector's JSON:
--
--   psql "$DATABASE_URL" -f connectors/postgres-publish-new-tables.sql
--
-- A table is added when it is in a captured schema (and matches the table pattern, if set), is a
-- regular or partitioned table, not a partition (with publish.via.partition.root its root
-- publishes its rows), not unlogged or temporary, and has a replica identity (a primary key,
-- REPLICA IDENTITY FULL or USING INDEX). A table without one is left out, because PostgreSQL
-- refuses the UPDATEs and DELETEs of a published table without a replica identity; it is added by
-- the ALTER TABLE that gives it one (rows written before that need an incremental snapshot). An
-- error never fails the user's statement: it is raised as a WARNING and the table is left out.
-- Remove it with: DROP EVENT TRIGGER lakestream_publish_new_tables;

CREATE OR REPLACE FUNCTION public.lakestream_publish_new_tables() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $body$
DECLARE
  -- The connector's publication.name.
  publication_name text := 'lakestream';
  -- The connector's schema.include.list, as it is there (comma-separated patterns, each matching
  -- a whole name), and its table.include.list (schema.table patterns), or NULL if it has none.
  schema_patterns text := 'inventory';
  table_patterns text := NULL;
  created record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = publication_name AND NOT puballtables)
  THEN
    RETURN;
  END IF;
  FOR created IN
    SELECT DISTINCT c.oid, n.nspname, c.relname
    FROM pg_event_trigger_ddl_commands() d
    JOIN pg_class c ON c.oid = d.objid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE d.classid = 'pg_class'::regclass
      AND c.relkind IN ('r', 'p')
      AND NOT c.relispartition
      AND c.relpersistence = 'p'
      AND n.nspname ~ ('^(' || replace(schema_patterns, ',', '|') || ')$')
      AND (table_patterns IS NULL
           OR n.nspname || '.' || c.relname ~ ('^(' || replace(table_patterns, ',', '|') || ')$'))
      AND (c.relreplident = 'f'
           OR (c.relreplident = 'd' AND EXISTS
                (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))
           OR (c.relreplident = 'i' AND EXISTS
                (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisreplident)))
      AND NOT EXISTS
        (SELECT 1 FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid
         WHERE p.pubname = publication_name AND r.prrelid = c.oid)
  LOOP
    BEGIN
      EXECUTE format('ALTER PUBLICATION %I ADD TABLE %I.%I',
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

DROP EVENT TRIGGER IF EXISTS lakestream_publish_new_tables;
CREATE EVENT TRIGGER lakestream_publish_new_tables ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE')
  EXECUTE FUNCTION public.lakestream_publish_new_tables();
