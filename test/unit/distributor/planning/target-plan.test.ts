import { type DistributorTuning, loadDistributorConfig } from '../../../../lib/distributor/config';
import {
  planTarget,
  type TargetMeasurement,
  type TargetPlan,
  type TargetShares,
} from '../../../../lib/distributor/planning/target-plan';
import { configuredWeights } from '../../../../lib/distributor/planning/weights';
import { distributorSettings } from '../../../../lib/wiring/distributor';

/** The seed's division (no quiet reserve): quiet tenants first has its cases in quiet-first.test.ts. */
const settings = (env: Record<string, string> = {}, tuning: Partial<DistributorTuning> = {}) =>
  distributorSettings(
    loadDistributorConfig(
      {
        DISTRIBUTOR_TABLE: 't',
        AMQP_URL: 'amqp://h',
        RABBITMQ_MANAGEMENT_URL: 'http://h',
        DISTRIBUTOR_MOVE_PRIORITY: 'keep',
        ...env,
      },
      tuning,
    ),
  );

/** No policy in these cases: the limits are the target's arguments, and drop-head. */
const anyLimits = expect.objectContaining({ overflow: 'drop-head' });

/** A listed target with an `x-max-length` argument. */
const limit = (maxLength: number) => ({
  targetQueue: { arguments: { 'x-max-length': maxLength }, messages_ready: 0, message_bytes_ready: 0 },
});

const measured = (overrides: Partial<TargetMeasurement> = {}): TargetMeasurement => ({
  target: 'work',
  ...limit(10),
  policies: { policies: [], operatorPolicies: [] },
  stagedMessageBytes: 0,
  depth: 0,
  staging: [
    { name: 'work»/a', depth: 4 },
    { name: 'work»/b', depth: 8 },
  ],
  ...overrides,
});

const queue = (name: string, depth: number, tenantWeight = 1) => ({
  name,
  depth,
  weight: 1,
  tenant: name,
  tenantWeight,
  backlog: depth,
});
const one = () => ({ queue: 1, tenant: 1, workflow: 1 });
const both = [queue('work»/a', 4), queue('work»/b', 8)];
const shares = (a: number, b: number) => [
  { name: 'work»/a', share: a },
  { name: 'work»/b', share: b },
];
/** A plan that moves messages into an empty target of room `capacity`, from both staging queues unless given. */
const distributed = (capacity: number, plan: Partial<TargetShares>): TargetShares => ({
  outcome: 'distributed',
  limits: anyLimits,
  maxLength: capacity,
  depth: 0,
  capacity,
  queues: both,
  shares: [],
  ...plan,
});

