import { loadDistributorConfig } from '../../../../lib/distributor/config';
import { planTarget, type TargetShares } from '../../../../lib/distributor/planning/target-plan';
import {
  configuredWeights,
  controlledWeights,
  fairByOf,
  levelWeightsOf,
  weighingOf,
} from '../../../../lib/distributor/planning/weights';
import { rotationToPlan, rotationToStore } from '../../../../lib/distributor/stores/rotation-store';
import { distributorSettings } from '../../../../lib/wiring/distributor';

const env = { DISTRIBUTOR_TABLE: 't', AMQP_URL: 'amqp://h', RABBITMQ_MANAGEMENT_URL: 'http://h' };

describe('two-level weights: a rule naming a tenant weighs the tenant, one naming a workflow weighs it within', () => {
  const levels = levelWeightsOf([
    { pattern: 'work»/tenant1/*', weight: 3 },
    { pattern: 'work»/*/report', weight: 2 },
    { regex: 'tenant2', weight: 0.5 },
    { regex: '/tenant2/bulk$', weight: 4 },
    { pattern: 'work»/solo', weight: 5 },
  ]);
  it.each([
    ['work»/tenant1/ingest', { tenant: 3, workflow: 1 }],
    ['work»/tenant1/report', { tenant: 3, workflow: 2 }],
    ['work»/tenant2/bulk', { tenant: 0.5, workflow: 4 }],
    ['work»/tenant3/report', { tenant: 1, workflow: 2 }],
    ['other»/tenant1/ingest', { tenant: 1, workflow: 1 }],
    // A one-discriminator queue is its own tenant (the name cannot tell a tenant-less workflow apart).
    ['work»/solo', { tenant: 5, workflow: 1 }],
  ])('%s → %j', (name, expected) => expect(levels(name)).toEqual(expected));

  it("a tenant's control weighs (or pauses) the tenant, a workflow's control the workflow within it", () => {
    const weigh = controlledWeights(weighingOf([{ pattern: 'work»/a/*', weight: 3 }]), {
      a: { weight: 2 },
      'a/slow': { weight: 0.5 },
      b: { paused: true },
      'c/x': { paused: true },
    });
    expect(weigh('work»/a/slow')).toEqual({ queue: 0.5, tenant: 2, workflow: 0.5 });
    expect(weigh('work»/a/fast')).toEqual({ queue: 2, tenant: 2, workflow: 1 });
    expect(weigh('work»/b/x')).toMatchObject({ queue: 0, tenant: 0 });
    expect(weigh('work»/c/x')).toEqual({ queue: 0, tenant: 1, workflow: 0 });
  });
});

describe('planTarget with the tenant planner', () => {
  const measured = (staging: { name: string; depth: number }[], maxLength = 110) => ({
    target: 'work',
    targetQueue: {
      arguments: { 'x-max-length': maxLength, 'x-max-priority': 10 },
      messages_ready: 0,
      message_bytes_ready: 0,
    },
    policies: { policies: [], operatorPolicies: [] },
    stagedMessageBytes: 0,
    depth: 0,
    staging,
  });
  // The seed's division (no quiet reserve) unless a case asks for quiet tenants first.
  const settings = (extra: Record<string, string> = {}) =>
    distributorSettings(
      loadDistributorConfig({ ...env, DISTRIBUTOR_MOVE_PRIORITY: 'keep', ...extra }, { refillThresholdPercent: 0 }),
    );

  it('quiet is a tenant’s backlog over its workflows: five workflows of 3 are not quiet at a quiet backlog of 10', () => {
    const staging = [
      ...Array.from({ length: 5 }, (_, i) => ({ name: `work»/spread/wf${i}`, depth: 3 })),
      { name: 'work»/single/wf', depth: 3 },
    ];
    const plan = planTarget(
      measured(staging),
      settings({ DISTRIBUTOR_MOVE_PRIORITY: 'backlog' }),
      configuredWeights([]),
    ) as TargetShares;
    const priority = Object.fromEntries(plan.shares.map((s) => [s.name, s.priority]));
    expect(priority['work»/single/wf']).toBe(10);
    expect(priority['work»/spread/wf0']).toBe(9);
    expect(plan.queues.find((q) => q.name === 'work»/spread/wf0')?.backlog).toBe(15);
  });

  it('fair by bytes: each queue weighs its listed message size, and what rounding owes is to be stored', () => {
    const staging = [
      { name: 'work»/A/x', depth: 1000 },
      { name: 'work»/B/x', depth: 1000 },
    ];
    const plan = planTarget(
      { ...measured(staging, 111), queueBytes: { 'work»/A/x': 10_240, 'work»/B/x': 1024 } },
      settings({ DISTRIBUTOR_FAIR_BY: 'bytes' }),
      configuredWeights([]),
    ) as TargetShares;
    expect(plan.capacity).toBe(111);
    // 111 messages, equal in bytes: A 10.09 and B 100.9; B gets the unit left, A is owed 0.09 of a message.
    expect(plan.shares).toEqual([
      { name: 'work»/A/x', share: 10 },
      { name: 'work»/B/x', share: 101 },
    ]);
    expect(plan.deficits).toEqual({ 'work»/A': 930.909, 'work»/B': -93.091 });
    expect(rotationToStore(plan, {})).toEqual({ deficits: plan.deficits });
  });
});

