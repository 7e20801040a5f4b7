import {
  account,
  type DepthSample,
  depthSeries,
  idleWhileStaged,
  jainPerWindow,
  overfilled,
  quantile,
  ratePerSecond,
} from '../../../bench/lib/flood-metrics';
import { tenantOf } from '../../../bench/lib/flood-traffic';
import { parseEnvFlag, parseListFlag } from '../../../bench/lib/text-flags';

describe('quantile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1, unsorted on purpose
  it.each([
    [hundred, 0.5, 50],
    [hundred, 0.99, 99],
    [hundred, 1, 100],
    [hundred, 0, 1],
    [[7], 0.99, 7],
    [[1, 2, 3], 0.5, 2],
    [[], 0.5, 0],
  ])('of %j at %d is %d', (values, q, expected) => {
    expect(quantile(values, q)).toBe(expected);
  });
});

describe('rate per second', () => {
  const arrivals = [
    { tenant: 'a', at: 0 },
    { tenant: 'a', at: 999 },
    { tenant: 'b', at: 500 },
    { tenant: 'a', at: 1000 }, // the window is half-open
  ];
  it('counts only the tenants asked for, in [from, to)', () => {
    expect(ratePerSecond(arrivals, new Set(['a']), 0, 1000)).toBe(2);
    expect(ratePerSecond(arrivals, new Set(['a', 'b']), 0, 2000)).toBe(2);
  });
  it('is 0 over an empty window', () => {
    expect(ratePerSecond(arrivals, new Set(['a']), 1000, 1000)).toBe(0);
  });
});

describe("Jain's index per window", () => {
  const at = (tenant: string, ...times: number[]) => times.map((t) => ({ tenant, at: t }));
  const never = Number.POSITIVE_INFINITY;
  it('gives one index per whole window and leaves out the last partial one', () => {
    const arrivals = [...at('a', 100, 200, 1100), ...at('b', 150, 1200, 1300, 1400), ...at('c', 50, 2500)];
    const doneAt = new Map([
      ['a', never],
      ['b', never],
    ]);
    // [0, 1000): a 2, b 1 → 9/10; [1000, 2000): a 1, b 3 → 16/20; [2000, 3000) would end past 2500; c is not asked for
    const indices = jainPerWindow(arrivals, doneAt, 1000, 0, 2500);
    expect(indices).toHaveLength(2);
    expect(indices[0]).toBeCloseTo(0.9, 12);
    expect(indices[1]).toBeCloseTo(0.8, 12);
  });
  it('counts a backlogged tenant with nothing in a window as a zero', () => {
    const arrivals = [...at('a', 10, 20), ...at('other', 30, 40, 50)];
    const doneAt = new Map([
      ['a', never],
      ['b', never],
      ['c', never],
    ]);
    expect(jainPerWindow(arrivals, doneAt, 100, 0, 100)).toEqual([1 / 3]);
  });
  it('leaves out a tenant that ran out before the window ended, and a window with fewer than two left', () => {
    const arrivals = [...at('a', 10, 20, 110), ...at('b', 30, 120), ...at('c', 40)];
    const doneAt = new Map([
      ['a', never],
      ['b', 150],
      ['c', 40],
    ]);
    // [0, 100): a 2, b 1 (c ran out at 40) → 9/10; [100, 200): only a still backlogged at 200
    expect(jainPerWindow(arrivals, doneAt, 100, 0, 200)).toEqual([0.9]);
  });
  it('starts at `from`', () => {
    const arrivals = [...at('a', 10), ...at('a', 110), ...at('b', 120)];
    const doneAt = new Map([
      ['a', never],
      ['b', never],
    ]);
    expect(jainPerWindow(arrivals, doneAt, 100, 100, 200)).toEqual([1]);
  });
  it('refuses a window of no length', () => {
    expect(() => jainPerWindow([], new Map(), 0, 0, 10)).toThrow(RangeError);
  });
});

describe('target idle while staged', () => {
  const sample = (depth: number, staged: number, held: number): DepthSample => ({ at: 0, depth, staged, held });
  it('counts only samples with staged work, and idle only with nothing ready and nothing held', () => {
    const samples = [sample(0, 0, 0), sample(0, 5, 0), sample(0, 5, 3), sample(2, 5, 0), sample(0, 5, 0)];
    expect(idleWhileStaged(samples)).toEqual({ share: 0.5, samples: 4 });
  });
  it('is undefined without staged work', () => {
    expect(idleWhileStaged([sample(0, 0, 0)])).toEqual({ share: undefined, samples: 0 });
  });
});

