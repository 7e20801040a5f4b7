/** The fleet bench's arithmetic: tenant mixes, executions in flight, idle time, listings and prices. */

/** List prices the costs are computed with (us-east-1, on-demand, the figures). */
export const PRICES = {
  lambdaPerMillionRequests: 0.2,
  lambdaPerGbSecond: 0.0000166667,
  dynamoPerMillionWrites: 0.625,
  dynamoPerMillionReads: 0.125,
  sqsPerMillionRequests: 0.4,
} as const;

export const PRICES_STATED =
  'Lambda $0.20 per 1M requests and $0.0000166667 per GB-s; DynamoDB on-demand $0.625 per 1M write and ' +
  '$0.125 per 1M read request units; SQS $0.40 per 1M requests';

/** What a path used over a window: Lambda invocations and billed GB-s, DynamoDB requests, SQS requests. */
export interface Usage {
  invocations: number;
  gbSeconds: number;
  dynamoWrites: number;
  dynamoReads: number;
  sqsRequests: number;
}

export const noUsage: Usage = { invocations: 0, gbSeconds: 0, dynamoWrites: 0, dynamoReads: 0, sqsRequests: 0 };

export function addUsage(...usages: Usage[]): Usage {
  const sum = { ...noUsage };
  for (const usage of usages) for (const key of Object.keys(sum) as (keyof Usage)[]) sum[key] += usage[key];
  return sum;
}

/** US$ of `usage` at list prices; a request unit is counted per request (items under 1 KB, no transactions). */
export function dollars(usage: Usage): number {
  return (
    (usage.invocations * PRICES.lambdaPerMillionRequests +
      usage.dynamoWrites * PRICES.dynamoPerMillionWrites +
      usage.dynamoReads * PRICES.dynamoPerMillionReads +
      usage.sqsRequests * PRICES.sqsPerMillionRequests) /
      1e6 +
    usage.gbSeconds * PRICES.lambdaPerGbSecond
  );
}

/** US$ per million messages when `usage` carried `messages`. */
export function perMillion(usage: Usage, messages: number): number {
  return messages === 0 ? 0 : (dollars(usage) * 1e6) / messages;
}

/** US$ a 30-day month, for each of `targets`, at the rate `usage` cost over `windowMs`. */
export function monthlyPerTarget(usage: Usage, windowMs: number, targets: number): number {
  return monthlyPerTargetOf(dollars(usage), windowMs, targets);
}

/** Where `monthlyPerTarget` goes: GB-s, DynamoDB and invocations, each a month per target. */
export function costParts(usage: Usage, windowMs: number, targets: number): string {
  const part = (of: Partial<Usage>) => `$${monthlyPerTarget({ ...noUsage, ...of }, windowMs, targets).toFixed(2)}`;
  return [
    `GB-s ${part({ gbSeconds: usage.gbSeconds })}`,
    `DynamoDB ${part({ dynamoWrites: usage.dynamoWrites, dynamoReads: usage.dynamoReads })}`,
    `invocations ${part({ invocations: usage.invocations })}`,
  ].join(', ');
}

/** US$ a 30-day month, for each of `targets`, at the rate of `dollarsInWindow` over `windowMs`. */
export function monthlyPerTargetOf(dollarsInWindow: number, windowMs: number, targets: number): number {
  return windowMs <= 0 || targets <= 0 ? 0 : (dollarsInWindow * (30 * 86_400_000)) / windowMs / targets;
}

/** Billed GB-s of one invocation: its duration rounded up to the millisecond, at `memoryMb`. */
export const gbSeconds = (durationMs: number, memoryMb: number): number =>
  (Math.ceil(durationMs) / 1000) * (memoryMb / 1024);

/**
 * Executions in flight over time: call `started` and `ended` as handler runs begin and end; `max`
 * and the time-weighted `mean` since `reset` (or construction).
 */
export class InFlight {
  private current = 0;
  private peak = 0;
  private area = 0;
  private since: number;
  private last: number;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.since = now();
    this.last = this.since;
  }

  private advance() {
    const at = this.now();
    this.area += this.current * (at - this.last);
    this.last = at;
  }

  started() {
    this.advance();
    this.current++;
    this.peak = Math.max(this.peak, this.current);
  }

  ended() {
    this.advance();
    this.current--;
  }

  /** Starts a new window: the peak is what runs now. */
  reset() {
    this.advance();
    this.area = 0;
    this.since = this.last;
    this.peak = this.current;
  }

  read(): { max: number; mean: number; now: number } {
    this.advance();
    const span = this.last - this.since;
    return { max: this.peak, mean: span > 0 ? this.area / span : this.current, now: this.current };
  }
}

/**
 * Each target's idle share while it has staged work, from samples: of the samples where the target's
 * staging queues held messages, those where its workers had nothing in hand.
 */
export class IdleWhileStaged {
  private readonly staged = new Map<string, number>();
  private readonly idle = new Map<string, number>();

