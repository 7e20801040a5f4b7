import { quoteAll } from '../postgres/identifier';
import type { OpenxdsNames } from './names';

/** The OpenXDS repository table the cleanup deletes from. infra/sql/openxds.sql is this with the default names. */
export function openxdsSchemaSql(names: OpenxdsNames): string {
  const r = quoteAll(names.documents);
  return `-- OpenXDS repository: one row per stored document (the cleanup needs only the id).
CREATE TABLE IF NOT EXISTS ${r.table} (
  ${r.id} uuid PRIMARY KEY
);
`;
}