describe('overfill and the depth series', () => {
  const samples: DepthSample[] = [
    { at: 0, depth: 3, staged: 0, held: 0 },
    { at: 400, depth: 1001, staged: 0, held: 0 },
    { at: 999, depth: 1000, staged: 0, held: 0 },
    { at: 2100, depth: 7, staged: 0, held: 0 },
  ];
  it('counts samples above the max length', () => {
    expect(overfilled(samples, 1000)).toBe(1);
    expect(overfilled(samples, 1001)).toBe(0);
  });
  it('gives the largest depth per bucket, a dot for a bucket without samples', () => {
    expect(depthSeries(samples, 1000)).toBe('1001 · 7');
    expect(depthSeries([], 1000)).toBe('');
  });
});

describe('accounting of every message sent', () => {
  const started = (...ids: string[]) => ids.map((id) => ({ id, started: true }));
  it('tells delivered, duplicated, still queued and lost apart', () => {
    expect(account(['a', 'b', 'c', 'd', 'e'], started('a', 'b', 'a'), ['c', 'b', 'x'])).toEqual({
      sent: 5,
      delivered: 2,
      duplicates: 2, // a started twice; b started and still queued
      waiting: 1, // c
      lost: 2, // d, e
      strangers: 1, // x
    });
  });
  it('finds nothing wrong when each was delivered once', () => {
    expect(account(['a', 'b'], started('b', 'a'), [])).toEqual({
      sent: 2,
      delivered: 2,
      duplicates: 0,
      waiting: 0,
      lost: 0,
      strangers: 0,
    });
  });
  // The 16 "duplicates" of every quorum run: held unstarted when the workers stopped, back in the target.
  it('counts a delivery put back unstarted as nothing: found queued, the message is waiting, not duplicated', () => {
    const deliveries = [...started('a'), { id: 'b', started: false }, { id: 'c', started: false }];
    expect(account(['a', 'b', 'c'], deliveries, ['b'])).toEqual({
      sent: 3,
      delivered: 1,
      duplicates: 0,
      waiting: 1, // b
      lost: 1, // c: a worker never started it and no queue holds it
      strangers: 0,
    });
  });
  it('counts a message put back unstarted, then started, as delivered once', () => {
    const deliveries = [{ id: 'a', started: false }, ...started('a')];
    expect(account(['a'], deliveries, [])).toMatchObject({ delivered: 1, duplicates: 0, waiting: 0, lost: 0 });
  });
  it('counts every start and queued copy beyond the first as a duplicate', () => {
    expect(account(['a'], started('a', 'a'), ['a'])).toMatchObject({ delivered: 1, duplicates: 2, waiting: 0 });
  });
});

describe('message ids', () => {
  it('carry their tenant', () => {
    expect(tenantOf('r3-noisy0#17')).toBe('r3-noisy0');
  });
});

describe('text flags', () => {
  it('reads settings as a JSON object of strings', () => {
    expect(parseEnvFlag('distributor-env', undefined)).toEqual({});
    expect(parseEnvFlag('distributor-env', '{"A":"1","B":"x"}')).toEqual({ A: '1', B: 'x' });
  });
  it.each([
    ['{', /--distributor-env: not JSON/],
    ['[1]', /must be a JSON object/],
    ['null', /must be a JSON object/],
    ['{"A":1}', /A must be a string, got 1/],
  ])('refuses %s', (text, error) => {
    expect(() => parseEnvFlag('distributor-env', text)).toThrow(error);
  });
  it('reads a subset in the order given, all when absent', () => {
    const known = ['fifo', 'priority', 'on-demand'] as const;
    expect(parseListFlag('deliveries', undefined, known)).toEqual(['fifo', 'priority', 'on-demand']);
    expect(parseListFlag('deliveries', 'on-demand, fifo', known)).toEqual(['on-demand', 'fifo']);
    expect(() => parseListFlag('deliveries', 'fifo,lifo', known)).toThrow(/unknown "lifo"; known: fifo/);
    expect(() => parseListFlag('deliveries', '', known)).toThrow(/unknown ""/);
    expect(() => parseListFlag('deliveries', 'fifo,fifo', known)).toThrow(/"fifo" given twice/);
  });
});
