import { lingerMs } from '../../../../lib/distributor/planning/budget';

describe('lingerMs: how long an execution with nothing due stays for the next request', () => {
  it.each<[string, number, number, number]>([
    ['no lease held: leaves at once', 0, 6_000, 0],
    ['one target (light load): leaving costs less than a batching window, leaves at once', 1, 6_000, 0],
    ['five leases: 160 + 5 × 155 = 935 ms, still under a window', 5, 6_000, 0],
    ['six leases: 1,090 ms, a window and more', 6, 6_000, 1_090],
    ['20 leases: 3,260 ms', 20, 6_000, 3_260],
    ['50 leases (the busy fleet): the wait bound', 50, 6_000, 6_000],
    ['50 leases, wait bound 0: never', 50, 0, 0],
  ])('%s', (_, leases, boundMs, expected) => {
    expect(lingerMs(leases, boundMs)).toBe(expected);
  });
});
