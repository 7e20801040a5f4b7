import { DatabaseError } from '../../platform/errors';
import { type Deletion, NxrgTables, type TimeCursor } from './tables';

/** A keyset range of pending deletions in (deleted_at, document_id) order: after `after` (exclusive; null: from the start) through `through`. */
export interface PendingRange {
  after: TimeCursor | null;
  through: TimeCursor;
}

/**
 * A keyset range of deletions marked done, in (openxds_deleted_at, document_id) order (the order of
 * the done index, which a mark joins at its right edge): after `after` (exclusive; null: from the
 * start) through `through`.
 */
export interface DoneRange {
  after: TimeCursor | null;
  through: TimeCursor;
}

/** A range of done deletions in document id order: only the `resettle` items an earlier version left on a deployed stack. */
export interface DoneIdRange {
  after: string | null;
  through: string;
}

/** Those of `ids` that NXRG does not hold now (read afresh, after whatever the caller waited for). */
export type StillDeleted = (ids: readonly string[]) => Promise<string[]>;

/**
 * Deletes the copies of the confirmed deletions in OpenXDS (a dry run only finds them) and returns
 * those it deleted. Deleting is irreversible, so it deletes only what `stillDeleted` confirms once
 * the copies are locked in OpenXDS: a document restored in NXRG while the delete waited keeps its copy.
 */
export type RemoveCopies = (confirmed: string[], stillDeleted: StillDeleted) => Promise<string[]>;

/** What a settle did: the records it settled, what OpenXDS deleted, and the key to go on after when it stopped at its limit. */
export interface Settled<K> {
  settled: string[];
  deleted: string[];
  next: K | null;
}

/**
 * The registry's deletion records as repository-cleanup reads and settles them: the deletions not yet
 * done in OpenXDS (pending), those marked done (for the recheck), and the settle that deletes their
 * copies in OpenXDS while the records stay locked.
 */
export class RepositoryDeletions extends NxrgTables {
  /**
   * The end of the next page of deletions not yet done in OpenXDS after `after`, in (deleted_at,
   * document_id) order (the order of the pending index, which new records join at its right edge):
   * the `size`-th such deletion, or the last when fewer are left (`full` false); null when none is.
   * An index-only walk over at most `size` entries of the pending index (`OFFSET size − 1`); only
   * when it falls short, one entry read backwards from the right edge.
   */
  async pendingRangeEnd(
    after: TimeCursor | null,
    size: number,
  ): Promise<{ through: TimeCursor; full: boolean } | null> {
    const { x } = this;
    const params: unknown[] = [size - 1];
    const pending = `FROM ${x.table} rec
      WHERE rec.${x.openxdsDeletedAt} IS NULL ${after ? this.keyBound(x.deletedAt, '>', after, params) : ''}`;
    const key = `rec.${x.documentId}::text AS id, rec.${x.deletedAt}::text AS at`;
    const { rows } = await this.query<TimeCursor & { full: boolean }>(
      `(SELECT ${key}, true AS full ${pending} ORDER BY rec.${x.deletedAt}, rec.${x.documentId} OFFSET $1 LIMIT 1)
       UNION ALL
       (SELECT ${key}, false AS full ${pending} ORDER BY rec.${x.deletedAt} DESC, rec.${x.documentId} DESC LIMIT 1)
       LIMIT 1`,
      params,
    );
    const end = rows[0];
    return end ? { through: { id: end.id, at: end.at }, full: end.full } : null;
  }

  /**
   * One page of the deletions marked done after `after`, in (openxds_deleted_at, document_id) order
   * (the done index's): the recheck asks OpenXDS whether a copy came back (a restore, a re-upload)
   * since. A document deleted again after a restore may appear twice (one record per deletion).
   */
  async doneRepositoryPage(after: TimeCursor | null, limit: number): Promise<TimeCursor[]> {
    const { x } = this;
    const params: unknown[] = [limit];
    const { rows } = await this.query<TimeCursor>(
      `SELECT rec.${x.documentId}::text AS id, rec.${x.openxdsDeletedAt}::text AS at FROM ${x.table} rec
       WHERE rec.${x.openxdsDeletedAt} IS NOT NULL ${after ? this.keyBound(x.openxdsDeletedAt, '>', after, params) : ''}
       ORDER BY rec.${x.openxdsDeletedAt}, rec.${x.documentId} LIMIT $1`,
      params,
    );
    return rows;
  }

