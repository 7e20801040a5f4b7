import { quoteAll, quoteIdentifier } from '../postgres/identifier';
import type { NxrgNames } from './names';

/** An index name beside its table: the last part of the table name plus a suffix, quoted. */
const indexName = (table: string, suffix: string) => quoteIdentifier(`${table.split('.').pop()}_${suffix}`);
/** The same name in the table's schema (an index lives there), for statements that name an existing index. */
const siblingName = (table: string, suffix: string) =>
  quoteIdentifier(`${table.includes('.') ? `${table.split('.')[0]}.` : ''}${table.split('.').pop()}_${suffix}`);

/**
 * The NXRG DDL for the given names: tables for a fresh registry (IF NOT EXISTS, so an existing one
 * keeps its own) and the indexes that make every cleanup query an index range scan.
 * infra/sql/nxrg.sql is this with the default names.
 */
export function nxrgSchemaSql(names: NxrgNames): string {
  const d = quoteAll(names.documents);
  const c = quoteAll(names.citizens);
  const x = quoteAll(names.deletedDocuments);
  return `-- NXRG registry: documents, citizens' CPR status, and the record of deleted documents.
CREATE TABLE IF NOT EXISTS ${c.table} (
  ${c.cpr} char(10) PRIMARY KEY,
  ${c.status} integer NOT NULL -- 90 = deceased
);
-- Suffix operation: citizens whose CPR ends with a digit, in CPR order.
CREATE INDEX IF NOT EXISTS ${indexName(names.citizens.table, 'cpr_suffix_idx')} ON ${c.table} ((right(${c.cpr}, 1)), ${c.cpr});

CREATE TABLE IF NOT EXISTS ${d.table} (
  ${d.id} uuid PRIMARY KEY,
  ${d.type} text NOT NULL,
  ${d.citizenId} char(10) NOT NULL,
  ${d.createdAt} timestamptz NOT NULL,
  ${d.serviceTime} timestamptz
);
-- Type-based operation: one document type past its retention, in (time, id) order.
CREATE INDEX IF NOT EXISTS ${indexName(names.documents.table, 'type_created_idx')} ON ${d.table} (${d.type}, ${d.createdAt}, ${d.id});
CREATE INDEX IF NOT EXISTS ${indexName(names.documents.table, 'type_service_idx')} ON ${d.table} (${d.type}, ${d.serviceTime}, ${d.id});
-- Citizen batch operation: the documents of deceased citizens.
CREATE INDEX IF NOT EXISTS ${indexName(names.documents.table, 'citizen_idx')} ON ${d.table} (${d.citizenId}, ${d.id});

-- One row per deletion a registry cleanup made (appended: a document deleted again after a restore gets
-- a second row); the repository cleanup sets ${x.openxdsDeletedAt}. No primary key: a random uuid insert
-- into one was most of what recording a deletion cost (docs/cleanup.md, Data model).
CREATE TABLE IF NOT EXISTS ${x.table} (
  ${x.documentId} uuid NOT NULL,
  ${x.deletedAt} timestamptz NOT NULL,
  ${x.reason} text NOT NULL,
  ${x.openxdsDeletedAt} timestamptz
);
-- Repository cleanup: the deletions not yet done in OpenXDS, in (deleted_at, document_id) order. A new
-- record joins this index at its right edge (deleted_at is the deleting step's clock). It replaces the
-- earlier pending index on (${x.documentId}) alone (docs/cleanup.md, Operating: migrating from an earlier version).
CREATE INDEX IF NOT EXISTS ${indexName(names.deletedDocuments.table, 'pending_time_idx')} ON ${x.table} (${x.deletedAt}, ${x.documentId}) WHERE ${x.openxdsDeletedAt} IS NULL;
-- The recheck: the deletions done in OpenXDS, in (${x.openxdsDeletedAt}, document_id) order. The mark joins
-- it at its right edge (${x.openxdsDeletedAt} is the settling step's clock); a pending record is not in it.
CREATE INDEX IF NOT EXISTS ${indexName(names.deletedDocuments.table, 'done_idx')} ON ${x.table} (${x.openxdsDeletedAt}, ${x.documentId}) WHERE ${x.openxdsDeletedAt} IS NOT NULL;
DROP INDEX IF EXISTS ${siblingName(names.deletedDocuments.table, 'pending_idx')};
`;
}
