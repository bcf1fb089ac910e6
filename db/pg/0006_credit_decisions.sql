CREATE TABLE "credit_decisions" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"nif" text NOT NULL,
	"customer_reference" text,
	"operation_type" text NOT NULL,
	"amount_eur" double precision NOT NULL,
	"term_days" integer NOT NULL,
	"approved" boolean NOT NULL,
	"tier" text NOT NULL,
	"limit_eur" double precision NOT NULL,
	"spread_bps" integer NOT NULL,
	"response" text NOT NULL,
	"algorithm_version" text NOT NULL,
	"synthetic" boolean NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "credit_policies" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"policy" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "erp_connections" ADD COLUMN "company_nif" text;--> statement-breakpoint
ALTER TABLE "score_results" ADD COLUMN "facts" jsonb;--> statement-breakpoint
ALTER TABLE "score_results" ADD COLUMN "sector" text;--> statement-breakpoint
ALTER TABLE "credit_decisions" ADD CONSTRAINT "credit_decisions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_policies" ADD CONSTRAINT "credit_policies_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "decisions_tenant_idx" ON "credit_decisions" USING btree ("tenant_id","env","id");--> statement-breakpoint
CREATE INDEX "decisions_nif_idx" ON "credit_decisions" USING btree ("tenant_id","env","nif","id");--> statement-breakpoint
CREATE INDEX "txn_matched_idx" ON "bank_transactions" USING btree ("tenant_id","env","provider","customer_reference","matched_invoice_number");--> statement-breakpoint
CREATE INDEX "erp_conn_company_idx" ON "erp_connections" USING btree ("tenant_id","env","company_nif");--> statement-breakpoint
CREATE INDEX "esg_nif_idx" ON "esg_assessments" USING btree ("tenant_id","env","nif","computed_at");--> statement-breakpoint
CREATE INDEX "invoices_customer_idx" ON "invoices" USING btree ("tenant_id","env","customer_nif");--> statement-breakpoint
CREATE INDEX "score_sector_idx" ON "score_results" USING btree ("tenant_id","env","sector");