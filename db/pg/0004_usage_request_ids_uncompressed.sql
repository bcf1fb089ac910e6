-- Custom SQL migration file, put your code below! --
-- A usage row's request ids are random hex: compression finds almost nothing to save in them,
-- but pglz spent ~5x the CPU of storing them as they are (docs/decisions.md). Applies to new rows.
ALTER TABLE "usage_records" ALTER COLUMN "request_ids" SET STORAGE EXTERNAL;
