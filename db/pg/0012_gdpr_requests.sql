CREATE TABLE "gdpr_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"subject" jsonb NOT NULL,
	"result" jsonb,
	"reason" text,
	"requested_at" timestamp with time zone NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"version" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "gdpr_requests" ADD CONSTRAINT "gdpr_requests_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dsr_tenant_idx" ON "gdpr_requests" USING btree ("tenant_id","env","id");--> statement-breakpoint
CREATE INDEX "dsr_status_idx" ON "gdpr_requests" USING btree ("status");