CREATE TABLE `credit_decisions` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`nif` text NOT NULL,
	`customer_reference` text,
	`operation_type` text NOT NULL,
	`amount_eur` real NOT NULL,
	`term_days` integer NOT NULL,
	`approved` integer NOT NULL,
	`tier` text NOT NULL,
	`limit_eur` real NOT NULL,
	`spread_bps` integer NOT NULL,
	`response` text NOT NULL,
	`algorithm_version` text NOT NULL,
	`synthetic` integer NOT NULL,
	`created_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `decisions_tenant_idx` ON `credit_decisions` (`tenant_id`,`env`,`id`);--> statement-breakpoint
CREATE INDEX `decisions_nif_idx` ON `credit_decisions` (`tenant_id`,`env`,`nif`,`id`);--> statement-breakpoint
CREATE TABLE `credit_policies` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`policy` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `erp_connections` ADD `company_nif` text;--> statement-breakpoint
CREATE INDEX `erp_conn_company_idx` ON `erp_connections` (`tenant_id`,`env`,`company_nif`);--> statement-breakpoint
ALTER TABLE `score_results` ADD `facts` text;--> statement-breakpoint
ALTER TABLE `score_results` ADD `sector` text;--> statement-breakpoint
CREATE INDEX `score_sector_idx` ON `score_results` (`tenant_id`,`env`,`sector`);--> statement-breakpoint
CREATE INDEX `txn_matched_idx` ON `bank_transactions` (`tenant_id`,`env`,`provider`,`customer_reference`,`matched_invoice_number`);--> statement-breakpoint
CREATE INDEX `esg_nif_idx` ON `esg_assessments` (`tenant_id`,`env`,`nif`,`computed_at`);--> statement-breakpoint
CREATE INDEX `invoices_customer_idx` ON `invoices` (`tenant_id`,`env`,`customer_nif`);