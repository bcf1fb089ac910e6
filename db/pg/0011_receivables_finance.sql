CREATE TABLE "assigned_invoices" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"holder_id" text NOT NULL,
	"issuer_nif" text NOT NULL,
	"debtor_nif" text NOT NULL,
	"number" text NOT NULL,
	"assignment_key" text,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "audit_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"subject_id" text NOT NULL,
	"seq" integer NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"api_key_id" text,
	"request_id" text,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "cession_notices" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"operation_id" text,
	"language" text NOT NULL,
	"sha256" text NOT NULL,
	"pdf" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "confirming_payables" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"programme_id" text NOT NULL,
	"supplier_nif" text NOT NULL,
	"number" text NOT NULL,
	"status" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"due_date" text NOT NULL,
	"data" jsonb NOT NULL,
	"version" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "confirming_programmes" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"anchor_nif" text NOT NULL,
	"status" text NOT NULL,
	"limit_cents" bigint NOT NULL,
	"data" jsonb NOT NULL,
	"version" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "confirming_suppliers" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"programme_id" text NOT NULL,
	"supplier_nif" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "finance_operations" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"seller_nif" text NOT NULL,
	"seller_name" text,
	"modality" text NOT NULL,
	"status" text NOT NULL,
	"currency" text NOT NULL,
	"face_cents" bigint NOT NULL,
	"data" jsonb NOT NULL,
	"last_due_date" text NOT NULL,
	"reason" text,
	"customer_reference" text,
	"version" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "insurance_submissions" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"buyer_nif" text NOT NULL,
	"status" text NOT NULL,
	"requested_cents" bigint NOT NULL,
	"granted_cents" bigint,
	"insurer" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "assigned_invoices" ADD CONSTRAINT "assigned_invoices_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_entries" ADD CONSTRAINT "audit_entries_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cession_notices" ADD CONSTRAINT "cession_notices_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "confirming_payables" ADD CONSTRAINT "confirming_payables_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "confirming_programmes" ADD CONSTRAINT "confirming_programmes_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "confirming_suppliers" ADD CONSTRAINT "confirming_suppliers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "finance_operations" ADD CONSTRAINT "finance_operations_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "insurance_submissions" ADD CONSTRAINT "insurance_submissions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "assigned_live_idx" ON "assigned_invoices" USING btree ("tenant_id","env","assignment_key");--> statement-breakpoint
CREATE INDEX "assigned_holder_idx" ON "assigned_invoices" USING btree ("holder_id");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_entries_subject_seq_idx" ON "audit_entries" USING btree ("subject_id","seq");--> statement-breakpoint
CREATE INDEX "audit_entries_tenant_idx" ON "audit_entries" USING btree ("tenant_id","env","subject_id");--> statement-breakpoint
CREATE INDEX "ntc_tenant_idx" ON "cession_notices" USING btree ("tenant_id","env","id");--> statement-breakpoint
CREATE UNIQUE INDEX "cpy_programme_doc_idx" ON "confirming_payables" USING btree ("programme_id","supplier_nif","number");--> statement-breakpoint
CREATE INDEX "cpy_status_due_idx" ON "confirming_payables" USING btree ("status","due_date");--> statement-breakpoint
CREATE INDEX "cfp_tenant_idx" ON "confirming_programmes" USING btree ("tenant_id","env","id");--> statement-breakpoint
CREATE UNIQUE INDEX "cfs_programme_nif_idx" ON "confirming_suppliers" USING btree ("programme_id","supplier_nif");--> statement-breakpoint
CREATE INDEX "fop_tenant_idx" ON "finance_operations" USING btree ("tenant_id","env","id");--> statement-breakpoint
CREATE INDEX "fop_status_due_idx" ON "finance_operations" USING btree ("status","last_due_date");--> statement-breakpoint
CREATE INDEX "ins_tenant_idx" ON "insurance_submissions" USING btree ("tenant_id","env","id");--> statement-breakpoint
CREATE INDEX "ins_buyer_idx" ON "insurance_submissions" USING btree ("tenant_id","env","buyer_nif");