import type { Pool, QueryResult, QueryResultRow } from 'pg';
import { DatabaseError } from '../../platform/errors';
import { quoteAll } from '../postgres/identifier';
import { type ColumnKind, schemaProblems } from '../postgres/schema-check';
import type { NxrgNames } from './names';

/** The kind each registry column must be, by table and configuration key (NXRG_NAMES). */
export const nxrgColumnKinds = {
  documents: { id: 'id', type: 'text', citizenId: 'text', createdAt: 'timestamp', serviceTime: 'timestamp' },
  citizens: { cpr: 'text', status: 'integer' },
  deletedDocuments: { documentId: 'id', deletedAt: 'timestamp', reason: 'text', openxdsDeletedAt: 'timestamp' },
} as const satisfies Record<keyof NxrgNames, Record<string, ColumnKind>>;

/** The columns one job touches, per table. */
export type NxrgColumns = { [T in keyof typeof nxrgColumnKinds]?: (keyof (typeof nxrgColumnKinds)[T])[] };

/**
 * A keyset cursor in (time, id) order. `at` is PostgreSQL's own text for the timestamp, so the
 * microseconds a JavaScript Date would drop survive the round trip through the stack.
 */
export interface TimeCursor {
  at: string;
  id: string;
}

/** How a delete is recorded, or only counted (dry run). */
export interface Deletion {
  reason: string;
  at: Date;
  dryRun: boolean;
}

/**
 * The NXRG registry's tables on PostgreSQL (node-postgres), with their configured names quoted for
 * statements: what every job's store (time-based, status 90, repository) builds on. Every read pages
 * in index order (see infra/sql/nxrg.sql).
 */
export class NxrgTables {
  protected readonly d: NxrgNames['documents'];
  protected readonly c: NxrgNames['citizens'];
  protected readonly x: NxrgNames['deletedDocuments'];

  constructor(
    protected readonly pool: Pool,
    protected readonly names: NxrgNames,
  ) {
    this.d = quoteAll(names.documents);
    this.c = quoteAll(names.citizens);
    this.x = quoteAll(names.deletedDocuments);
  }

  /** What is missing or of the wrong type among the tables and columns `columns` names (empty: all well). */
  schemaProblems(columns: NxrgColumns): Promise<string[]> {
    const tables = (Object.entries(columns) as [keyof NxrgNames, string[]][]).map(([table, keys]) => {
      const names = this.names[table] as Record<string, string>;
      const kinds = nxrgColumnKinds[table] as Record<string, ColumnKind>;
      return {
        table: names.table!,
        setting: `NXRG_NAMES ${table}`,
        columns: Object.fromEntries(keys.map((key) => [key, { name: names[key]!, kind: kinds[key]! }])),
      };
    });
    return schemaProblems(this.pool, 'NXRG', tables);
  }

  /** A statement on the registry; its errors name NXRG and NXRG_DATABASE_URL. */
  protected query<R extends QueryResultRow>(sql: string, params: unknown[]): Promise<QueryResult<R>> {
    return DatabaseError.wrap('NXRG', () => this.pool.query<R>(sql, params));
  }
}
