import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { seededRandom } from '../../../lib/cleanup/engine/random';
import { DynamoTenantCounterStore } from '../../../lib/routing/priority/counter-store';
import { RememberingCounterStore } from '../../../lib/routing/priority/remembering-store';
import {
  type CheckResult,
  checks,
  defaultRules,
  isExpired,
  type TenantPriorityRules,
  type TenantState,
} from '../../../lib/routing/priority/rules';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

/**
 * The router's counters (a RememberingCounterStore per container, one real dynalite table shared
 * by all) against SPEC §1's rules (`checks()`), check for check, on random traffic: batches of
 * several tenants checked in parallel as the router does, on several containers, with clocks that
 * jump to either side of the reset edge. With the skip window off every level must be the rules';
 * with it on, the only difference allowed is the documented one (docs/router.md, "Tenant counters").
 */

const table = 'TenantCountersTable';
const t0 = Date.UTC(2026, 0, 1);
const minute = 60_000;

/** Sinks fast, so that tenants saturate within a few batches and the skip is exercised often. */
const steepRules: TenantPriorityRules = {
  resetIntervalMs: 20 * minute,
  thresholds: [
    { below: -6, level: 4 },
    { below: -3, level: 3 },
    { below: -1, level: 2 },
  ],
  quietLevel: 1,
};

interface Run {
  seed: number;
  rules: TenantPriorityRules;
  skipWindowMs: number;
  /** Each container's clock is off the true one by up to this much, either way. */
  skewMs: number;
  containers: number;
  /** Tenants each container remembers (small: forgetting is part of the traffic). */
  capacity: number;
  tenants: number;
  batches: number;
}

interface Outcome {
  checks: number;
  writes: number;
  /** Checks at the documented edge: reset where the rules would not have, or (by clock skew) the other way. */
  edges: { early: number; late: number };
  /** Every other difference from the rules: must stay empty. */
  mismatches: string[];
}

