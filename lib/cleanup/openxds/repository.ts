import type { Pool } from 'pg';
import { DatabaseError } from '../../platform/errors';
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

  /**
   * Deletes those documents with these ids that `stillDeleted` confirms (a dry run only finds them);
   * returns the ids it deleted. The rows are locked first, in id order (so two deletes of the same
   * ids never deadlock), and `stillDeleted` asked only once all are held: after any wait for a lock
   * another session held, nothing is left to wait for before the DELETE, so what it confirmed holds
   * up to the commit but for a round trip or two.
   */
  async deleteDocuments(
    ids: readonly string[],
    dryRun: boolean,
    stillDeleted: (ids: readonly string[]) => Promise<string[]>,
  ): Promise<string[]> {
    if (ids.length === 0) return [];
    const { r } = this;
    if (dryRun) {
      const { rows } = await DatabaseError.wrap('OpenXDS', () =>
        this.pool.query<{ id: string }>(`SELECT ${r.id}::text AS id FROM ${r.table} WHERE ${r.id} = ANY($1)`, [ids]),
      );
      return stillDeleted(rows.map((row) => row.id));
    }
    const client = await DatabaseError.wrap('OpenXDS', () => this.pool.connect());
    try {
      await client.query('BEGIN');
      const locked = await client.query<{ id: string }>(
        `SELECT ${r.id}::text AS id FROM ${r.table} WHERE ${r.id} = ANY($1) ORDER BY ${r.id} FOR UPDATE`,
        [ids],
      );
      const gone = await stillDeleted(locked.rows.map((row) => row.id));
      const { rows } =
        gone.length === 0
          ? { rows: [] }
          : await client.query<{ id: string }>(
              `DELETE FROM ${r.table} WHERE ${r.id} = ANY($1) RETURNING ${r.id}::text AS id`,
              [gone],
            );
      await client.query('COMMIT');
      return rows.map((row) => row.id);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error instanceof DatabaseError ? error : new DatabaseError('OpenXDS', error);
    } finally {
      client.release();
    }
  }
}
