CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"env" text NOT NULL,
	"key_prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"rate_limit_per_minute" integer,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"revoke_reason" text,
	"expires_at" timestamp with time zone,
	"rotated_from" text,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "app_meta" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"actor_key_id" text,
	"action" text NOT NULL,
	"target" text,
	"request_id" text,
	"details" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "bank_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"provider" text NOT NULL,
	"customer_reference" text NOT NULL,
	"provider_transaction_id" text NOT NULL,
	"booking_date" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"currency" text NOT NULL,
	"description" text,
	"counterparty_name" text,
	"counterparty_iban" text,
	"matched_invoice_number" text,
	"source_updated_at" text NOT NULL,
	"synced_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "erp_connections" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"provider" text NOT NULL,
	"customer_reference" text NOT NULL,
	"status" text NOT NULL,
	"state_hash" text,
	"state_expires_at" timestamp with time zone,
	"pkce_verifier_enc" text,
	"return_url" text NOT NULL,
	"access_token_enc" text,
	"refresh_token_enc" text,
	"token_expires_at" timestamp with time zone,
	"external_account_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"connected_at" timestamp with time zone,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "esg_assessments" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"nif" text NOT NULL,
	"customer_reference" text,
	"sector" text NOT NULL,
	"answers" jsonb NOT NULL,
	"result" jsonb NOT NULL,
	"algorithm_version" text NOT NULL,
	"synthetic" boolean NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"dispatched_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"key" text NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"body_hash" text NOT NULL,
	"state" text NOT NULL,
	"response_status" integer,
	"response_body" text,
	"response_headers" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invoices" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"provider" text NOT NULL,
	"customer_reference" text NOT NULL,
	"provider_document_id" text NOT NULL,
	"document_type" text NOT NULL,
	"number" text NOT NULL,
	"atcud" text,
	"issue_date" text NOT NULL,
	"due_date" text,
	"customer_nif" text,
	"customer_name" text,
	"currency" text NOT NULL,
	"net_total_cents" bigint NOT NULL,
	"tax_total_cents" bigint NOT NULL,
	"gross_total_cents" bigint NOT NULL,
	"status" text NOT NULL,
	"data" jsonb NOT NULL,
	"source_updated_at" text NOT NULL,
	"synced_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "score_results" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"nif" text NOT NULL,
	"customer_reference" text,
	"score" integer NOT NULL,
	"tier" text NOT NULL,
	"pd" double precision,
	"result" jsonb NOT NULL,
	"algorithm_version" text NOT NULL,
	"synthetic" boolean NOT NULL,
	"trigger" text NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "sync_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"provider" text NOT NULL,
	"customer_reference" text NOT NULL,
	"connection_id" text,
	"mode" text NOT NULL,
	"since" timestamp with time zone,
	"status" text NOT NULL,
	"attempts" integer NOT NULL,
	"invoices_count" integer NOT NULL,
	"transactions_count" integer NOT NULL,
	"cursor" text,
	"error_code" text,
	"error_message" text,
	"created_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"heartbeat_at" timestamp with time zone,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"plan" text NOT NULL,
	"status" text NOT NULL,
	"daily_quota" integer NOT NULL,
	"rate_limit_per_minute" integer,
	"created_at" timestamp with time zone NOT NULL,
	"terminated_at" timestamp with time zone,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "usage_records" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"api_key_id" text,
	"env" text NOT NULL,
	"meter" text NOT NULL,
	"quantity" integer NOT NULL,
	"unit_amount_cents" double precision,
	"amount_cents" double precision,
	"billable" boolean NOT NULL,
	"request_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"event_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"locked_until" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"enabled_events" jsonb NOT NULL,
	"secret_enc" text NOT NULL,
	"secret_prefix" text NOT NULL,
	"previous_secret_enc" text,
	"previous_secret_expires_at" timestamp with time zone,
	"status" text NOT NULL,
	"consecutive_failures" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_success_at" timestamp with time zone,
	"last_failure_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bank_transactions" ADD CONSTRAINT "bank_transactions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "erp_connections" ADD CONSTRAINT "erp_connections_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "esg_assessments" ADD CONSTRAINT "esg_assessments_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "score_results" ADD CONSTRAINT "score_results_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sync_runs" ADD CONSTRAINT "sync_runs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_idx" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_tenant_idx" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "audit_tenant_idx" ON "audit_log" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "txn_doc_idx" ON "bank_transactions" USING btree ("tenant_id","env","provider","customer_reference","provider_transaction_id");--> statement-breakpoint
CREATE INDEX "txn_list_idx" ON "bank_transactions" USING btree ("tenant_id","env","provider","id");--> statement-breakpoint
CREATE UNIQUE INDEX "erp_conn_state_idx" ON "erp_connections" USING btree ("state_hash");--> statement-breakpoint
CREATE INDEX "erp_conn_tenant_idx" ON "erp_connections" USING btree ("tenant_id","env","provider","customer_reference");--> statement-breakpoint
CREATE INDEX "esg_tenant_idx" ON "esg_assessments" USING btree ("tenant_id","env","computed_at");--> statement-breakpoint
CREATE INDEX "events_tenant_idx" ON "events" USING btree ("tenant_id","env","id");--> statement-breakpoint
CREATE INDEX "events_outbox_idx" ON "events" USING btree ("dispatched_at");--> statement-breakpoint
CREATE UNIQUE INDEX "idem_scope_key_idx" ON "idempotency_keys" USING btree ("tenant_id","env","key");--> statement-breakpoint
CREATE INDEX "idem_expires_idx" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "invoices_doc_idx" ON "invoices" USING btree ("tenant_id","env","provider","customer_reference","provider_document_id");--> statement-breakpoint
CREATE INDEX "invoices_list_idx" ON "invoices" USING btree ("tenant_id","env","provider","id");--> statement-breakpoint
CREATE INDEX "score_lookup_idx" ON "score_results" USING btree ("tenant_id","env","nif","computed_at");--> statement-breakpoint
CREATE INDEX "sync_runs_tenant_idx" ON "sync_runs" USING btree ("tenant_id","env","provider","customer_reference","created_at");--> statement-breakpoint
CREATE INDEX "sync_runs_status_idx" ON "sync_runs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "usage_tenant_idx" ON "usage_records" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_event_endpoint_idx" ON "webhook_deliveries" USING btree ("event_id","endpoint_id");--> statement-breakpoint
CREATE INDEX "deliveries_due_idx" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhooks_tenant_idx" ON "webhook_endpoints" USING btree ("tenant_id","env");