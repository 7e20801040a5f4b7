import type { FirstTry, StoredCheck } from '../../../lib/routing/priority/counter-store';
import { RememberingCounterStore } from '../../../lib/routing/priority/remembering-store';
import { checks, defaultRules, isExpired, type TenantState } from '../../../lib/routing/priority/rules';

const t0 = Date.UTC(2026, 0, 1);
const r = defaultRules.resetIntervalMs;

/** The shared counters as the rules define them, in memory, recording what each check tried first. */
function rulesStore() {
  const states = new Map<string, TenantState>();
  const tried: FirstTry[] = [];
  const peeked: string[] = [];
  return {
    tried,
    peeked,
    async peek(tenantId: string) {
      peeked.push(tenantId);
      return states.get(tenantId);
    },
    async check(tenantId: string, k: number, nowMs: number, firstTry: FirstTry): Promise<StoredCheck> {
      tried.push(firstTry);
      const before = states.get(tenantId);
      const result = checks(before, nowMs, k, defaultRules);
      states.set(tenantId, result.state);
      return { ...result, reset: isExpired(before, nowMs, defaultRules) };
    },
  };
}

describe('RememberingCounterStore', () => {
  it.each<[string, [string, number, number][], FirstTry[]]>([
    ['a tenant it does not know, at first: the decrement', [['a', 1, t0]], ['decrement']],
    [
      'a tenant it wrote within the interval: the decrement',
      [
        ['a', 1, t0],
        ['a', 1, t0 + r],
      ],
      ['decrement', 'decrement'],
    ],
    [
      'a tenant it wrote more than the interval ago: the reset',
      [
        ['a', 1, t0],
        ['a', 1, t0 + r + 1],
      ],
      ['decrement', 'reset'],
    ],
    [
      'an unknown tenant after one new tenant: still the decrement',
      [
        ['a', 1, t0],
        ['b', 1, t0 + 1],
      ],
      ['decrement', 'decrement'],
    ],
    [
      'an unknown tenant once most unknown ones lately were new (22 in a row): the reset',
      Array.from({ length: 23 }, (_, i): [string, number, number] => [`new${i}`, 1, t0]),
      [...Array.from({ length: 22 }, (): FirstTry => 'decrement'), 'reset'],
    ],
  ])('tries first, for %s', async (_, calls, expected) => {
    const store = rulesStore();
    const memory = new RememberingCounterStore(store, defaultRules);
    for (const [tenant, k, now] of calls) await memory.check(tenant, k, now);
    expect(store.tried).toEqual(expected);
  });

  it('goes back to the decrement once most unknown tenants lately were fresh', async () => {
    const shared = rulesStore();
    const cold = new RememberingCounterStore(shared, defaultRules);
    const fresh = Array.from({ length: 7 }, (_, i) => `fresh${i}`);
    for (const tenant of fresh) await new RememberingCounterStore(shared, defaultRules).check(tenant, 1, t0);
    for (let i = 0; i < 30; i++) await cold.check(`new${i}`, 1, t0); // share 0.62
    for (const tenant of [...fresh, 'x']) await cold.check(tenant, 1, t0 + 1); // each fresh one: × 31/32
    expect(shared.tried.slice(-8)).toEqual([...fresh.map((): FirstTry => 'reset'), 'decrement']);
  });

  it('answers a saturated tenant within the window without the store, and writes outside it', async () => {
    const store = rulesStore();
    const memory = new RememberingCounterStore(store, defaultRules, { skipWindowMs: 60_000, capacity: 10 });
    await memory.check('a', 21, t0); // count -20: level 8, not saturated
    expect((await memory.check('a', 1, t0 + 1)).levels).toEqual([9]); // count -21: written, saturated
    expect((await memory.check('a', 3, t0 + 60_001)).levels).toEqual([9, 9, 9]);
    expect((await memory.check('a', 1, t0)).levels).toEqual([9]); // a clock set back is not in the window
    expect((await memory.check('a', 1, t0 + 120_002)).levels).toEqual([9]);
    expect(store.tried).toHaveLength(4);
  });

  it('after its window, reads the tenant, and answers alone from another container’s recent write', async () => {
    const shared = rulesStore();
    const options = { skipWindowMs: 60_000, capacity: 10 };
    const [c1, c2] = [0, 1].map(() => new RememberingCounterStore(shared, defaultRules, options));
    await c1!.check('a', 22, t0);
    await c2!.check('a', 1, t0 + 30_000);
    expect((await c1!.check('a', 2, t0 + 70_000)).levels).toEqual([9, 9]); // c2 wrote within M: no write
    expect([shared.tried.length, shared.peeked]).toEqual([2, ['a']]);
    expect((await c1!.check('a', 1, t0 + 100_001)).levels).toEqual([9]); // past c2's window too: written
    expect([shared.tried, shared.peeked]).toEqual([
      ['decrement', 'decrement', 'decrement'],
      ['a', 'a'],
    ]);
  });

  it('with no skip window writes every check, even within the same millisecond', async () => {
    const store = rulesStore();
    const memory = new RememberingCounterStore(store, defaultRules);
    await memory.check('a', 30, t0);
    await memory.check('a', 1, t0);
    expect(store.tried).toHaveLength(2);
  });

  it('remembers at most its capacity, forgetting the least recently checked', async () => {
    const memory = new RememberingCounterStore(rulesStore(), defaultRules, { skipWindowMs: 0, capacity: 3 });
    for (const tenant of ['a', 'b', 'c', 'a', 'd', 'e']) await memory.check(tenant, 1, t0);
    expect(memory.remembered).toBe(3);
    const store = rulesStore();
    const small = new RememberingCounterStore(store, defaultRules, { skipWindowMs: 60_000, capacity: 2 });
    // Saturated within the window: a remembered tenant is answered alone, a forgotten one written again.
    for (const tenant of ['a', 'b', 'a', 'c']) await small.check(tenant, 25, t0); // the 2nd "a" skips; "b" goes
    expect(store.tried).toHaveLength(3);
    await small.check('a', 1, t0 + 1);
    await small.check('b', 1, t0 + 1);
    expect(store.tried).toHaveLength(4);
  });

  it.each([
    [{ skipWindowMs: -1, capacity: 1 }, /skipWindowMs must be an integer in \[0, resetIntervalMs\)/],
    [{ skipWindowMs: r, capacity: 1 }, /skipWindowMs must be/],
    [{ skipWindowMs: 0.5, capacity: 1 }, /skipWindowMs must be/],
    [{ skipWindowMs: 0, capacity: 0 }, /capacity must be a positive integer/],
  ])('refuses %j', (options, message) => {
    expect(() => new RememberingCounterStore(rulesStore(), defaultRules, options)).toThrow(message);
  });
});
