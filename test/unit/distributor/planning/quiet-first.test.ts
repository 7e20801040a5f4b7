import {
  type DistributorTuning,
  loadDistributorConfig,
  quietFirstSettingsOf,
} from '../../../../lib/distributor/config';
import { targetCapacity } from '../../../../lib/distributor/planning/capacity';
import {
  backlogPriority,
  type QuietFirstSettings,
  quietShares,
  targetTopPriority,
} from '../../../../lib/distributor/planning/planner';
import {
  planTarget,
  type TargetMeasurement,
  type TargetShares,
} from '../../../../lib/distributor/planning/target-plan';
import { distributorSettings } from '../../../../lib/wiring/distributor';

const config = (env: Record<string, string> = {}, tuning: Partial<DistributorTuning> = {}) =>
  loadDistributorConfig(
    { DISTRIBUTOR_TABLE: 't', AMQP_URL: 'amqp://h', RABBITMQ_MANAGEMENT_URL: 'http://h', ...env },
    tuning,
  );

describe('backlogPriority (quiet, short and flooding bands)', () => {
  it.each<[number, number, number, number]>([
    // backlog, top, quietBacklog, priority
    [0, 10, 10, 10],
    [1, 10, 10, 10],
    [10, 10, 10, 10],
    [11, 10, 10, 9],
    [160, 10, 10, 9],
    [161, 10, 10, 8],
    [5_121, 10, 10, 8],
    [1_000_000, 10, 10, 8],
    [3, 9, 1, 8],
    [17, 9, 1, 7],
    [2, 1, 1, 0],
    [200, 255, 100, 254],
  ])('backlog %d, top %d, quiet up to %d: priority %d', (backlog, top, quietBacklog, priority) => {
    expect(backlogPriority(backlog, top, quietBacklog)).toBe(priority);
  });

  it('never rises with the backlog', () => {
    let last = Number.POSITIVE_INFINITY;
    for (let backlog = 0; backlog < 20_000; backlog += 7) {
      const priority = backlogPriority(backlog, 10, 10);
      expect(priority).toBeLessThanOrEqual(last);
      last = priority;
    }
  });

  it('gives every flooding queue the same priority, whatever its backlog (equal service inside the target)', () => {
    const flooding = [161, 300, 2_999, 3_001, 5_000, 80_000].map((backlog) => backlogPriority(backlog, 10, 10));
    expect(new Set(flooding)).toEqual(new Set([8]));
  });
});

describe('targetTopPriority', () => {
  it.each<[Record<string, unknown> | undefined, number | undefined]>([
    [{ 'x-max-priority': 10 }, 10],
    [{ 'x-max-priority': 255 }, 255],
    [{ 'x-max-priority': 0 }, undefined],
    [{ 'x-max-priority': 256 }, undefined],
    [{ 'x-max-priority': '10' }, undefined],
    [{ 'x-queue-type': 'quorum' }, undefined],
    [undefined, undefined],
  ])('%j → %s', (args, top) => expect(targetTopPriority(args)).toBe(top));
});

describe('quietShares (quiet queues first, from the whole room)', () => {
  const q = (name: string, depth: number, weight = 1) => ({ name, depth, weight, backlog: depth });
  it.each<[string, ReturnType<typeof q>[], number, Record<string, number>]>([
    ['a quiet queue takes what it holds', [q('a', 3), q('b', 5000)], 10, { a: 3 }],
    ['a noisy queue (above quietBacklog) takes nothing here', [q('a', 11), q('b', 5000)], 100, {}],
    ['quiet queues share a room too small for all, fairly', [q('a', 8), q('b', 8), q('c', 5000)], 6, { a: 3, b: 3 }],
    ['one free slot goes to a quiet queue, not to the flood', [q('a', 1), q('b', 5000)], 1, { a: 1 }],
    ['a paused quiet queue (weight 0) stays', [q('a', 3, 0), q('b', 3)], 10, { b: 3 }],
    ['no room: nothing', [q('a', 3)], 0, {}],
  ])('%s', (_name, queues, room, expected) => {
    const result = quietShares(queues, room, 10);
    const moving = Object.fromEntries(result.shares.filter((s) => s.share > 0).map((s) => [s.name, s.share]));
    expect(moving).toEqual(expected);
    expect(result.shares.reduce((n, s) => n + s.share, 0)).toBeLessThanOrEqual(Math.max(room, 0));
  });
});

