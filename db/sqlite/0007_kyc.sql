CREATE TABLE `kyc_verifications` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`nif` text NOT NULL,
	`outcome` text NOT NULL,
	`customer_reference` text,
	`response` text NOT NULL,
	`created_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `kyc_tenant_idx` ON `kyc_verifications` (`tenant_id`,`env`,`id`);