  /**
   * Settles the deletions pending in the keyset range (after, through] of (deleted_at, document_id)
   * order, at most `limit` of them (a range can grow after it was paged: `next` is then the key to
   * go on after, null when the range is done). See {@link settle} for what settling guarantees.
   */
  async settlePendingRange(
    range: PendingRange,
    limit: number,
    deletion: Pick<Deletion, 'at' | 'dryRun'>,
    remove: RemoveCopies,
  ): Promise<Settled<TimeCursor>> {
    return this.settleKeyset(this.x.deletedAt, 'IS NULL', range, limit, deletion, remove);
  }

  /**
   * Settles again the deletions marked done in the keyset range (after, through] of
   * (openxds_deleted_at, document_id) order, at most `limit` of them (`next`: the key to go on after):
   * the recheck found copies of some back in OpenXDS. Those it deletes are marked anew, which moves
   * them past the range's end (to the right edge of the done index).
   */
  async settleDoneRange(
    range: DoneRange,
    limit: number,
    deletion: Pick<Deletion, 'at' | 'dryRun'>,
    remove: RemoveCopies,
  ): Promise<Settled<TimeCursor>> {
    return this.settleKeyset(this.x.openxdsDeletedAt, 'IS NOT NULL', range, limit, deletion, remove);
  }

  /** Settles the records in `state` (pending: `IS NULL`) in a keyset range of (`time`, document_id) order. */
  private async settleKeyset(
    time: string,
    state: 'IS NULL' | 'IS NOT NULL',
    range: { after: TimeCursor | null; through: TimeCursor },
    limit: number,
    deletion: Pick<Deletion, 'at' | 'dryRun'>,
    remove: RemoveCopies,
  ): Promise<Settled<TimeCursor>> {
    const { x } = this;
    const params: unknown[] = [];
    const keyset = `${range.after ? this.keyBound(time, '>', range.after, params) : ''} ${this.keyBound(time, '<=', range.through, params)}`;
    const where = `rec.${x.openxdsDeletedAt} ${state} ${keyset}`;
    const { settled, deleted } = await this.settle(where, params, time, limit, deletion, remove);
    const last = settled.at(-1);
    // Keys need not be unique (a document's records may share one): records after a duplicate the
    // limit split are the same document's, whose copy this round deleted.
    const more = settled.length === limit && (last?.at !== range.through.at || last.id !== range.through.id);
    return { settled: settled.map((r) => r.id), deleted, next: more ? last! : null };
  }

  /**
   * {@link settleDoneRange} for a range of document ids: the `resettle` items an earlier version
   * left on a deployed stack. Without the primary key on document_id the range is found by reading
   * every done deletion (the done index or the table) and sorting those in range: slower, but the
   * same records and the same re-checks.
   */
  async settleDoneIdRange(
    range: DoneIdRange,
    limit: number,
    deletion: Pick<Deletion, 'at' | 'dryRun'>,
    remove: RemoveCopies,
  ): Promise<Settled<string>> {
    const { x } = this;
    const params: unknown[] = [range.through];
    if (range.after !== null) params.push(range.after);
    const { settled, deleted } = await this.settle(
      `rec.${x.openxdsDeletedAt} IS NOT NULL AND rec.${x.documentId} <= $1 ${range.after !== null ? `AND rec.${x.documentId} > $2` : ''}`,
      params,
      null,
      limit,
      deletion,
      remove,
    );
    const last = settled.at(-1)?.id;
    return {
      settled: settled.map((r) => r.id),
      deleted,
      next: settled.length === limit && last !== range.through ? last! : null,
    };
  }

  /**
   * Settles those of `ids` that are still deleted in NXRG, whether or not marked done: the id lists
   * of `batch-delete` operations an earlier version left on a deployed stack. Without the primary
   * key on document_id this reads the whole deletion table once per call.
   */
  async settleRepositoryDeletions(
    ids: readonly string[],
    deletion: Pick<Deletion, 'at' | 'dryRun'>,
    remove: RemoveCopies,
  ): Promise<string[]> {
    const { x } = this;
    const { deleted } = await this.settle(`rec.${x.documentId} = ANY($1)`, [ids], null, null, deletion, remove);
    return deleted;
  }

