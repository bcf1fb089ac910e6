ALTER TABLE `saft_runs` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `saft_runs` ADD `heartbeat_at` integer;--> statement-breakpoint
CREATE INDEX `saft_runs_status_idx` ON `saft_runs` (`status`);