import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import type { Pending } from '../../lib/routing/pending';
import { checkPriorities } from '../../lib/routing/priorities';
import { DynamoTenantCounterStore, type TenantCounterStore } from '../../lib/routing/priority/counter-store';
import { defaultMemoryCapacity, RememberingCounterStore } from '../../lib/routing/priority/remembering-store';
import { checks, type TenantPriorityRules, type TenantState } from '../../lib/routing/priority/rules';
import type { RoutableMessage } from '../../lib/routing/routable-message';
import { type BenchDynamo, dynamoReads, dynamoWrites } from './hops';
import type { Row, Table } from './report';
import { seededRandom } from './scenarios';

export interface TenantMixFlags {
  /** Tenant counts; each is run Zipf (s = 1) and uniform as `distributions` says. */
  tenants: number[];
  distributions: ('zipf' | 'uniform')[];
  batch: number;
  /** Events a second the simulated clock advances at. */
  rate: number;
  skipWindowSeconds: number;
  /** Simulated seconds measured on the stores that write every check (their cost does not depend on time). */
  baselineSeconds: number;
  /** Containers taking the batches in turn, each with its own memory. */
  containers: number;
  /** `deployed`: only the store as deployed (container memory, skip window on) on the steady table; default every store. */
  stores?: 'all' | 'deployed';
}

const table = 'TenantCountersTable';

/**
 * DynamoDB requests per event of the router's priority step (checkPriorities, batch by batch as
 * one container runs them) by tenant count and distribution, on a simulated clock of `rate`
 * events a second: the store before (every check one conditional write, the decrement first),
 * the container memory with the skip window off, and on. A cold run starts from an empty table;
 * a steady one from the table 25 minutes of the same traffic leave (computed with the rules,
 * written in, not counted); a store
 * with memory then routes a warm-up as long as what is measured (the skipping one: one window,
 * then the next whole window, so that every tenant's window turns over once as in steady state).
 */
export async function tenantMixCost(
  dynamo: BenchDynamo,
  rules: TenantPriorityRules,
  flags: TenantMixFlags,
  progress: (line: string) => void,
): Promise<Table> {
  const rows: Row[] = [];
  const windowMs = flags.skipWindowSeconds * 1000;
  for (const tenantCount of flags.tenants) {
    for (const distribution of flags.distributions) {
      const old = (): TenantCounterStore => new DynamoTenantCounterStore(dynamo.doc, table, rules);
      const remembering = (skipWindowMs: number) => () =>
        new RememberingCounterStore(new DynamoTenantCounterStore(dynamo.doc, table, rules), rules, {
          skipWindowMs,
          capacity: defaultMemoryCapacity,
        });
      // [table, store, build, warm-up ms, seconds measured]; a cold table has no counters yet, as the issue measured.
      const runs: ['steady' | 'cold', string, () => TenantCounterStore, number, number][] = [
        ['cold', 'before: every check writes, the decrement first', old, 0, flags.baselineSeconds],
        ['cold', 'container memory, skip window off (exact)', remembering(0), 0, flags.baselineSeconds],
        ['steady', 'before: every check writes, the decrement first', old, 0, flags.baselineSeconds],
        [
          'steady',
          'container memory, skip window off (exact)',
          remembering(0),
          flags.baselineSeconds * 1000,
          flags.baselineSeconds,
        ],
        [
          'steady',
          `container memory, skip window ${flags.skipWindowSeconds} s`,
          remembering(windowMs),
          windowMs,
          windowMs / 1000,
        ],
      ];
      const measured = flags.stores === 'deployed' ? runs.slice(-1) : runs;
      for (const [index, [tableState, store, build, warmUpMs, seconds]] of measured.entries()) {
        // Its own tenants: no item of an earlier run is left for one the seeding did not reach.
        const traffic = new Traffic(`mix${tenantCount}${distribution}${index}`, tenantCount, distribution, flags);
        if (tableState === 'steady') await seed(dynamo, traffic, rules);
        const counters = Array.from({ length: flags.containers }, build);
        await traffic.route(counters, warmUpMs);
        await dynamo.reset();
        const events = await traffic.route(counters, seconds * 1000);
        const counts = await dynamo.counts();
        const [writes, reads] = [counts.count(...dynamoWrites), counts.count(...dynamoReads)];
        rows.push({
          tenants: tenantCount,
          distribution,
          table: tableState,
          store,
          'events measured': events,
          'writes per event': writes / events,
          'reads per event': reads / events,
          'tenants per batch (mean)': traffic.tenantsPerBatch(),
        });
        progress(
          `${tenantCount} tenants ${distribution}, ${tableState} table, ${store}: ${writes} writes, ${reads} reads, ${events} events`,
        );
      }
    }
  }
  return {
    title: `Router cost by tenant mix: DynamoDB requests per event of the priority step, SQS batches of ${flags.batch}, ${flags.rate} events/s on ${flags.containers} container(s)`,
    rows,
    notes: [
      'Counted by dynalite. A "cold" run starts from a table with no counters and a new container (what the issue ' +
        'measured: every first check of a tenant is a reset); a "steady" run starts from the counters 25 minutes of ' +
        'the same traffic leave (every tenant saturated once it had 21 checks in that time), written into the table ' +
        'uncounted. "Before" is the store of ' +
        'the base commit (a reset costs a failed decrement and a put). The memory runs first route a warm-up as long ' +
        'as what they measure (the skip window run: one window, then the next whole window is measured). The clock ' +
        'is simulated at the given rate and the batches go to the containers in turn. A saturated tenant costs about ' +
        'one write per window however many containers share it (a container whose window passed reads it first, ' +
        "and skips on another container's recent write), and about one read per container and window; a lower rate " +
        'costs proportionally more per event.',
    ],
  };
}

