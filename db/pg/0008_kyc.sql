CREATE TABLE "kyc_verifications" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"nif" text NOT NULL,
	"outcome" text NOT NULL,
	"customer_reference" text,
	"response" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retain_until" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "kyc_verifications" ADD CONSTRAINT "kyc_verifications_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "kyc_tenant_idx" ON "kyc_verifications" USING btree ("tenant_id","env","id");