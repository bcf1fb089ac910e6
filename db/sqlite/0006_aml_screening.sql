CREATE TABLE `aml_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`version_id` text NOT NULL,
	`list` text NOT NULL,
	`entry_id` text NOT NULL,
	`entry_type` text NOT NULL,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `aml_entries_version_idx` ON `aml_entries` (`version_id`);--> statement-breakpoint
CREATE TABLE `aml_list_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`list` text NOT NULL,
	`generated_at` integer NOT NULL,
	`loaded_at` integer NOT NULL,
	`entries` integer NOT NULL,
	`names` integer NOT NULL,
	`source` text NOT NULL,
	`active` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `aml_versions_list_idx` ON `aml_list_versions` (`list`,`active`);--> statement-breakpoint
CREATE TABLE `aml_screenings` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`top_score` real,
	`customer_reference` text,
	`monitor` integer NOT NULL,
	`response` text NOT NULL,
	`created_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `aml_screenings_tenant_idx` ON `aml_screenings` (`tenant_id`,`env`,`id`);--> statement-breakpoint
CREATE INDEX `aml_screenings_status_idx` ON `aml_screenings` (`tenant_id`,`env`,`status`,`id`);