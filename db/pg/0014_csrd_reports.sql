CREATE TABLE "csrd_reports" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"assessment_id" text NOT NULL,
	"nif" text NOT NULL,
	"language" text NOT NULL,
	"sha256" text NOT NULL,
	"pdf" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "csrd_reports" ADD CONSTRAINT "csrd_reports_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "csrd_tenant_idx" ON "csrd_reports" USING btree ("tenant_id","env","created_at");--> statement-breakpoint
CREATE INDEX "csrd_nif_idx" ON "csrd_reports" USING btree ("tenant_id","env","nif");