CREATE TABLE "aml_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"version_id" text NOT NULL,
	"list" text NOT NULL,
	"entry_id" text NOT NULL,
	"entry_type" text NOT NULL,
	"data" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "aml_list_versions" (
	"id" text PRIMARY KEY NOT NULL,
	"list" text NOT NULL,
	"generated_at" timestamp with time zone NOT NULL,
	"loaded_at" timestamp with time zone NOT NULL,
	"entries" integer NOT NULL,
	"names" integer NOT NULL,
	"source" text NOT NULL,
	"active" boolean NOT NULL
);
--> statement-breakpoint
CREATE TABLE "aml_screenings" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"top_score" double precision,
	"customer_reference" text,
	"monitor" boolean NOT NULL,
	"response" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "aml_screenings" ADD CONSTRAINT "aml_screenings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "aml_entries_version_idx" ON "aml_entries" USING btree ("version_id");--> statement-breakpoint
CREATE INDEX "aml_versions_list_idx" ON "aml_list_versions" USING btree ("list","active");--> statement-breakpoint
CREATE INDEX "aml_screenings_tenant_idx" ON "aml_screenings" USING btree ("tenant_id","env","id");--> statement-breakpoint
CREATE INDEX "aml_screenings_status_idx" ON "aml_screenings" USING btree ("tenant_id","env","status","id");