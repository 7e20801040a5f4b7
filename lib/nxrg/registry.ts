import type { Pool, QueryResult, QueryResultRow } from 'pg';
import { DatabaseError } from '../errors';
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

/** Which document time a retention rule counts from. */
export type RetentionBasis = 'created' | 'service';

/** Documents of one type whose basis time is before the cutoff (past retention). */
export interface ExpiryRule {
  documentType: string;
  basis: RetentionBasis;
  cutoff: Date;
}

/**
 * A keyset cursor in (time, id) order. `at` is PostgreSQL's own text for the timestamp, so the
 * microseconds a JavaScript Date would drop survive the round trip through the stack.
 */
export interface TimeCursor {
  at: string;
  id: string;
}

/** A keyset range of one type's documents: after `after` (exclusive; null: from the start) through `through` (null: to the cutoff). */
export interface ExpiredRange {
  after: TimeCursor | null;
  through: TimeCursor | null;
}

/** A range of citizens: CPR numbers ending with `digit`, after `after` (exclusive) up to `through`. */
export interface CitizenRange {
  digit: string;
  after: string | null;
  through: string;
}

/**
 * A position in a citizen batch's keyset order (citizen CPR, document id), the order of the
 * (citizen_id, id) index walked citizen by citizen: at the document `id` of `citizen`, or, with `id`
 * null, past every document of `citizen`.
 */
export interface DeceasedCursor {
  citizen: string;
  id: string | null;
}

/** A keyset range of a citizen batch's documents: after `after` (exclusive; null: from the first) through `through` (null: to the last). */
export interface DeceasedRange {
  after: DeceasedCursor | null;
  through: DeceasedCursor | null;
}

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

/**
 * How the deletion table is keyed: `appended` (no unique index on document_id: every deletion
 * appends a record, a document deleted again after a restore gets a second one) or `keyed` (the
 * primary key of an earlier version: a deletion of a document already recorded resets its record).
 */
export type RecordShape = 'appended' | 'keyed';

/** Deletes the copies of the confirmed deletions in OpenXDS (a dry run only finds them); returns those it deleted. */
export type RemoveCopies = (confirmed: string[]) => Promise<string[]>;

/** What a settle did: the records it settled, what OpenXDS deleted, and the key to go on after when it stopped at its limit. */
export interface Settled<K> {
  settled: string[];
  deleted: string[];
  next: K | null;
}

/** How a delete is recorded, or only counted (dry run). */
export interface Deletion {
  reason: string;
  at: Date;
  dryRun: boolean;
}

/**
 * The NXRG registry on PostgreSQL (node-postgres). Every read pages in index order (see
 * infra/sql/nxrg.sql); every delete re-checks its condition in the same statement and writes
 * the deletion record in that statement too, so a document is never gone without its record.
 */
