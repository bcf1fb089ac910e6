CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`env` text NOT NULL,
	`key_prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`scopes` text NOT NULL,
	`rate_limit_per_minute` integer,
	`last_used_at` integer,
	`revoked_at` integer,
	`revoke_reason` text,
	`expires_at` integer,
	`rotated_from` text,
	`created_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_idx` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_tenant_idx` ON `api_keys` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `app_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`expires_at` integer
);
--> statement-breakpoint
CREATE TABLE `audit_log` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`actor_key_id` text,
	`action` text NOT NULL,
	`target` text,
	`request_id` text,
	`details` text,
	`created_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `audit_tenant_idx` ON `audit_log` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `bank_transactions` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`provider` text NOT NULL,
	`customer_reference` text NOT NULL,
	`provider_transaction_id` text NOT NULL,
	`booking_date` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`currency` text NOT NULL,
	`description` text,
	`counterparty_name` text,
	`counterparty_iban` text,
	`matched_invoice_number` text,
	`source_updated_at` text NOT NULL,
	`synced_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `txn_doc_idx` ON `bank_transactions` (`tenant_id`,`env`,`provider`,`customer_reference`,`provider_transaction_id`);--> statement-breakpoint
CREATE INDEX `txn_list_idx` ON `bank_transactions` (`tenant_id`,`env`,`provider`,`id`);--> statement-breakpoint
CREATE TABLE `erp_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`provider` text NOT NULL,
	`customer_reference` text NOT NULL,
	`status` text NOT NULL,
	`state_hash` text,
	`state_expires_at` integer,
	`pkce_verifier_enc` text,
	`return_url` text NOT NULL,
	`access_token_enc` text,
	`refresh_token_enc` text,
	`token_expires_at` integer,
	`external_account_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`connected_at` integer,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `erp_conn_state_idx` ON `erp_connections` (`state_hash`);--> statement-breakpoint
CREATE INDEX `erp_conn_tenant_idx` ON `erp_connections` (`tenant_id`,`env`,`provider`,`customer_reference`);--> statement-breakpoint
CREATE TABLE `esg_assessments` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`nif` text NOT NULL,
	`customer_reference` text,
	`sector` text NOT NULL,
	`answers` text NOT NULL,
	`result` text NOT NULL,
	`algorithm_version` text NOT NULL,
	`synthetic` integer NOT NULL,
	`computed_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `esg_tenant_idx` ON `esg_assessments` (`tenant_id`,`env`,`computed_at`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`dispatched_at` integer,
	`created_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `events_tenant_idx` ON `events` (`tenant_id`,`env`,`id`);--> statement-breakpoint
CREATE INDEX `events_outbox_idx` ON `events` (`dispatched_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`key` text NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`body_hash` text NOT NULL,
	`state` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`response_headers` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idem_scope_key_idx` ON `idempotency_keys` (`tenant_id`,`env`,`key`);--> statement-breakpoint
CREATE INDEX `idem_expires_idx` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
CREATE TABLE `invoices` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`provider` text NOT NULL,
	`customer_reference` text NOT NULL,
	`provider_document_id` text NOT NULL,
	`document_type` text NOT NULL,
	`number` text NOT NULL,
	`atcud` text,
	`issue_date` text NOT NULL,
	`due_date` text,
	`customer_nif` text,
	`customer_name` text,
	`currency` text NOT NULL,
	`net_total_cents` integer NOT NULL,
	`tax_total_cents` integer NOT NULL,
	`gross_total_cents` integer NOT NULL,
	`status` text NOT NULL,
	`data` text NOT NULL,
	`source_updated_at` text NOT NULL,
	`synced_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_doc_idx` ON `invoices` (`tenant_id`,`env`,`provider`,`customer_reference`,`provider_document_id`);--> statement-breakpoint
CREATE INDEX `invoices_list_idx` ON `invoices` (`tenant_id`,`env`,`provider`,`id`);--> statement-breakpoint
CREATE TABLE `score_results` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`nif` text NOT NULL,
	`customer_reference` text,
	`score` integer NOT NULL,
	`tier` text NOT NULL,
	`pd` real,
	`result` text NOT NULL,
	`algorithm_version` text NOT NULL,
	`synthetic` integer NOT NULL,
	`trigger` text NOT NULL,
	`computed_at` integer NOT NULL,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `score_lookup_idx` ON `score_results` (`tenant_id`,`env`,`nif`,`computed_at`);--> statement-breakpoint
CREATE TABLE `sync_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`provider` text NOT NULL,
	`customer_reference` text NOT NULL,
	`connection_id` text,
	`mode` text NOT NULL,
	`since` integer,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`invoices_count` integer NOT NULL,
	`transactions_count` integer NOT NULL,
	`cursor` text,
	`error_code` text,
	`error_message` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	`heartbeat_at` integer,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `sync_runs_tenant_idx` ON `sync_runs` (`tenant_id`,`env`,`provider`,`customer_reference`,`created_at`);--> statement-breakpoint
CREATE INDEX `sync_runs_status_idx` ON `sync_runs` (`status`);--> statement-breakpoint
CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`plan` text NOT NULL,
	`status` text NOT NULL,
	`daily_quota` integer NOT NULL,
	`rate_limit_per_minute` integer,
	`created_at` integer NOT NULL,
	`terminated_at` integer,
	`retain_until` integer
);
--> statement-breakpoint
CREATE TABLE `usage_records` (
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
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `usage_tenant_idx` ON `usage_records` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`event_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer,
	`locked_until` integer,
	`last_status_code` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_event_endpoint_idx` ON `webhook_deliveries` (`event_id`,`endpoint_id`);--> statement-breakpoint
CREATE INDEX `deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`enabled_events` text NOT NULL,
	`secret_enc` text NOT NULL,
	`secret_prefix` text NOT NULL,
	`previous_secret_enc` text,
	`previous_secret_expires_at` integer,
	`status` text NOT NULL,
	`consecutive_failures` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_success_at` integer,
	`last_failure_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhooks_tenant_idx` ON `webhook_endpoints` (`tenant_id`,`env`);