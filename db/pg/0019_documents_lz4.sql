-- The stored documents (a score's result and facts, an ESG assessment's answers and result: rows
-- of 2-3 KB, compressed inline) compressed with lz4 instead of pglz: a fifth of pglz's CPU on the
-- busiest inserts. Only where the server has it (PostgreSQL 14+ built with lz4, as Debian's and the
-- official images are); elsewhere they stay pglz. Rows already stored keep their compression; no
-- rewrite. The statements are run by EXECUTE so that a server without SET COMPRESSION (13 and
-- older) does not fail to parse them.
DO $$
BEGIN
  IF current_setting('server_version_num')::int >= 140000 THEN
    EXECUTE 'ALTER TABLE "score_results" ALTER COLUMN "result" SET COMPRESSION lz4, ALTER COLUMN "facts" SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE "esg_assessments" ALTER COLUMN "answers" SET COMPRESSION lz4, ALTER COLUMN "result" SET COMPRESSION lz4';
  END IF;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 not available: documents stay compressed with pglz';
END $$;