/** A seeded stream of batches: each event's tenant drawn Zipf (s = 1) or uniformly, the clock at `rate`. */
class Traffic {
  private readonly cumulative: number[];
  private readonly tenantIds: string[];
  private nowMs = Date.UTC(2026, 0, 1);
  private batches = 0;
  private tenantsSeen = 0;

  private readonly random: () => number;

  constructor(
    prefix: string,
    tenants: number,
    distribution: 'zipf' | 'uniform',
    private readonly flags: TenantMixFlags,
  ) {
    // The same draws for every store of a mix: only the tenant ids differ.
    this.random = seededRandom(tenants);
    this.tenantIds = Array.from({ length: tenants }, (_, i) => `${prefix}-${i}`);
    let sum = 0;
    this.cumulative = this.tenantIds.map((_, i) => {
      sum += distribution === 'zipf' ? 1 / (i + 1) : 1;
      return sum;
    });
  }

  /** The next batch's tenants with their checks, in first-seen order, and its time. */
  next(): { nowMs: number; byTenant: Map<string, number> } {
    const byTenant = new Map<string, number>();
    const total = this.cumulative.at(-1)!;
    for (let i = 0; i < this.flags.batch; i++) {
      const tenant = this.tenantIds[lowerBound(this.cumulative, this.random() * total)]!;
      byTenant.set(tenant, (byTenant.get(tenant) ?? 0) + 1);
    }
    this.nowMs += (this.flags.batch / this.flags.rate) * 1000;
    return { nowMs: Math.round(this.nowMs), byTenant };
  }

  /** Routes `ms` of traffic through the router's priority step, a batch to each container in turn; the events routed. */
  async route(containers: TenantCounterStore[], ms: number): Promise<number> {
    let events = 0;
    for (const end = this.nowMs + ms; this.nowMs < end; ) {
      const counters = containers[this.batches % containers.length]!;
      const check = { counters, priorityOf: (level: number) => 10 - level, quietLevel: 1 };
      const { nowMs, byTenant } = this.next();
      const pending = [...byTenant].flatMap(([tenantId, k]) => Array.from({ length: k }, () => pendingOf(tenantId)));
      const failed = await checkPriorities(check, pending, nowMs);
      const [first] = failed.values();
      if (first !== undefined) throw new Error(`${failed.size} priority checks failed`, { cause: first.error });
      events += pending.length;
      this.batches++;
      this.tenantsSeen += byTenant.size;
    }
    return events;
  }

  tenantsPerBatch(): number {
    return this.tenantsSeen / this.batches;
  }
}

/** The table as the rules leave it after one reset interval of this traffic (written in one go, uncounted). */
async function seed(dynamo: BenchDynamo, traffic: Traffic, rules: TenantPriorityRules): Promise<void> {
  const states = new Map<string, TenantState>();
  const start = traffic.next().nowMs;
  for (let batch = traffic.next(); batch.nowMs - start < rules.resetIntervalMs; batch = traffic.next())
    for (const [tenant, k] of batch.byTenant)
      states.set(tenant, checks(states.get(tenant), batch.nowMs, k, rules).state);
  const items = [...states].map(([pk, { count, lastUpdateMs }]) => ({ pk, pendingCount: count, lastUpdateMs }));
  for (let i = 0; i < items.length; i += 25) {
    const requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    await dynamo.doc.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
  }
}

/** A record of a tenant as the router's priority step sees it (only the tenant matters there). */
function pendingOf(tenantId: string): Pending {
  return {
    record: {} as SQSRecord,
    message: { tenantId } as RoutableMessage,
    destination: '',
    bypass: false,
  };
}

/** The first index whose cumulative weight is above `x`. */
function lowerBound(cumulative: number[], x: number): number {
  let [lo, hi] = [0, cumulative.length - 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
