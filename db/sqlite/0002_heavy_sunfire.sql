PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_usage_records` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`api_key_id` text,
	`env` text NOT NULL,
	`meter` text NOT NULL,
	`quantity` integer NOT NULL,
	`unit_amount_cents` real,
	`amount_cents` real,
	`billable` integer NOT NULL,
	`request_id` text,
	`created_at` integer NOT NULL,
	`retain_until` integer
);
--> statement-breakpoint
INSERT INTO `__new_usage_records`("id", "tenant_id", "api_key_id", "env", "meter", "quantity", "unit_amount_cents", "amount_cents", "billable", "request_id", "created_at", "retain_until") SELECT "id", "tenant_id", "api_key_id", "env", "meter", "quantity", "unit_amount_cents", "amount_cents", "billable", "request_id", "created_at", "retain_until" FROM `usage_records`;--> statement-breakpoint
DROP TABLE `usage_records`;--> statement-breakpoint
ALTER TABLE `__new_usage_records` RENAME TO `usage_records`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `usage_tenant_idx` ON `usage_records` (`tenant_id`,`created_at`);