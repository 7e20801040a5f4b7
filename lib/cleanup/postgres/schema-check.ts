import type { Pool } from 'pg';
import { DatabaseError, type DatabaseName } from '../../platform/errors';
import { quoteIdentifier } from './identifier';

/** The kinds of column the cleanup statements rely on; each accepts the PostgreSQL types that behave alike. */
export type ColumnKind = 'id' | 'text' | 'timestamp' | 'integer';

const accepts: Record<ColumnKind, (type: { name: string; category: string }) => boolean> = {
  // Ids are compared with `= ANY($1)` of strings: a uuid or any string type.
  id: (t) => t.name === 'uuid' || t.category === 'S',
  text: (t) => t.category === 'S',
  // A text time would compare as text: "01.01.2099" < "2016-…" (issue 12, item 8).
  timestamp: (t) => t.name === 'timestamptz' || t.name === 'timestamp',
  integer: (t) => ['int2', 'int4', 'int8', 'numeric'].includes(t.name),
};

const described: Record<ColumnKind, string> = {
  id: 'a uuid or text',
  text: 'text',
  timestamp: 'a timestamp',
  integer: 'an integer',
};

export interface ExpectedTable {
  /** The table's name as configured (optionally `schema.table`). */
  table: string;
  /** Where the name comes from, for messages: e.g. `NXRG_NAMES documents`. */
  setting: string;
  /** Per configuration key (e.g. `createdAt`): the column's name and the kind it must be. */
  columns: Record<string, { name: string; kind: ColumnKind }>;
}

/**
 * The problems with the tables a job will touch, read from the catalogue (`to_regclass` resolves an
 * unqualified name through the session's search_path, as the statements will): a missing table, a
 * missing column, a column of the wrong kind. Empty when all is as expected.
 */
export async function schemaProblems(pool: Pool, database: DatabaseName, tables: ExpectedTable[]): Promise<string[]> {
  const problems: string[] = [];
  for (const expected of tables) {
    const { rows } = await DatabaseError.wrap(database, () =>
      pool.query<{ found: boolean; column: string | null; type: string | null; category: string | null }>(
        `SELECT to_regclass($1) IS NOT NULL AS found, a.attname AS column, t.typname AS type, t.typcategory AS category
         FROM (SELECT 1) one
         LEFT JOIN pg_attribute a ON a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
         LEFT JOIN pg_type t ON t.oid = a.atttypid`,
        [quoteIdentifier(expected.table)],
      ),
    );
    const table = quoteIdentifier(expected.table);
    if (!rows[0]?.found) {
      problems.push(`${database} table ${table} (${expected.setting}.table) does not exist`);
      continue;
    }
    const types = new Map(rows.map((r) => [r.column, { name: r.type ?? '', category: r.category ?? '' }]));
    for (const [key, { name, kind }] of Object.entries(expected.columns)) {
      const column = `${table}.${quoteIdentifier(name)}`;
      const type = types.get(name);
      if (!type) problems.push(`${database} column ${column} (${expected.setting}.${key}) does not exist`);
      else if (!accepts[kind](type)) {
        problems.push(
          `${database} column ${column} (${expected.setting}.${key}) is ${type.name}; expected ${described[kind]}`,
        );
      }
    }
  }
  return problems;
}
