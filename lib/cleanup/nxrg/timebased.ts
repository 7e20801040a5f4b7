import { RecordedDeletes } from './deletion-record';
import type { Deletion, TimeCursor } from './tables';

/** Which document time a retention rule counts from. */
export type RetentionBasis = 'created' | 'service';

/** Documents of one type whose basis time is before the cutoff (past retention). */
export interface ExpiryRule {
  documentType: string;
  basis: RetentionBasis;
  cutoff: Date;
}

/** A keyset range of one type's documents: after `after` (exclusive; null: from the start) through `through` (null: to the cutoff). */
export interface ExpiredRange {
  after: TimeCursor | null;
  through: TimeCursor | null;
}

/** The registry as registry-timebased-cleanup reads and deletes it: documents past their type's retention. */
export class ExpiredDocuments extends RecordedDeletes {
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

  private timeColumn(basis: RetentionBasis): string {
    return basis === 'created' ? this.d.createdAt : this.d.serviceTime;
  }
}