export class NxrgRegistry {
  private readonly d: NxrgNames['documents'];
  private readonly c: NxrgNames['citizens'];
  private readonly x: NxrgNames['deletedDocuments'];
  private shape: Promise<RecordShape> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly names: NxrgNames,
    private readonly deceasedStatus = 90,
  ) {
    this.d = quoteAll(names.documents);
    this.c = quoteAll(names.citizens);
    this.x = quoteAll(names.deletedDocuments);
  }

  /**
   * What is missing or of the wrong type among the tables and columns `columns` names, and, for a job
   * that writes deletion records, a unique index on document_id it cannot work with (empty: all well).
   */
  async schemaProblems(columns: NxrgColumns): Promise<string[]> {
    const tables = (Object.entries(columns) as [keyof NxrgNames, string[]][]).map(([table, keys]) => {
      const names = this.names[table] as Record<string, string>;
      const kinds = nxrgColumnKinds[table] as Record<string, ColumnKind>;
      return {
        table: names.table!,
        setting: `NXRG_NAMES ${table}`,
        columns: Object.fromEntries(keys.map((key) => [key, { name: names[key]!, kind: kinds[key]! }])),
      };
    });
    const problems = await schemaProblems(this.pool, 'NXRG', tables);
    // The jobs that write deletion records (they name `reason`) need a table a second record fits in.
    if (problems.length === 0 && columns.deletedDocuments?.includes('reason')) {
      problems.push(...(await this.recordKeyProblems()));
    }
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
   * The end of the next keyset range of expired documents: the `size`-th document past retention
   * after `after` in (time, id) order, or null when fewer than `size` are left (the range then runs
   * to the cutoff). An index-only walk over at most `size` entries of the type's time index.
   */
  async expiredRangeEnd(rule: ExpiryRule, after: TimeCursor | null, size: number): Promise<TimeCursor | null> {
    const { d } = this;
    const time = this.timeColumn(rule.basis);
    const params: unknown[] = [rule.documentType, rule.cutoff, size - 1];
    let keyset = '';
    if (after) {
      params.push(after.at, after.id);
      keyset = `AND (doc.${time}, doc.${d.id}) > ($4::timestamptz, $5)`;
    }
    // Qualified: a bare ORDER BY name binds to an output column first ("id" to `id::text`), which
    // sorts the walk's entries by text instead of reading them in index order.
    const { rows } = await this.query<{ id: string; at: string }>(
      `SELECT doc.${d.id}::text AS id, doc.${time}::text AS at FROM ${d.table} doc
       WHERE doc.${d.type} = $1 AND doc.${time} < $2 ${keyset}
       ORDER BY doc.${time}, doc.${d.id} OFFSET $3 LIMIT 1`,
      params,
    );
    return rows[0] ?? null;
  }

  /**
   * Deletes the documents in the keyset range (after, through] of `rule`'s type that are, when the
   * delete reaches them, still of that type and still strictly older than the cutoff (a document
   * changed meanwhile is re-checked by the DELETE itself and kept). `through` null: up to the cutoff.
   * Returns what it deleted.
   */
  deleteExpiredRange(rule: ExpiryRule, range: ExpiredRange, deletion: Deletion): Promise<string[]> {
    const { d } = this;
    const time = this.timeColumn(rule.basis);
    const params: unknown[] = [rule.documentType, rule.cutoff];
    const bound = (op: '>' | '<=', cursor: TimeCursor) => {
      params.push(cursor.at, cursor.id);
      return `AND (doc.${time}, doc.${d.id}) ${op} ($${params.length - 1}::timestamptz, $${params.length})`;
    };
    const keyset = `${range.after ? bound('>', range.after) : ''} ${range.through ? bound('<=', range.through) : ''}`;
    return this.deleteWhere(`doc.${d.type} = $1 AND doc.${time} < $2 ${keyset}`, params, deletion);
  }

  /** One page of CPR numbers ending with `digit`, in CPR order after `after`. */
  async citizenPage(digit: string, after: string | null, limit: number): Promise<string[]> {
    const { c } = this;
    const params: unknown[] = [digit, limit];
    if (after !== null) params.push(after);
    const { rows } = await this.query<{ cpr: string }>(
      `SELECT ${c.cpr} AS cpr FROM ${c.table}
       WHERE right(${c.cpr}, 1) = $1 ${after !== null ? `AND ${c.cpr} > $3` : ''}
       ORDER BY right(${c.cpr}, 1), ${c.cpr} LIMIT $2`,
      params,
    );
    return rows.map((r) => r.cpr);
  }

  /**
   * The end of the next keyset range of the documents of the deceased citizens in `citizens`, in
   * (citizen, id) order after `after`: the `size`-th such document, or, when the next `size` deceased
   * citizens hold fewer documents, past the last of those citizens; null when fewer than `size` of
   * either are left (the range then runs to the last). The next deceased citizens are read in CPR
   * order (at most `size`), and their documents by one walk of (citizen_id, id) from the cursor
   * (`= ANY` of their CPRs on the leading column keeps the index order): no sort of the remainder.
   * The limit and the offset are subqueries: not knowing them, the planner plans walks in index order
   * that stop early, as they do (a constant above its row estimate, which it cannot have for the
   * array, makes it read and sort every document of those citizens instead).
   */
  async deceasedRangeEnd(
    citizens: CitizenRange,
    after: DeceasedCursor | null,
    size: number,
  ): Promise<DeceasedCursor | null> {
    const { c, d } = this;
    const params: unknown[] = [size];
    const deceased = this.deceasedCitizens(citizens, { after, through: null }, params);
    const keyset = after === null ? '' : this.documentBound('>', after, params);
    const { rows } = await this.query<{
      citizens: number;
      last: string | null;
      citizen: string | null;
      id: string | null;
    }>(
      `WITH next AS (
         SELECT array_agg(cit.${c.cpr}) AS cprs, count(*)::int AS n, max(cit.${c.cpr}) AS last
         FROM (SELECT cit.${c.cpr} FROM ${c.table} cit WHERE ${deceased} ORDER BY cit.${c.cpr} LIMIT (SELECT $1::int)) cit
       )
       SELECT next.n AS citizens, next.last, doc.citizen, doc.id
       FROM next LEFT JOIN LATERAL (
         SELECT doc.${d.citizenId} AS citizen, doc.${d.id}::text AS id FROM ${d.table} doc
         WHERE doc.${d.citizenId} = ANY(next.cprs) ${keyset}
         ORDER BY doc.${d.citizenId}, doc.${d.id} OFFSET (SELECT $1::int - 1) LIMIT 1
       ) doc ON true`,
      params,
    );
    const end = rows[0];
    if (end && end.citizen !== null && end.id !== null) return { citizen: end.citizen, id: end.id };
    // Fewer than `size` documents among the next `size` deceased citizens: the range ends past them.
    return end?.citizens === size && end.last !== null ? { citizen: end.last, id: null } : null;
  }

  /**
   * Deletes the documents in the keyset range (after, through] whose citizen is in `citizens` and, when
   * the delete reaches them, still deceased: the citizen row is locked (FOR SHARE) by the same
   * statement, so a status change either lands before the check or waits for the delete. `through`
   * null: to the last. Returns what it deleted.
   */
  deleteDeceasedRange(citizens: CitizenRange, documents: DeceasedRange, deletion: Deletion): Promise<string[]> {
    const { c, d } = this;
    const params: unknown[] = [];
    const deceased = this.deceasedCitizens(citizens, documents, params);
    const after = documents.after === null ? '' : this.documentBound('>', documents.after, params);
    const through = documents.through === null ? '' : this.documentBound('<=', documents.through, params);
    return this.deleteWhere(
      `doc.${d.citizenId} IN (SELECT cit.${c.cpr} FROM ${c.table} cit WHERE ${deceased}) ${after} ${through}
       AND ${this.stillDeceased(params)}`,
      params,
      deletion,
    );
  }

  /**
   * Deletes those of `ids` whose citizen is still deceased, re-checked as `deleteDeceasedRange` does.
   * Only for `batch-delete` id lists an earlier version left on a deployed stack.
   */
  deleteOfDeceased(ids: readonly string[], deletion: Deletion): Promise<string[]> {
    const { d } = this;
    if (ids.length === 0) return Promise.resolve([]);
    const params: unknown[] = [ids];
    return this.deleteWhere(`doc.${d.id} = ANY($1) AND ${this.stillDeceased(params)}`, params, deletion);
  }

  /**
   * `cit` is one of the deceased in `range` (read in the statement's snapshot, unlocked) whose
   * documents may fall in `documents`: from the range's first citizen to its last. Adds its parameters.
   */
  private deceasedCitizens(range: CitizenRange, documents: DeceasedRange, params: unknown[]): string {
    const { c } = this;
    const bounds = [
      `right(cit.${c.cpr}, 1) = $${params.push(range.digit)}`,
      `cit.${c.cpr} <= $${params.push(range.through)}`,
    ];
    if (range.after !== null) bounds.push(`cit.${c.cpr} > $${params.push(range.after)}`);
    const { after, through } = documents;
    if (after !== null) bounds.push(`cit.${c.cpr} ${after.id === null ? '>' : '>='} $${params.push(after.citizen)}`);
    if (through !== null) bounds.push(`cit.${c.cpr} <= $${params.push(through.citizen)}`);
    bounds.push(`cit.${c.status} = $${params.push(this.deceasedStatus)}`);
    return bounds.join(' AND ');
  }

  /** `doc` is after (`>`) or at most (`<=`) `cursor` in (citizen, id) order. Adds its parameters. */
  private documentBound(op: '>' | '<=', cursor: DeceasedCursor, params: unknown[]): string {
    const { d } = this;
    const citizen = `$${params.push(cursor.citizen)}`;
    if (cursor.id === null) return `AND doc.${d.citizenId} ${op} ${citizen}`;
    return `AND (doc.${d.citizenId}, doc.${d.id}) ${op} (${citizen}, $${params.push(cursor.id)})`;
  }

  /**
   * The delete-time re-check: `doc`'s citizen is deceased now. FOR SHARE locks the citizen row, so
   * a status change in flight is waited for and then re-evaluated. Adds its parameter.
   */
  private stillDeceased(params: unknown[]): string {
    const { c, d } = this;
    return `EXISTS (SELECT 1 FROM ${c.table} cit WHERE cit.${c.cpr} = doc.${d.citizenId} AND cit.${c.status} = $${params.push(this.deceasedStatus)} FOR SHARE)`;
  }

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
   * records). The two databases cannot share a statement; the lock keeps the condition true until
   * the mark. A crash between the OpenXDS delete and the mark leaves them as they were: the retry
   * finds nothing left in OpenXDS and marks the pending ones.
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
      await client.query('BEGIN');
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
      const deleted = await remove(confirmed);
      if (!deletion.dryRun && rows.length > 0) {
        await client.query(
          `UPDATE ${x.table} SET ${x.openxdsDeletedAt} = $2
           WHERE ctid = ANY($1::tid[]) AND (${x.openxdsDeletedAt} IS NULL OR ${x.documentId} = ANY($3))`,
          [rows.map((r) => r.row), deletion.at, deleted],
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

  /**
   * Deletes the documents that meet `where` ($1… are `params`; the document is `doc`) and records
   * each in the deletion table in the same statement. A dry run selects with the same condition
   * and changes nothing.
   */
  private async deleteWhere(where: string, params: unknown[], deletion: Deletion): Promise<string[]> {
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

  /** A keyset bound on a deletion record `rec` in (`time`, document_id) order; pushes its two parameters. */
  private keyBound(time: string, op: '>' | '<=', cursor: TimeCursor, params: unknown[]): string {
    const { x } = this;
    params.push(cursor.at, cursor.id);
    return `AND (rec.${time}, rec.${x.documentId}) ${op} ($${params.length - 1}::timestamptz, $${params.length})`;
  }

  /** A statement on the registry; its errors name NXRG and NXRG_DATABASE_URL. */
  private query<R extends QueryResultRow>(sql: string, params: unknown[]): Promise<QueryResult<R>> {
    return DatabaseError.wrap('NXRG', () => this.pool.query<R>(sql, params));
  }

  private timeColumn(basis: RetentionBasis): string {
    return basis === 'created' ? this.d.createdAt : this.d.serviceTime;
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
