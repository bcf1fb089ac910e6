CREATE TABLE "saft_chunks" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"seq" integer NOT NULL,
	"data" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "saft_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"env" text NOT NULL,
	"status" text NOT NULL,
	"bytes" bigint NOT NULL,
	"content_encoding" text,
	"public_key_pem" text,
	"import_as" text,
	"result" text,
	"error_message" text,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "saft_runs" ADD CONSTRAINT "saft_runs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "saft_chunks_run_idx" ON "saft_chunks" USING btree ("run_id","seq");--> statement-breakpoint
CREATE INDEX "saft_runs_tenant_idx" ON "saft_runs" USING btree ("tenant_id","env","id");