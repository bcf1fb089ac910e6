DROP INDEX `score_trigger_idx`;--> statement-breakpoint
CREATE INDEX `score_rescores_idx` ON `score_results` (`tenant_id`,`env`,`nif`) WHERE "score_results"."trigger" = 'rescore';