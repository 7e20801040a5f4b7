import type { FirstTry, StoredCheck, TenantCounterStore } from './counter-store';
import { type CheckResult, countsFrom, type TenantPriorityRules, type TenantState } from './rules';

/** The shared counters, told which conditional write to try first (DynamoTenantCounterStore). */
export interface WritingCounterStore {
  check(tenantId: string, k: number, nowMs: number, firstTry: FirstTry): Promise<StoredCheck>;
  /** The counter as some recent write left it (a read may lag the latest writes). */
  peek(tenantId: string): Promise<TenantState | undefined>;
}

export interface CounterMemoryOptions {
  /**
   * How long after this container's last write of a saturated tenant its checks are answered
   * without a write; 0: every check writes, and every level is exactly the rules'.
   */
  skipWindowMs: number;
  /** Tenants a container remembers; the least recently checked is forgotten first. */
  capacity: number;
}

export const defaultMemoryCapacity = 10_000;

interface Remembered {
  /** The stored clock as this container last wrote or read it. */
  writtenMs: number;
  /** The count that write or read showed, less the checks answered here since (not other containers'). */
  count: number;
}

/**
 * One container's memory of the tenants it checked, in front of the shared counters (SPEC §1),
 * to spend fewer DynamoDB writes (docs/router.md, "Tenant counters"):
 *
 * - Which write to try first. A failed conditional write costs a write too, so a tenant this
 *   container wrote within the interval gets the decrement first, one it wrote longer ago the
 *   reset; for a tenant it does not remember it guesses what most such tenants lately needed.
 *   Only the order changes: the conditions, and so the levels, are the store's.
 * - Saturated tenants. Once a write leaves the count below the lowest threshold, every later
 *   check gives that same lowest level until a reset. A reset needs more than the interval R
 *   since the tenant's last check; within the skip window M < R after this container's write at
 *   W, every check (by any container, on clocks that agree) is within R of W, so none resets and
 *   a check at s in [W, W + M] can be answered here, exactly, without a write.
 * - Other containers' writes. When its window has passed, a container reads the tenant before
 *   writing it: a read costs a tenth of a write, and if another container wrote the tenant at
 *   W' ≥ s − M and left it saturated, the same argument holds from W', so the check is answered
 *   without a write. A read that lags shows an older write, which only narrows the window. So
 *   however many containers share a tenant, it costs about one write per window, not one each.
 *
 * What the skip costs: the stored clock (the last write) may lag the tenant's true last check by
 * up to M. A check at t with t − stored > R resets, as before; when the true last check was
 * within R of t, the rules would not have. So a saturated tenant may be restored after a
 * silence longer than R − M instead of R (never later than the rules, never for a tenant that is
 * not saturated; clocks that disagree widen that by their skew, either way). No store can avoid that without writing every check: a container that skipped
 * and was then frozen leaves the table as it would be had the check not happened. M = 0 turns
 * the skip off.
 */
export class RememberingCounterStore implements TenantCounterStore {
  private readonly memory = new Map<string, Remembered>();
  /**
   * How many of the tenants this container did not remember were missing or expired, lately (a
   * moving average). It starts at 0, the decrement first, as the store alone does: in a busy
   * system most tenants a new container meets are fresh. A majority and not the last one decides,
   * because containers that share new tenants meet some missing and some just created.
   */
  private unknownResetShare = 0;
  /** Every count below this gives the same level: the lowest threshold's. */
  private readonly saturatedBelow: number;

  constructor(
    private readonly store: WritingCounterStore,
    private readonly rules: TenantPriorityRules,
    private readonly options: CounterMemoryOptions = { skipWindowMs: 0, capacity: defaultMemoryCapacity },
  ) {
    const { skipWindowMs, capacity } = options;
    if (!Number.isInteger(skipWindowMs) || skipWindowMs < 0 || skipWindowMs >= rules.resetIntervalMs)
      throw new RangeError(`skipWindowMs must be an integer in [0, resetIntervalMs), got ${skipWindowMs}`);
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.saturatedBelow = Math.min(...rules.thresholds.map((t) => t.below));
  }

  async check(tenantId: string, k: number, nowMs: number): Promise<CheckResult> {
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`check: k must be a positive integer, got ${k}`);
    const known = this.memory.get(tenantId);
    if (known !== undefined && this.answersAlone(known, nowMs)) return this.answerAlone(tenantId, known, k, nowMs);
    if (known !== undefined && this.mayRead(known, nowMs)) {
      const stored = await this.store.peek(tenantId);
      known.writtenMs = stored?.lastUpdateMs ?? Number.NEGATIVE_INFINITY;
      known.count = stored?.count ?? 0;
      if (this.answersAlone(known, nowMs)) return this.answerAlone(tenantId, known, k, nowMs);
    }
    const firstTry: FirstTry =
      known === undefined
        ? this.unknownResetShare > 0.5
          ? 'reset'
          : 'decrement'
        : nowMs - known.writtenMs > this.rules.resetIntervalMs
          ? 'reset'
          : 'decrement';
    const { reset, ...result } = await this.store.check(tenantId, k, nowMs, firstTry);
    // Slow to move: a batch's mispredicted checks take two writes, so they are the last to answer.
    if (known === undefined) this.unknownResetShare += ((reset ? 1 : 0) - this.unknownResetShare) / 32;
    this.remember(tenantId, { writtenMs: nowMs, count: result.state.count });
    return result;
  }

  /** How many tenants this container remembers (bounded by the capacity). */
  get remembered(): number {
    return this.memory.size;
  }

  private answerAlone(tenantId: string, known: Remembered, k: number, nowMs: number): CheckResult {
    this.remember(tenantId, known);
    const result = countsFrom(known.count - 1, k, nowMs, this.rules);
    known.count = result.state.count;
    return result;
  }

  /** Saturated when last seen, its window passed, and not so long ago that it must have expired. */
  private mayRead(known: Remembered, nowMs: number): boolean {
    const sinceWrite = nowMs - known.writtenMs;
    return (
      this.options.skipWindowMs > 0 &&
      known.count < this.saturatedBelow &&
      sinceWrite > this.options.skipWindowMs &&
      sinceWrite <= this.rules.resetIntervalMs
    );
  }

  private answersAlone(known: Remembered, nowMs: number): boolean {
    // Not even within the same millisecond when M = 0: another container's clock may have set the stored one back.
    const sinceWrite = nowMs - known.writtenMs;
    const { skipWindowMs } = this.options;
    return skipWindowMs > 0 && known.count < this.saturatedBelow && sinceWrite >= 0 && sinceWrite <= skipWindowMs;
  }

  /** Most recently checked last, so the first key is the one to forget. */
  private remember(tenantId: string, entry: Remembered): void {
    this.memory.delete(tenantId);
    this.memory.set(tenantId, entry);
    if (this.memory.size > this.options.capacity) this.memory.delete(this.memory.keys().next().value!);
  }
}
