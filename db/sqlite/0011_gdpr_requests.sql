CREATE TABLE `gdpr_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`subject` text NOT NULL,
	`result` text,
	`reason` text,
	`requested_at` integer NOT NULL,
	`due_at` integer NOT NULL,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `dsr_tenant_idx` ON `gdpr_requests` (`tenant_id`,`env`,`id`);--> statement-breakpoint
CREATE INDEX `dsr_status_idx` ON `gdpr_requests` (`status`);