import type { Pool } from 'pg';
import { RecordedDeletes } from './deletion-record';
import type { NxrgNames } from './names';
import type { Deletion } from './tables';

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

/** The registry as registry-status90-cleanup reads and deletes it: the documents of deceased citizens. */
export class DeceasedDocuments extends RecordedDeletes {
  constructor(
    pool: Pool,
    names: NxrgNames,
    private readonly deceasedStatus = 90,
  ) {
    super(pool, names);
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
}