  /**
   * Runs `remove` (the OpenXDS delete; it returns what it deleted) on the deletion records that meet
   * `where` ($1… are `params`; the record is `rec`) and are still deleted in NXRG (no document of that
   * id in the registry again), in (`time`, document_id) order (`time` null: document_id order; the
   * keys returned carry `time`), at most `limit` (null: all), holding those records locked
   * meanwhile; then (unless a dry run) marks them done: those that were pending, and those whose copy
   * it deleted (a copy that came back is marked anew). The mark finds the locked rows by their tuple
   * id, which the lock keeps fixed, so it needs no index on document_id (a document may have several
   * records). The two databases cannot share a statement, and no lock in NXRG can keep a document
   * row from being inserted again (a restore), so `remove` asks `stillDeleted` once it holds the
   * copies' rows in OpenXDS, after any wait for them: a document back in NXRG by then keeps its copy,
   * and its records are left as they were (docs/cleanup.md, "A restore during the delete"). The
   * record locks keep a restore that undoes a record waiting until the mark. A crash between the
   * OpenXDS delete and the mark leaves them as they were: the retry finds nothing left in OpenXDS
   * and marks the pending ones.
   */
  private async settle(
    where: string,
    params: unknown[],
    time: string | null,
    limit: number | null,
    deletion: Pick<Deletion, 'at' | 'dryRun'>,
    remove: RemoveCopies,
  ): Promise<{ settled: TimeCursor[]; deleted: string[] }> {
    const { d, x } = this;
    const client = await DatabaseError.wrap('NXRG', () => this.pool.connect());
    try {
      // Read committed whatever the database's default: the re-check below must see restores
      // committed after this transaction began.
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const { rows } = await client.query<TimeCursor & { row: string }>(
        `SELECT rec.${x.documentId}::text AS id, rec.${time ?? x.deletedAt}::text AS at, rec.ctid::text AS row
         FROM ${x.table} rec
         WHERE ${where}
           AND NOT EXISTS (SELECT 1 FROM ${d.table} doc WHERE doc.${d.id} = rec.${x.documentId})
         ORDER BY ${time ? `rec.${time}, ` : ''}rec.${x.documentId} LIMIT $${params.length + 1}
         FOR UPDATE OF rec`,
        [...params, limit],
      );
      const confirmed = [...new Set(rows.map((r) => r.id))];
      const restored = new Set<string>();
      const deleted = await remove(confirmed, async (ids) => {
        if (ids.length === 0) return [];
        const back = await DatabaseError.wrap('NXRG', () =>
          client.query<{ id: string }>(
            `SELECT doc.${d.id}::text AS id FROM ${d.table} doc WHERE doc.${d.id} = ANY($1)`,
            [ids],
          ),
        );
        for (const { id } of back.rows) restored.add(id);
        return ids.filter((id) => !restored.has(id));
      });
      const marked = rows.filter((r) => !restored.has(r.id));
      if (!deletion.dryRun && marked.length > 0) {
        await client.query(
          `UPDATE ${x.table} SET ${x.openxdsDeletedAt} = $2
           WHERE ctid = ANY($1::tid[]) AND (${x.openxdsDeletedAt} IS NULL OR ${x.documentId} = ANY($3))`,
          [marked.map((r) => r.row), deletion.at, deleted],
        );
      }
      await client.query('COMMIT');
      return { settled: rows.map(({ id, at }) => ({ id, at })), deleted };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error instanceof DatabaseError ? error : new DatabaseError('NXRG', error);
    } finally {
      client.release();
    }
  }

  /** A keyset bound on a deletion record `rec` in (`time`, document_id) order; pushes its two parameters. */
  private keyBound(time: string, op: '>' | '<=', cursor: TimeCursor, params: unknown[]): string {
    const { x } = this;
    params.push(cursor.at, cursor.id);
    return `AND (rec.${time}, rec.${x.documentId}) ${op} ($${params.length - 1}::timestamptz, $${params.length})`;
  }
}
