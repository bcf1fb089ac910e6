CREATE TABLE `csrd_reports` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`assessment_id` text NOT NULL,
	`nif` text NOT NULL,
	`language` text NOT NULL,
	`sha256` text NOT NULL,
	`pdf` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `csrd_tenant_idx` ON `csrd_reports` (`tenant_id`,`env`,`created_at`);--> statement-breakpoint
CREATE INDEX `csrd_nif_idx` ON `csrd_reports` (`tenant_id`,`env`,`nif`);