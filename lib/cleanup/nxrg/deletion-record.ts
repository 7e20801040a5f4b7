import { DatabaseError } from '../../platform/errors';
import { type Deletion, type NxrgColumns, NxrgTables } from './tables';

/**
 * How the deletion table is keyed: `appended` (no unique index on document_id: every deletion
 * appends a record, a document deleted again after a restore gets a second one) or `keyed` (the
 * primary key of an earlier version: a deletion of a document already recorded resets its record).
 */
export type RecordShape = 'appended' | 'keyed';

/**
 * The registry as the jobs that delete documents see it (time-based, status 90): every delete
 * re-checks its condition in the same statement and writes the deletion record in that statement
 * too, so a document is never gone without its record.
 */
export class RecordedDeletes extends NxrgTables {
  private shape: Promise<RecordShape> | undefined;

  /**
   * What {@link NxrgTables.schemaProblems} finds, and a unique index on document_id these jobs cannot
   * work with (they write deletion records: a second record must fit in the table).
   */
  override async schemaProblems(columns: NxrgColumns): Promise<string[]> {
    const problems = await super.schemaProblems(columns);
    if (problems.length === 0) problems.push(...(await this.recordKeyProblems()));
    return problems;
  }

  /**
   * A unique index on the deletion table's document_id other than a plain key (valid, immediate, on
   * document_id alone: what `ON CONFLICT (document_id)` uses) would fail a document's second record
   * without the upsert being able to use it: refused at cold start rather than failing every delete.
   */
  private async recordKeyProblems(): Promise<string[]> {
    const { x } = this;
    const { rows } = await this.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attname = $2
       WHERE i.indrelid = to_regclass($1) AND i.indisunique AND a.attnum = ANY(i.indkey::int2[])
         AND NOT (i.indnkeyatts = 1 AND i.indisvalid AND i.indimmediate AND i.indpred IS NULL AND i.indexprs IS NULL)
       ORDER BY 1`,
      [x.table, this.names.deletedDocuments.documentId],
    );
    return rows.map(
      ({ name }) =>
        `NXRG table ${x.table} (NXRG_NAMES deletedDocuments.table) has unique index "${name}" on ${x.documentId}, which ` +
        'is not a plain key: a document deleted again after a restore needs a second record; drop it ' +
        '(docs/cleanup.md, Operating: migrating to the appended record)',
    );
  }

  /**
   * Deletes the documents that meet `where` ($1… are `params`; the document is `doc`) and records
   * each in the deletion table in the same statement. A dry run selects with the same condition
   * and changes nothing.
   */
  protected async deleteWhere(where: string, params: unknown[], deletion: Deletion): Promise<string[]> {
    const { d, x } = this;
    if (deletion.dryRun) {
      const { rows } = await this.query<{ id: string }>(
        `SELECT doc.${d.id}::text AS id FROM ${d.table} doc WHERE ${where}`,
        params,
      );
      return rows.map((r) => r.id);
    }
    const at = params.length + 1;
    const keyed = (await this.recordShape()) === 'keyed';
    const { rows } = await this.query<{ id: string }>(
      `WITH gone AS (DELETE FROM ${d.table} doc WHERE ${where} RETURNING doc.${d.id} AS id),
       recorded AS (
         INSERT INTO ${x.table} (${x.documentId}, ${x.deletedAt}, ${x.reason})
         SELECT id, $${at}, $${at + 1} FROM gone
         ${keyed ? this.resetRecord() : ''}
       )
       SELECT id FROM gone`,
      [...params, deletion.at, deletion.reason],
    ).catch((error: unknown) => {
      // The statement failed as a whole (nothing deleted): the table's keys changed since they were
      // read (a migration while this container was warm). Read them again for the retry.
      if (shapeChanged(error)) this.shape = undefined;
      throw error;
    });
    return rows.map((r) => r.id);
  }

  /**
   * The deletion table's shape (see {@link RecordShape}), read from the catalogue once: `keyed` when
   * a plain unique index on document_id alone exists (what `ON CONFLICT (document_id)` infers).
   */
  recordShape(): Promise<RecordShape> {
    const { x } = this;
    this.shape ??= this.query<{ keyed: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
         WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indisvalid AND i.indimmediate
           AND i.indnkeyatts = 1 AND i.indpred IS NULL AND i.indexprs IS NULL AND a.attname = $2
       ) AS keyed`,
      [x.table, this.names.deletedDocuments.documentId],
    ).then(
      ({ rows }) => (rows[0]?.keyed ? 'keyed' : 'appended'),
      (error: unknown) => {
        this.shape = undefined;
        throw error;
      },
    );
    return this.shape;
  }

  /** On a keyed table (an earlier version's), a document deleted again resets its one record to pending. */
  private resetRecord(): string {
    const { x } = this;
    return `ON CONFLICT (${x.documentId}) DO UPDATE
           SET ${x.deletedAt} = EXCLUDED.${x.deletedAt}, ${x.reason} = EXCLUDED.${x.reason}, ${x.openxdsDeletedAt} = NULL`;
  }
}

/**
 * A record insert failed because the table's keys are not what was read: no unique index for
 * `ON CONFLICT` (42P10), or a unique one the plain insert violated (23505; the DELETE raises none).
 */
function shapeChanged(error: unknown): boolean {
  const code = (error instanceof DatabaseError ? error.cause : error) as { code?: unknown } | undefined;
  return code?.code === '42P10' || code?.code === '23505';
}
