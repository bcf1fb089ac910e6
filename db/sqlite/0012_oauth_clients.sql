CREATE TABLE `oauth_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`env` text NOT NULL,
	`key_id` text NOT NULL,
	`name` text NOT NULL,
	`secret_hash` text NOT NULL,
	`secret_prefix` text NOT NULL,
	`previous_secret_hash` text,
	`previous_secret_expires_at` integer,
	`created_at` integer NOT NULL,
	`deleted_at` integer,
	`retain_until` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `oauth_clients_tenant_idx` ON `oauth_clients` (`tenant_id`,`env`);--> statement-breakpoint
CREATE TABLE `oauth_signing_keys` (
	`kid` text PRIMARY KEY NOT NULL,
	`alg` text NOT NULL,
	`public_jwk` text NOT NULL,
	`private_jwk_enc` text NOT NULL,
	`created_at` integer NOT NULL,
	`retired_at` integer
);