describe('planTarget (what a pass does with one target, without RabbitMQ)', () => {
  it.each<[string, Partial<TargetMeasurement>, Record<string, string>, TargetPlan]>([
    [
      'a missing target is skipped by default, whatever its staging queues hold',
      { depth: undefined, targetQueue: undefined },
      {},
      { outcome: 'target-missing' },
    ],
    [
      'a missing target is created with the new-target arguments, empty, and filled by its x-max-length',
      { depth: undefined, targetQueue: undefined },
      { DISTRIBUTOR_MISSING_TARGET: 'create', DISTRIBUTOR_NEW_TARGET_ARGUMENTS: '{"x-max-length":6}' },
      distributed(6, { createWith: { 'x-max-length': 6 }, shares: shares(3, 3) }),
    ],
    [
      "a missing target's own configured arguments win over the new-target arguments",
      { depth: undefined, targetQueue: undefined },
      {
        DISTRIBUTOR_MISSING_TARGET: 'create',
        DISTRIBUTOR_TARGETS: '{"work":{"arguments":{"x-max-length":2}}}',
      },
      distributed(2, { createWith: { 'x-max-length': 2 }, shares: shares(1, 1) }),
    ],
    [
      'a full target moves nothing: no queue gets a share',
      { depth: 10 },
      {},
      { outcome: 'below-threshold', limits: anyLimits, maxLength: 10, depth: 10, capacity: 0, queues: [], shares: [] },
    ],
    [
      'room below the refill threshold (10 %) moves nothing',
      { depth: 95, ...limit(100) },
      {},
      { outcome: 'below-threshold', limits: anyLimits, maxLength: 100, depth: 95, capacity: 0, queues: [], shares: [] },
    ],
    [
      'a queue that holds less than its share gets all it holds; the rest goes to the others',
      { depth: 0 },
      {},
      distributed(10, { shares: shares(4, 6) }),
    ],
    [
      'empty (or deleted) staging queues get no share',
      {
        staging: [
          { name: 'work»/a', depth: 0 },
          { name: 'work»/b', depth: 8 },
        ],
      },
      {},
      {
        outcome: 'distributed',
        limits: anyLimits,
        maxLength: 10,
        depth: 0,
        capacity: 10,
        queues: [queue('work»/b', 8)],
        shares: [{ name: 'work»/b', share: 8 }],
      },
    ],
    [
      'weights from the settings shape the shares',
      {
        staging: [
          { name: 'work»/a', depth: 50 },
          { name: 'work»/b', depth: 50 },
        ],
      },
      { DISTRIBUTOR_WEIGHTS: '[{"pattern":"work»/b","weight":4}]' },
      {
        outcome: 'distributed',
        limits: anyLimits,
        maxLength: 10,
        depth: 0,
        capacity: 10,
        queues: [queue('work»/a', 50), queue('work»/b', 50, 4)],
        shares: [
          { name: 'work»/a', share: 2 },
          { name: 'work»/b', share: 8 },
        ],
      },
    ],
    [
      'a remainder unit goes to the queue after the stored cursor, and the moved cursor is to be stored',
      {
        ...limit(1),
        rotationCursor: 'work»/a',
      },
      {},
      distributed(1, { shares: shares(0, 1), rotationCursor: 'work»/b' }),
    ],
    [
      'without a remainder the cursor stays, and nothing is to be stored',
      { ...limit(2), rotationCursor: 'work»/a' },
      {},
      distributed(2, { shares: shares(1, 1) }),
    ],
    [
      'the reference planner gives each non-empty queue ceil(capacity / N), capped at its depth',
      { ...limit(5) },
      { DISTRIBUTOR_PLANNER: 'reference' },
      distributed(5, { shares: shares(3, 3) }),
    ],
  ])('%s', (_name, measurement, env, expected) => {
    const config = settings(env);
    expect(planTarget(measured(measurement), config, configuredWeights(config.weights))).toEqual(expected);
  });

  it('no room and no threshold (a test-only fixed value of 0): distributed, with nothing to move', () => {
    const config = settings({}, { refillThresholdPercent: 0 });
    expect(planTarget(measured({ depth: 10 }), config, configuredWeights(config.weights))).toEqual({
      outcome: 'distributed',
      limits: anyLimits,
      maxLength: 10,
      depth: 10,
      capacity: 0,
      queues: [],
      shares: [],
    });
  });
});

describe('planTarget within the effective limits (issue 23 item 1)', () => {
  const config = settings({ DISTRIBUTOR_DEFAULT_MAX_LENGTH: '1000' });
  const plan = (overrides: Partial<TargetMeasurement>) =>
    planTarget(measured({ targetQueue: undefined, depth: 0, ...overrides }), config, one) as TargetShares;
  const policy = (definition: Record<string, unknown>) => ({
    name: 'p',
    pattern: '^work$',
    applyTo: 'queues',
    priority: 0,
    definition,
  });

  it('a policy max-length below the argument is the limit', () => {
    const limited = plan({
      ...limit(10),
      policies: { policies: [policy({ 'max-length': 3 })], operatorPolicies: [] },
    });
    expect(limited).toMatchObject({ maxLength: 3, capacity: 3, limits: { maxLength: 3, policies: ['p'] } });
  });

  it('a byte limit leaves room for what fits: the held bytes (never less than depth × the larger average) off the limit', () => {
    const bytes = plan({
      targetQueue: { arguments: { 'x-max-length-bytes': 100 }, messages_ready: 2, message_bytes_ready: 40 },
      depth: 4,
      stagedMessageBytes: 10,
    });
    // 4 held at 20 bytes each (the listed average) = 80: room for 20 bytes, two staged messages.
    expect(bytes).toMatchObject({ byteRoom: 20, capacity: 2, limits: { maxLengthBytes: 100 } });
    expect(bytes.shares.reduce((n, s) => n + s.share, 0)).toBe(2);
  });

  it('an operator policy byte limit counts for a target to be created', () => {
    const created = planTarget(
      measured({
        targetQueue: undefined,
        depth: undefined,
        stagedMessageBytes: 25,
        policies: { policies: [], operatorPolicies: [policy({ 'max-length-bytes': 50 })] },
      }),
      settings({ DISTRIBUTOR_MISSING_TARGET: 'create' }),
      one,
    );
    expect(created).toMatchObject({ byteRoom: 50, capacity: 2, createWith: { 'x-max-priority': 9 } });
  });
});
