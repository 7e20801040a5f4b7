-- NXRG registry: documents, citizens' CPR status, and the record of deleted documents.
CREATE TABLE IF NOT EXISTS "citizens" (
  "cpr" char(10) PRIMARY KEY,
  "status" integer NOT NULL -- 90 = deceased
);
-- Suffix operation: citizens whose CPR ends with a digit, in CPR order.
CREATE INDEX IF NOT EXISTS "citizens_cpr_suffix_idx" ON "citizens" ((right("cpr", 1)), "cpr");

CREATE TABLE IF NOT EXISTS "documents" (
  "id" uuid PRIMARY KEY,
  "document_type" text NOT NULL,
  "citizen_id" char(10) NOT NULL,
  "created_at" timestamptz NOT NULL,
  "service_time" timestamptz
);
-- Type-based operation: one document type past its retention, in (time, id) order.
CREATE INDEX IF NOT EXISTS "documents_type_created_idx" ON "documents" ("document_type", "created_at", "id");
CREATE INDEX IF NOT EXISTS "documents_type_service_idx" ON "documents" ("document_type", "service_time", "id");
-- Citizen batch operation: the documents of deceased citizens.
CREATE INDEX IF NOT EXISTS "documents_citizen_idx" ON "documents" ("citizen_id", "id");

-- One row per deletion a registry cleanup made (appended: a document deleted again after a restore gets
-- a second row); the repository cleanup sets "openxds_deleted_at". No primary key: a random uuid insert
-- into one was most of what recording a deletion cost (docs/cleanup.md, Data model).
CREATE TABLE IF NOT EXISTS "deleted_documents" (
  "document_id" uuid NOT NULL,
  "deleted_at" timestamptz NOT NULL,
  "reason" text NOT NULL,
  "openxds_deleted_at" timestamptz
);
-- Repository cleanup: the deletions not yet done in OpenXDS, in (deleted_at, document_id) order. A new
-- record joins this index at its right edge (deleted_at is the deleting step's clock). It replaces the
-- earlier pending index on ("document_id") alone (docs/cleanup.md, Operating: migrating from an earlier version).
CREATE INDEX IF NOT EXISTS "deleted_documents_pending_time_idx" ON "deleted_documents" ("deleted_at", "document_id") WHERE "openxds_deleted_at" IS NULL;
-- The recheck: the deletions done in OpenXDS, in ("openxds_deleted_at", document_id) order. The mark joins
-- it at its right edge ("openxds_deleted_at" is the settling step's clock); a pending record is not in it.
CREATE INDEX IF NOT EXISTS "deleted_documents_done_idx" ON "deleted_documents" ("openxds_deleted_at", "document_id") WHERE "openxds_deleted_at" IS NOT NULL;
DROP INDEX IF EXISTS "deleted_documents_pending_idx";
