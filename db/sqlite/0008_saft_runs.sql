CREATE TABLE `saft_chunks` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`seq` integer NOT NULL,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `saft_chunks_run_idx` ON `saft_chunks` (`run_id`,`seq`);--> statement-breakpoint
CREATE TABLE `saft_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`status` text NOT NULL,
	`bytes` integer NOT NULL,
	`content_encoding` text,
	`public_key_pem` text,
	`import_as` text,
	`result` text,
	`error_message` text,
	`created_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `saft_runs_tenant_idx` ON `saft_runs` (`tenant_id`,`env`,`id`);