-- Documents stored and read whole (never queried inside) as json: its input is validated, not
-- parsed into jsonb's binary form, the cheaper write on the busiest tables. One rewrite per table.
ALTER TABLE "esg_assessments" ALTER COLUMN "answers" SET DATA TYPE json, ALTER COLUMN "result" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "score_results" ALTER COLUMN "result" SET DATA TYPE json, ALTER COLUMN "facts" SET DATA TYPE json;
