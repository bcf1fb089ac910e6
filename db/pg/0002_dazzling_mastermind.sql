ALTER TABLE "usage_records" DROP CONSTRAINT "usage_records_tenant_id_tenants_id_fk";