describe('targetCapacity with a reserve', () => {
  const base = { queueMaxLength: 1000, defaultMaxLength: 1000, refillThresholdPercent: 10 };
  it.each<[number, number, { capacity: number; quietCapacity: number; belowThreshold: boolean }]>([
    [0, 0, { capacity: 1000, quietCapacity: 1000, belowThreshold: false }],
    [0, 5, { capacity: 950, quietCapacity: 1000, belowThreshold: false }],
    [850, 5, { capacity: 100, quietCapacity: 150, belowThreshold: false }],
    [851, 5, { capacity: 0, quietCapacity: 149, belowThreshold: true }],
    [960, 5, { capacity: 0, quietCapacity: 40, belowThreshold: true }],
    [1000, 5, { capacity: 0, quietCapacity: 0, belowThreshold: true }],
    [1200, 5, { capacity: 0, quietCapacity: 0, belowThreshold: true }],
  ])('depth %d, reserve %d %%', (depth, reservePercent, expected) => {
    expect(targetCapacity({ ...base, depth, reservePercent })).toMatchObject(expected);
  });
});

describe('planTarget, quiet tenants first', () => {
  const quiet = 'work»/quiet';
  const noisy = 'work»/noisy';
  const measured = (depth: number, args: Record<string, unknown>, staging = [3, 5000]): TargetMeasurement => ({
    target: 'work',
    targetQueue: { arguments: args, messages_ready: depth, message_bytes_ready: 0 },
    policies: { policies: [], operatorPolicies: [] },
    stagedMessageBytes: 0,
    depth,
    staging: [
      { name: noisy, depth: staging[1]! },
      { name: quiet, depth: staging[0]! },
    ],
  });
  const priorityTarget = { 'x-max-length': 1000, 'x-max-priority': 10 };
  const plan = (env: Record<string, string>, m: TargetMeasurement, tuning: Partial<DistributorTuning> = {}) => {
    const settings = distributorSettings(config(env, tuning));
    return planTarget(m, { ...settings, quietFirst: quietFirstSettingsOf(config(env, tuning)) }, () => ({
      queue: 1,
      tenant: 1,
      workflow: 1,
    })) as TargetShares;
  };
  const backlog = { DISTRIBUTOR_MOVE_PRIORITY: 'backlog' };
  const keep = { DISTRIBUTOR_MOVE_PRIORITY: 'keep' };

  it('keep (the seed’s): shares as before, no priority stamped, no reserve', () => {
    const kept = plan(keep, measured(0, priorityTarget));
    expect(kept.shares).toEqual([
      { name: noisy, share: 997 },
      { name: quiet, share: 3 },
    ]);
    expect(kept.capacity).toBe(1000);
  });

  it('backlog: the quiet queue gets the top priority, the noisy one its band, and the noisy share leaves the reserve', () => {
    const stamped = plan(backlog, measured(0, priorityTarget));
    expect(stamped).toMatchObject({ outcome: 'distributed', capacity: 950 });
    expect(stamped.shares).toEqual([
      { name: noisy, share: 950, priority: 8 },
      { name: quiet, share: 3, priority: 10 },
    ]);
    // The pass's log shows each queue's stamped priority beside its depth.
    expect(stamped.queues).toEqual([
      { name: noisy, depth: 5000, weight: 1, tenant: noisy, tenantWeight: 1, backlog: 5000, priority: 8 },
      { name: quiet, depth: 3, weight: 1, tenant: quiet, tenantWeight: 1, backlog: 3, priority: 10 },
    ]);
  });

  it('backlog: a target kept full by the noisy queue (below the refill threshold) still takes the quiet messages', () => {
    const full = plan(backlog, measured(950, priorityTarget));
    expect(full.outcome).toBe('distributed');
    expect(full.shares).toEqual([
      { name: noisy, share: 0 },
      { name: quiet, share: 3, priority: 10 },
    ]);
    expect(plan(keep, measured(950, priorityTarget))).toMatchObject({ outcome: 'below-threshold', shares: [] });
  });

  it('backlog: never past the max length, even for quiet messages', () => {
    const full = plan(backlog, measured(999, priorityTarget));
    expect(full.shares).toEqual([
      { name: noisy, share: 0 },
      { name: quiet, share: 1, priority: 10 },
    ]);
    expect(plan(backlog, measured(1000, priorityTarget))).toMatchObject({ outcome: 'below-threshold', shares: [] });
  });

  it('backlog on a quorum target: the reserve, quiet moves in the high class (above 4), the rest in the normal one', () => {
    const quorum = plan(backlog, measured(950, { 'x-max-length': 1000, 'x-queue-type': 'quorum' }));
    expect(quorum.shares).toEqual([
      { name: noisy, share: 0 },
      { name: quiet, share: 3, priority: 5 },
    ]);
    const emptier = plan(backlog, measured(0, { 'x-max-length': 1000, 'x-queue-type': 'quorum' }));
    expect(emptier.shares).toEqual([
      { name: noisy, share: 950, priority: 3 },
      { name: quiet, share: 3, priority: 5 },
    ]);
  });

  it('backlog on a classic target without x-max-priority: the reserve, no stamping', () => {
    const classic = plan(backlog, measured(950, { 'x-max-length': 1000 }));
    expect(classic.shares).toEqual([
      { name: noisy, share: 0 },
      { name: quiet, share: 3 },
    ]);
  });

  it('backlog: a quiet queue bigger than the quiet backlog is in the short band, still above the flood', () => {
    const busy = plan(backlog, measured(0, priorityTarget), { quietBacklog: 2 });
    expect(busy.shares).toEqual([
      { name: noisy, share: 947, priority: 8 },
      { name: quiet, share: 3, priority: 9 },
    ]);
  });

  it('backlog, a buffer a few messages deep: its one free slot goes to the quiet queue, whatever the rotation', () => {
    // Kept at 5 (the buffer at 10 msg/s): the reserve rounds to 0; a fair share gave the slot by rotation.
    const shallow = { ...measured(4, priorityTarget, [1, 5000]), kept: { length: 5, from: 'buffer' as const } };
    for (const rotationCursor of [quiet, noisy]) {
      expect(plan(backlog, { ...shallow, rotationCursor }).shares).toEqual([
        { name: noisy, share: 0 },
        { name: quiet, share: 1, priority: 10 },
      ]);
    }
  });

  it('backlog with a 0 % reserve: the noisy queue may fill the whole room', () => {
    const noReserve = plan(backlog, measured(0, priorityTarget), { quietReservePercent: 0 });
    expect(noReserve).toMatchObject({ capacity: 1000 });
    expect(noReserve.shares.map((s) => s.share)).toEqual([997, 3]);
  });

  it.each([['DISTRIBUTOR_MOVE_PRIORITY', 'counter']])('%s=%s is a cold-start error', (name, value) => {
    expect(() => config({ [name]: value })).toThrow(name);
  });

  it('the defaults: quiet tenants first (issue 35, part 4: the best measured behaviour)', () => {
    const defaults: QuietFirstSettings = { movePriority: 'backlog', quietBacklog: 10, reservePercent: 5 };
    expect(quietFirstSettingsOf(config())).toEqual(defaults);
  });
});
