import type { Pool } from 'pg';
import type { NxrgNames } from '../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../lib/cleanup/nxrg/schema';
import { DatabaseError } from '../../lib/platform/errors';

/**
 * nxrgSchemaSql's statements one by one, read back from its rendering, so that `fairway setup`
 * and `fairway doctor` act on exactly the DDL the docs and infra/sql/nxrg.sql give, for any names.
 */
export type NxrgStatement =
  | { kind: 'table'; table: string; sql: string }
  | { kind: 'index'; name: string; table: string; columns: string[]; where?: string; sql: string }
  | { kind: 'drop-index'; name: string; sql: string };

export function nxrgStatements(names: NxrgNames): NxrgStatement[] {
  const statements = nxrgSchemaSql(names)
    .split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join('\n')
    .split(';')
    .map((s) => s.trim().replace(/\s+/g, ' '))
    .filter(Boolean);
  return statements.map((sql): NxrgStatement => {
    const table = /^CREATE TABLE IF NOT EXISTS (\S+) \(/.exec(sql);
    if (table) return { kind: 'table', table: table[1]!, sql };
    const index = /^CREATE INDEX IF NOT EXISTS (\S+) ON (\S+) \((.*?)\)(?: WHERE (.*))?$/.exec(sql);
    if (index) {
      return {
        kind: 'index',
        name: index[1]!,
        table: index[2]!,
        columns: splitTopLevel(index[3]!),
        ...(index[4] ? { where: index[4] } : {}),
        sql,
      };
    }
    const drop = /^DROP INDEX IF EXISTS (\S+)$/.exec(sql);
    if (drop) return { kind: 'drop-index', name: drop[1]!, sql };
    throw new Error(`nxrgSchemaSql renders a statement fairway does not know: ${sql.slice(0, 80)}`);
  });
}

export type ExpectedIndex = Extract<NxrgStatement, { kind: 'index' }>;

export const expectedIndexes = (names: NxrgNames): ExpectedIndex[] =>
  nxrgStatements(names).filter((s): s is ExpectedIndex => s.kind === 'index');

/** A column list split at its top-level commas: `(right("cpr", 1)), "cpr"` is two columns. */
function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of list) {
    if (char === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
      continue;
    }
    if (char === '(') depth++;
    if (char === ')') depth--;
    current += char;
  }
  return [...parts, current.trim()];
}

/** An expression as PostgreSQL prints it and as the DDL writes it, made comparable. */
function normalized(expression: string): string {
  // PostgreSQL prints the casts it added (`right(cpr::text, 1)` for a char column).
  let text = expression
    .toLowerCase()
    .replace(/["\s]/g, '')
    .replace(/::[a-z]+(\([0-9]+\))?/g, '');
  while (/^\(.*\)$/.test(text) && balanced(text.slice(1, -1))) text = text.slice(1, -1);
  return text;
}

function balanced(text: string): boolean {
  let depth = 0;
  for (const char of text) {
    depth += char === '(' ? 1 : char === ')' ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/**
 * The expected indexes that no valid index of their table matches (same key columns in order,
 * same predicate), whatever its name: a registry may have built its own under another name.
 */
export async function missingIndexes(pool: Pool, expected: readonly ExpectedIndex[]): Promise<ExpectedIndex[]> {
  const missing: ExpectedIndex[] = [];
  for (const index of expected) {
    const { rows } = await DatabaseError.wrap('NXRG', () =>
      pool.query<{ columns: string[]; predicate: string | null }>(
        `SELECT ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnkeyatts) k) AS columns,
                pg_get_expr(i.indpred, i.indrelid, true) AS predicate
         FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisvalid`,
        [index.table],
      ),
    );
    const want = { columns: index.columns.map(normalized).join(','), where: normalized(index.where ?? '') };
    const found = rows.some(
      (row) => row.columns.map(normalized).join(',') === want.columns && normalized(row.predicate ?? '') === want.where,
    );
    if (!found) missing.push(index);
  }
  return missing;
}
