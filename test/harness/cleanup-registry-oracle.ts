import type { Pool } from 'pg';

/**
 * The SQL oracle: which documents SPEC §4 says must go, written straight from the SPEC over the
 * default table names, sharing nothing with the adapters' queries. A day of retention is 24 hours.
 */
export interface OracleRule {
  documentType: string;
  retentionDays: number;
  basis: 'created' | 'service';
}

const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

/** registry-timebased-cleanup: documents of a configured type older than its retention. */
export async function expiredDocumentIds(nxrg: Pool, rules: readonly OracleRule[], now: Date): Promise<string[]> {
  let found: string[] = [];
  for (const rule of rules) {
    const column = rule.basis === 'created' ? 'created_at' : 'service_time';
    const { rows } = await nxrg.query<{ id: string }>(
      `SELECT id::text AS id FROM documents
       WHERE document_type = $1 AND ${column} IS NOT NULL AND ${column} < $2::timestamptz - $3 * interval '24 hours'`,
      [rule.documentType, now, rule.retentionDays],
    );
    // concat, not push(...): a spread of a million ids overflows the call stack.
    found = found.concat(rows.map((r) => r.id));
  }
  return found.sort();
}

/** registry-status90-cleanup: every document of a citizen whose status is 90. */
export async function deceasedDocumentIds(nxrg: Pool): Promise<string[]> {
  const { rows } = await nxrg.query<{ id: string }>(
    `SELECT id::text AS id FROM documents WHERE citizen_id IN (SELECT cpr FROM citizens WHERE status = 90)`,
  );
  return ids(rows);
}

/** repository-cleanup: documents in OpenXDS recorded as deleted in NXRG, not yet done, and not back in NXRG. */
export async function repositoryDeletableIds(nxrg: Pool, openxds: Pool): Promise<string[]> {
  const pending = await nxrg.query<{ id: string }>(
    `SELECT document_id::text AS id FROM deleted_documents
     WHERE openxds_deleted_at IS NULL AND document_id NOT IN (SELECT id FROM documents)`,
  );
  const stored = new Set(
    ids((await openxds.query<{ id: string }>('SELECT document_id::text AS id FROM repository_documents')).rows),
  );
  return ids(pending.rows).filter((id) => stored.has(id));
}

export async function allDocumentIds(nxrg: Pool): Promise<string[]> {
  return ids((await nxrg.query<{ id: string }>('SELECT id::text AS id FROM documents')).rows);
}

export async function repositoryIds(openxds: Pool): Promise<string[]> {
  return ids((await openxds.query<{ id: string }>('SELECT document_id::text AS id FROM repository_documents')).rows);
}

/**
 * A small summary of how two id lists differ, for assertions over 100,000 ids that stay fast and
 * readable: compare `idDiff(actual, expected)` with `{ size: expected.length, missing: [], extra: [] }`
 * (a duplicate in `actual` shows as a size mismatch).
 */
export function idDiff(actual: readonly string[], expected: readonly string[]) {
  const want = new Set(expected);
  const got = new Set(actual);
  return {
    size: actual.length,
    missing: expected.filter((id) => !got.has(id)).slice(0, 5),
    extra: actual.filter((id) => !want.has(id)).slice(0, 5),
  };
}
