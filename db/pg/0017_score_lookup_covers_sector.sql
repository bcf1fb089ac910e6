DROP INDEX "score_sector_idx";--> statement-breakpoint
DROP INDEX "score_lookup_idx";--> statement-breakpoint
CREATE INDEX "score_lookup_idx" ON "score_results" USING btree ("tenant_id","env","nif","computed_at","sector");