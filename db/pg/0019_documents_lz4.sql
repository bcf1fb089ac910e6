-- The stored documents (a score's result and facts, an ESG assessment's answers and result: rows
-- of 2-3 KB, compressed inline) compressed with lz4 instead of pglz: a fifth of pglz's CPU on the
-- busiest inserts. Only where the server was built with lz4 (PostgreSQL 14+ usually is); elsewhere
-- they stay pglz. Rows already stored keep their compression; no rewrite.
DO $$
BEGIN
  ALTER TABLE "score_results" ALTER COLUMN "result" SET COMPRESSION lz4, ALTER COLUMN "facts" SET COMPRESSION lz4;
  ALTER TABLE "esg_assessments" ALTER COLUMN "answers" SET COMPRESSION lz4, ALTER COLUMN "result" SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  RAISE NOTICE 'lz4 not available: documents stay compressed with pglz';
END $$;