/** Counts the conditional writes the stores send, passing every request on. */
function countingClient(doc: DynamoDBDocumentClient) {
  const counter = { writes: 0 };
  const client = {
    send: (command: object) => {
      if (['PutCommand', 'UpdateCommand'].includes(command.constructor.name)) counter.writes++;
      return doc.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
  return { client, counter };
}

let dynamo: EmbeddedDynamo;
beforeAll(async () => {
  dynamo = await startDynamo();
  await dynamo.createTables();
});
afterAll(() => dynamo?.stop());

describe('tenant counters against the rules, check for check', () => {
  async function differential(run: Run): Promise<Outcome> {
    const random = seededRandom(run.seed);
    const { rules, skipWindowMs: m } = run;
    const r = rules.resetIntervalMs;
    const saturatedBelow = Math.min(...rules.thresholds.map((t) => t.below));
    const { client, counter } = countingClient(dynamo.doc);
    const containers = Array.from({ length: run.containers }, () => ({
      store: new RememberingCounterStore(new DynamoTenantCounterStore(client, table, rules), rules, {
        skipWindowMs: m,
        capacity: run.capacity,
      }),
      skewMs: Math.round((random() * 2 - 1) * run.skewMs),
    }));
    const tenantIds = Array.from({ length: run.tenants }, (_, i) => `run${run.seed}-${m}-tenant${i}`);
    // Zipf-like: a few busy tenants that saturate, a tail of quiet ones.
    let sum = 0;
    const cumulative = tenantIds.map((_, i) => (sum += 1 / (i + 1)));
    const pickTenant = () => {
      const x = random() * sum;
      return tenantIds[cumulative.findIndex((c) => x < c)] ?? tenantIds[0]!;
    };
    const oracle = new Map<string, TenantState>();
    const outcome: Outcome = { checks: 0, writes: 0, edges: { early: 0, late: 0 }, mismatches: [] };
    let now = t0;

    for (let b = 0; b < run.batches; b++) {
      const jump = random();
      const someone = oracle.get(pickTenant());
      if (jump < 0.04 && someone !== undefined) {
        // To either side of one tenant's reset edge, and of the edge less the skip window.
        const offsets = [-m - 1, -m, -m + 1, -1, 0, 1, m, m + 1, Math.round((random() * 4 - 2) * (m || minute))];
        offsets.push(-Math.round((random() * r) / 2)); // deeper within the interval: a lag longer than M shows there
        now = Math.max(now, someone.lastUpdateMs + r + offsets[Math.floor(random() * offsets.length)]!);
      } else if (jump < 0.05) {
        now += Math.round(r * (1 + random() * 2));
      } else {
        now += Math.round(random() * (m > 0 ? m / 8 : minute));
      }
      const container = containers[Math.floor(random() * containers.length)]!;
      const nowMs = now + container.skewMs;
      const batch = new Map<string, number>();
      for (let i = 1 + Math.floor(random() * 6); i > 0; i--) {
        const tenant = pickTenant();
        batch.set(tenant, (batch.get(tenant) ?? 0) + 1 + Math.floor(random() * 4));
      }
      // In parallel, as the router checks a batch's tenants.
      const results = await Promise.all(
        [...batch].map(async ([tenant, k]) => [tenant, k, await container.store.check(tenant, k, nowMs)] as const),
      );
      for (const [tenant, k, got] of results) {
        outcome.checks += k;
        const before = oracle.get(tenant);
        const expected = checks(before, nowMs, k, rules);
        oracle.set(tenant, expected.state);
        if (sameLevels(got, expected)) continue;
        // The documented edge, for a saturated tenant only: reset after a silence of more than
        // R − M − skew where the rules would not; or, a skipped check on a clock behind the
        // table's, not reset after a silence of at most R + skew where the rules would.
        const gap = before === undefined ? Number.NaN : nowMs - before.lastUpdateMs;
        const saturated = m > 0 && before !== undefined && before.count < saturatedBelow;
        const skew = 2 * run.skewMs;
        const early = saturated && !isExpired(before, nowMs, rules) && gap > r - m - skew && got.counts[0] === 0;
        const late = saturated && isExpired(before, nowMs, rules) && gap <= r + skew && got.counts[0]! < saturatedBelow;
        if (early) {
          outcome.edges.early++;
          oracle.set(tenant, checks(undefined, nowMs, k, rules).state);
        } else if (late) {
          outcome.edges.late++;
          oracle.set(tenant, { count: before!.count - k, lastUpdateMs: nowMs });
        } else {
          outcome.mismatches.push(
            `batch ${b}, ${tenant}, ${k} checks at +${nowMs - t0} ms after ${JSON.stringify(before)}: ` +
              `levels ${got.levels} where the rules give ${expected.levels}`,
          );
          oracle.set(tenant, { count: got.counts[k - 1]!, lastUpdateMs: nowMs });
        }
      }
    }
    outcome.writes = counter.writes;
    return outcome;
  }

  const sameLevels = (a: CheckResult, b: CheckResult) => a.levels.join() === b.levels.join();

  it.each([1, 2, 3])(
    'skip window off: every level is the rules’, even on clocks far apart (seed %i)',
    async (seed) => {
      const outcome = await differential({
        seed,
        rules: steepRules,
        skipWindowMs: 0,
        skewMs: steepRules.resetIntervalMs,
        containers: 4,
        capacity: 4,
        tenants: 12,
        batches: 300,
      });
      expect(outcome.mismatches).toEqual([]);
      expect(outcome.edges).toEqual({ early: 0, late: 0 });
      expect(outcome.checks).toBeGreaterThan(1000);
    },
    60_000,
  );

  it.each([
    ['steep rules', 4, minute, 2000, steepRules],
    ['steep rules', 5, 2 * minute, 2000, steepRules],
    ['steep rules', 7, minute, 0, steepRules],
    ['SPEC §1 defaults', 6, minute, 2000, defaultRules],
  ] as const)(
    'skip window on (%s, seed %i, M = %i ms, clocks off by up to %i ms): the rules’ levels but at the documented edge',
    async (_, seed, skipWindowMs, skewMs, rules) => {
      const run = { seed, rules, skewMs, containers: 3, capacity: 6, tenants: 10, batches: 300 };
      const skipping = await differential({ ...run, skipWindowMs });
      expect(skipping.mismatches).toEqual([]);
      // On clocks that agree, never a reset later than the rules'.
      if (skewMs === 0) expect(skipping.edges.late).toBe(0);

      // The skip did skip: the same traffic without it writes more.
      const writing = await differential({ ...run, skipWindowMs: 0 });
      expect(writing.mismatches).toEqual([]);

      expect(skipping.writes / skipping.checks).toBeLessThan((0.8 * writing.writes) / writing.checks);
    },
    60_000,
  );

  it('the documented edge: a skipped check is not in the table, so a saturated tenant may reset up to M early', async () => {
    const writers = (skipWindowMs: number) =>
      Array.from(
        { length: 2 },
        () =>
          new RememberingCounterStore(new DynamoTenantCounterStore(dynamo.doc, table, defaultRules), defaultRules, {
            skipWindowMs,
            capacity: 10,
          }),
      );
    const r = defaultRules.resetIntervalMs;
    for (const [skipWindowMs, expected] of [
      [minute, [1]],
      [0, [9]],
    ] as const) {
      const [c1, c2] = writers(skipWindowMs);
      const tenant = `edge-${skipWindowMs}`;
      expect((await c1!.check(tenant, 22, t0)).levels.at(-1)).toBe(9);
      expect((await c1!.check(tenant, 1, t0 + minute)).levels).toEqual([9]);
      // Exactly R after that last check: the rules do not reset (level 9); the table last saw t0.
      expect(checks({ count: -22, lastUpdateMs: t0 + minute }, t0 + minute + r, 1, defaultRules).levels).toEqual([9]);
      expect((await c2!.check(tenant, 1, t0 + minute + r)).levels).toEqual(expected);
    }
  });
});

describe('tenant counter writes', () => {
  it('one write where the old store spent two, and none for a saturated tenant within the window', async () => {
    const { client, counter } = countingClient(dynamo.doc);
    const container = () =>
      new RememberingCounterStore(new DynamoTenantCounterStore(client, table, defaultRules), defaultRules, {
        skipWindowMs: minute,
        capacity: 10,
      });
    const [c1, c2] = [container(), container()];
    const r = defaultRules.resetIntervalMs;
    const writesOf = async (check: () => Promise<CheckResult>) => {
      const before = counter.writes;
      const { levels } = await check();
      return { levels, writes: counter.writes - before };
    };
    // [what, check, levels, writes]; the old store's writes in the comments.
    const steps: [string, () => Promise<CheckResult>, number[], number][] = [
      [
        'a new container, a new tenant: the decrement first, as the old store (old: 2)',
        () => c1.check('w', 3, t0),
        [1, 1, 1],
        2,
      ],
      [
        'another new tenant: the decrement first, until most unknown ones lately were new (old: 2)',
        () => c1.check('v', 1, t0 + 1),
        [1],
        2,
      ],
      ['remembered and fresh: the decrement (old: 1)', () => c1.check('w', 19, t0 + 1000), checksAfter(3, 19), 1],
      [
        'saturated, within the window: no write (old: 1)',
        () => c1.check('w', 5, t0 + 1000 + minute),
        [9, 9, 9, 9, 9],
        0,
      ],
      ['after the window: a write again (old: 1)', () => c1.check('w', 1, t0 + 1001 + minute), [9], 1],
      [
        'another new container, a fresh tenant: the decrement (old: 1)',
        () => c2.check('w', 1, t0 + 2 * minute),
        [9],
        1,
      ],
      [
        'remembered, written more than R ago: the reset first (old: 2)',
        () => c1.check('w', 1, t0 + 3 * minute + r),
        [1],
        1,
      ],
    ];
    const seen = [];
    for (const [what, check] of steps) seen.push([what, ...Object.values(await writesOf(check))]);
    expect(seen).toEqual(steps.map(([what, , levels, writes]) => [what, levels, writes]));
    // A new container meeting only new tenants: two writes each until most of them were (22), then one.
    const c3 = container();
    const before = counter.writes;
    for (let i = 0; i < 30; i++) await c3.check(`new${i}`, 1, t0);
    expect(counter.writes - before).toBe(22 * 2 + 8);
  });
});

/** The levels of k checks of a tenant whose count is `after` checks in. */
function checksAfter(after: number, k: number): number[] {
  return checks(undefined, t0, after + k, defaultRules).levels.slice(after);
}
