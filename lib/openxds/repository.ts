import type { Pool } from 'pg';
import { DatabaseError } from '../errors';
import { quoteAll } from '../postgres/identifier';
import { schemaProblems } from '../postgres/schema-check';
import type { OpenxdsNames } from './names';

/** The OpenXDS document repository on PostgreSQL (node-postgres). */
export class OpenxdsRepository {
  private readonly r: OpenxdsNames['documents'];

  constructor(
    private readonly pool: Pool,
    private readonly names: OpenxdsNames,
  ) {
    this.r = quoteAll(names.documents);
  }

  /** What is missing or of the wrong type in the repository table (empty: all there). */
  schemaProblems(): Promise<string[]> {
    const { table, id } = this.names.documents;
    return schemaProblems(this.pool, 'OpenXDS', [
      { table, setting: 'OPENXDS_NAMES documents', columns: { id: { name: id, kind: 'id' } } },
    ]);
  }

  /** Those of `ids` the repository holds. */
  async presentIds(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const { r } = this;
    const { rows } = await DatabaseError.wrap('OpenXDS', () =>
      this.pool.query<{ id: string }>(`SELECT ${r.id}::text AS id FROM ${r.table} WHERE ${r.id} = ANY($1)`, [ids]),
    );
    return rows.map((row) => row.id);
  }

  /** Deletes the documents with these ids (a dry run only finds them). Returns the ids it deleted. */
  async deleteDocuments(ids: readonly string[], dryRun: boolean): Promise<string[]> {
    if (ids.length === 0) return [];
    const { r } = this;
    const { rows } = await DatabaseError.wrap('OpenXDS', () =>
      this.pool.query<{ id: string }>(
        dryRun
          ? `SELECT ${r.id} AS id FROM ${r.table} WHERE ${r.id} = ANY($1)`
          : `DELETE FROM ${r.table} WHERE ${r.id} = ANY($1) RETURNING ${r.id} AS id`,
        [ids],
      ),
    );
    return rows.map((row) => row.id);
  }
}