describe('the rotation item', () => {
  it('is written only when the plan changed it, with the read cursor kept', () => {
    const read = { cursor: 'work»/a', innerCursors: { 'work»/a': 'work»/a/x' } };
    expect(rotationToStore({ innerCursors: { 'work»/a': 'work»/a/x' } }, read)).toBeUndefined();
    expect(rotationToStore({ innerCursors: { 'work»/a': 'work»/a/y' } }, read)).toEqual({
      cursor: 'work»/a',
      innerCursors: { 'work»/a': 'work»/a/y' },
    });
    expect(rotationToPlan({ ...read, deficits: { 'work»/a': 3 } })).toEqual({
      rotationCursor: 'work»/a',
      innerCursors: read.innerCursors,
      deficits: { 'work»/a': 3 },
    });
  });
});

describe('DISTRIBUTOR_PLANNER and DISTRIBUTOR_FAIR_BY', () => {
  it('default to shares per tenant, in messages', () => {
    expect(loadDistributorConfig(env)).toMatchObject({
      DISTRIBUTOR_PLANNER: 'tenant',
      DISTRIBUTOR_FAIR_BY: 'messages',
    });
  });
  it.each([
    ['bytes', { unit: 'bytes' }],
    ['header:x-cost', { unit: 'declared', header: 'x-cost', missing: 1 }],
    ['header:x-work-ms=250', { unit: 'declared', header: 'x-work-ms', missing: 250 }],
  ])('DISTRIBUTOR_FAIR_BY=%s reads as %j', (text, fairBy) => {
    expect(fairByOf(loadDistributorConfig({ ...env, DISTRIBUTOR_FAIR_BY: text }).DISTRIBUTOR_FAIR_BY)).toEqual(fairBy);
  });
  it.each([
    [{ DISTRIBUTOR_PLANNER: 'fair' }, /DISTRIBUTOR_PLANNER.*fair was replaced by tenant .* and queue/],
    [{ DISTRIBUTOR_PLANNER: 'tenants' }, /DISTRIBUTOR_PLANNER.*must be one of tenant, queue, reference/],
    [{ DISTRIBUTOR_FAIR_BY: 'cost' }, /DISTRIBUTOR_FAIR_BY.*must be messages, bytes, or header:<name>/],
    [{ DISTRIBUTOR_FAIR_BY: 'header:' }, /DISTRIBUTOR_FAIR_BY.*must be messages, bytes, or header:<name>/],
    [{ DISTRIBUTOR_FAIR_BY: 'header:x-cost=0' }, /DISTRIBUTOR_FAIR_BY.*the cost after "=" must be a positive number/],
    [{ DISTRIBUTOR_FAIR_BY: 'header:x-cost=ten' }, /DISTRIBUTOR_FAIR_BY.*the cost after "=" must be a positive number/],
  ])('%j is refused at cold start', (extra, message) => {
    expect(() => loadDistributorConfig({ ...env, ...extra })).toThrow(message);
  });
});