  sample(target: string, stagedMessages: number, inHand: number) {
    if (stagedMessages <= 0) return;
    this.staged.set(target, (this.staged.get(target) ?? 0) + 1);
    if (inHand === 0) this.idle.set(target, (this.idle.get(target) ?? 0) + 1);
  }

  /** Target → idle fraction, for the targets that ever had staged work. */
  fractions(): Map<string, number> {
    return new Map([...this.staged].map(([target, n]) => [target, (this.idle.get(target) ?? 0) / n]));
  }

  samples(target: string): number {
    return this.staged.get(target) ?? 0;
  }
}

/**
 * Whether a management API request is a listing of the vhost's queues (its first page when paged):
 * `GET /api/queues/<vhost>`, not a queue of it and not another page of the same listing.
 */
export function isVhostListing(url: string, vhost: string): boolean {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/\/+$/, '');
  if (path !== `/api/queues/${encodeURIComponent(vhost)}`) return false;
  const page = parsed.searchParams.get('page');
  return page === null || page === '1';
}

/**
 * Cumulative weights of tenants 0 … n−1: Zipf with exponent `s` (tenant i weighs 1/(i+1)^s), or
 * uniform when `s` is 0. Pick with `pick`.
 */
export function tenantWeights(n: number, s: number): number[] {
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += 1 / (i + 1) ** s;
    cumulative.push(total);
  }
  return cumulative.map((w) => w / total);
}

/** The index `cumulative` gives the uniform draw `u` in [0, 1). */
export function pick(cumulative: readonly number[], u: number): number {
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cumulative[middle]! > u) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The `q` quantile (nearest rank) of `values`; 0 for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * SQS batches as an event source mapping makes them: every `windowMs` what arrived since, in
 * batches of at most `batchSize` (serverless.yml's batchSize and maximumBatchingWindow).
 */
export function sqsBatches<T>(arrived: readonly T[], batchSize: number): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < arrived.length; i += batchSize) batches.push(arrived.slice(i, i + batchSize));
  return batches;
}

/** The parts of a DynamoDB JSON request that say which item it touches and why. */
export interface DynamoRequestBody {
  TableName?: string;
  Key?: { pk?: { S?: string } };
  Item?: { pk?: { S?: string } };
  UpdateExpression?: string;
  ConditionExpression?: string;
}

/** What a work-board update is, from its expressions (lib/work-board/work-board-store.ts). */
function boardUpdate({ UpdateExpression: update = '', ConditionExpression: condition }: DynamoRequestBody): string {
  if (update.includes('listedAt')) return 'take listing';
  if (/^SET #e = /.test(update)) return 'claim slot';
  if (update.startsWith('REMOVE #e')) return condition ? 'leave' : 'hand off';
  if (update.includes('SET starting = :until REMOVE #e')) return 'hand off to a successor';
  if (update.startsWith('SET starting')) return 'mark starting';
  if (update.startsWith('REMOVE starting')) return 'clear starting';
  if (update.includes('#s0')) return 'write served';
  if (update.includes('version = if_not_exists')) return 'request';
  return 'other update';
}

/**
 * Which item kind a DynamoDB request touches: its table and its key's kind (the `pk` up to `#`:
 * `lease#`, `rotation#`…; a single-item key such as `work-board` whole, with a board update's
 * purpose). Items keyed by a name of their own (the staging registry's targets, tenants) count as one kind.
 */
export function dynamoRequestKind(operation: string, body: DynamoRequestBody): string {
  const table = body.TableName ?? '?';
  const pk = body.Key?.pk?.S ?? body.Item?.pk?.S;
  const hash = pk?.indexOf('#') ?? -1;
  let kind = pk === undefined ? operation.toLowerCase() : hash >= 0 ? pk.slice(0, hash + 1) : pk;
  if (table !== 'DistributorStateTable' && hash < 0 && pk !== undefined) kind = 'item';
  if (pk === 'work-board' && operation === 'UpdateItem') kind += `: ${boardUpdate(body)}`;
  return `${table} ${kind}`;
}

/** DynamoDB requests' list price in US$ (one request unit each: items under 1 KB). */
export function dynamoRequestDollars(write: boolean, requests: number): number {
  return (requests * (write ? PRICES.dynamoPerMillionWrites : PRICES.dynamoPerMillionReads)) / 1e6;
}

/** Executions grouped by how they ended: how many, their rounds and their time. */
export function executionEndings(
  executions: readonly { ending: string; rounds: number; targetPasses: number; durationMs: number }[],
): { ending: string; executions: number; rounds: number; targetPasses: number; durationMs: number }[] {
  const by = new Map<
    string,
    { ending: string; executions: number; rounds: number; targetPasses: number; durationMs: number }
  >();
  for (const e of executions) {
    const entry = by.get(e.ending) ?? { ending: e.ending, executions: 0, rounds: 0, targetPasses: 0, durationMs: 0 };
    entry.executions++;
    entry.rounds += e.rounds;
    entry.targetPasses += e.targetPasses;
    entry.durationMs += e.durationMs;
    by.set(e.ending, entry);
  }
  return [...by.values()].sort((a, b) => b.executions - a.executions || a.ending.localeCompare(b.ending));
}
