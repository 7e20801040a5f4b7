-- OpenXDS repository: one row per stored document (the cleanup needs only the id).
CREATE TABLE IF NOT EXISTS "repository_documents" (
  "document_id" uuid PRIMARY KEY
);
