import {
  addUsage,
  costParts,
  dollars,
  dynamoRequestKind,
  gbSeconds,
  IdleWhileStaged,
  InFlight,
  isVhostListing,
  monthlyPerTarget,
  noUsage,
  PRICES_STATED,
  perMillion,
  pick,
  quantile,
  sqsBatches,
  tenantWeights,
} from '../../../bench/lib/fleet-metrics';

describe('list prices', () => {
  it.each([
    // usage → US$
    [{ invocations: 1e6 }, 0.2],
    [{ gbSeconds: 1e6 }, 16.6667],
    [{ dynamoWrites: 1e6 }, 0.625],
    [{ dynamoReads: 1e6 }, 0.125],
    [{ sqsRequests: 1e6 }, 0.4],
    [{ invocations: 1e6, dynamoWrites: 2e6 }, 1.45],
  ])('%j costs $%d', (usage, expected) => {
    expect(dollars({ ...noUsage, ...usage })).toBeCloseTo(expected, 6);
  });

  it('are stated as they are used', () => {
    for (const figure of ['$0.20 per 1M requests', '$0.0000166667 per GB-s', '$0.625', '$0.125', '$0.40'])
      expect(PRICES_STATED).toContain(figure);
  });

  it('per million messages and per target-month', () => {
    const usage = { ...noUsage, invocations: 10, dynamoWrites: 100 };
    expect(perMillion(usage, 1_000)).toBeCloseTo(((10 * 0.2 + 100 * 0.625) / 1e6) * 1e3, 9);
    expect(perMillion(usage, 0)).toBe(0);
    // One minute's cost, for 2 targets: × 43,200 minutes in 30 days ÷ 2.
    expect(monthlyPerTarget(usage, 60_000, 2)).toBeCloseTo((dollars(usage) * 43_200) / 2, 9);
    expect(monthlyPerTarget(usage, 0, 2)).toBe(0);
  });

  it('splits a target-month into GB-s, DynamoDB and invocations (SQS is the router path)', () => {
    // 1,000 s of a 30-day month (2,592,000 s) for 1 target: × 2,592.
    const usage = {
      ...noUsage,
      gbSeconds: 10,
      dynamoWrites: 1_000,
      dynamoReads: 4_000,
      invocations: 500,
      sqsRequests: 9,
    };
    // GB-s 10 × $0.0000166667; DynamoDB 1,000 × $0.625 + 4,000 × $0.125 per million; 500 × $0.20 per million.
    expect(costParts(usage, 1_000_000, 1)).toBe('GB-s $0.43, DynamoDB $2.92, invocations $0.26');
  });

  it('adds usages field by field', () => {
    expect(
      addUsage({ ...noUsage, invocations: 1, gbSeconds: 0.5 }, { ...noUsage, invocations: 2, dynamoReads: 3 }),
    ).toEqual({ ...noUsage, invocations: 3, gbSeconds: 0.5, dynamoReads: 3 });
  });

  it.each([
    [1000, 512, 0.5],
    [0.2, 512, 0.0005], // billed by the millisecond, rounded up
    [250, 1024, 0.25],
  ])('%d ms at %d MB is %d GB-s', (ms, mb, expected) => {
    expect(gbSeconds(ms, mb)).toBeCloseTo(expected, 12);
  });
});

describe('executions in flight', () => {
  it('keeps the peak and the time-weighted mean', () => {
    let now = 0;
    const flight = new InFlight(() => now);
    flight.started(); // 1 from 0
    now = 10;
    flight.started(); // 2 from 10
    now = 20;
    flight.ended(); // 1 from 20
    now = 40;
    flight.ended(); // 0 from 40
    now = 50;
    expect(flight.read()).toEqual({ max: 2, mean: (10 + 20 + 20) / 50, now: 0 });
  });

  it('starts a new window on reset with what runs then', () => {
    let now = 0;
    const flight = new InFlight(() => now);
    flight.started();
    flight.started();
    now = 5;
    flight.ended();
    flight.reset();
    now = 15;
    expect(flight.read()).toEqual({ max: 1, mean: 1, now: 1 });
  });
});

describe('idle while staged', () => {
  it('counts only samples with staged work', () => {
    const idle = new IdleWhileStaged();
    idle.sample('a', 0, 0); // nothing staged: not counted
    idle.sample('a', 5, 0);
    idle.sample('a', 5, 3);
    idle.sample('a', 1, 1);
    idle.sample('a', 2, 0);
    idle.sample('b', 0, 0);
    expect(idle.fractions()).toEqual(new Map([['a', 0.5]]));
    expect(idle.samples('a')).toBe(4);
    expect(idle.samples('b')).toBe(0);
  });
});

describe('vhost listings', () => {
  const base = 'http://127.0.0.1:15672';
  it.each([
    [`${base}/api/queues/v1?columns=name`, true],
    [`${base}/api/queues/v1?columns=name&page=1&page_size=500&pagination=true`, true],
    [`${base}/api/queues/v1?columns=name&page=2&page_size=500&pagination=true`, false], // the same listing's next page
    [`${base}/api/queues/v1/some-queue?columns=name`, false],
    [`${base}/api/queues/v2?columns=name`, false],
    [`${base}/api/policies/v1`, false],
  ])('%s is a listing of v1: %s', (url, expected) => {
    expect(isVhostListing(url, 'v1')).toBe(expected);
  });

  it('names the default vhost encoded', () => {
    expect(isVhostListing(`${base}/api/queues/%2F`, '/')).toBe(true);
  });
});

describe('tenant mixes', () => {
  it('uniform weighs every tenant alike; Zipf 1/(i+1)', () => {
    expect(tenantWeights(4, 0)).toEqual([0.25, 0.5, 0.75, 1]);
    const zipf = tenantWeights(3, 1);
    const total = 1 + 1 / 2 + 1 / 3;
    expect(zipf[0]).toBeCloseTo(1 / total, 12);
    expect(zipf[1]).toBeCloseTo(1.5 / total, 12);
    expect(zipf[2]).toBe(1);
  });

  it.each([
    [0, 0],
    [0.24, 0],
    [0.25, 1],
    [0.74, 2],
    [0.99, 3],
  ])('a draw of %d picks tenant %d of four alike', (u, expected) => {
    expect(pick(tenantWeights(4, 0), u)).toBe(expected);
  });
});

describe('quantiles and batches', () => {
  it.each([
    [[], 0.99, 0],
    [[5], 0.99, 5],
    [[1, 2, 3, 4], 0.5, 2],
    [Array.from({ length: 100 }, (_, i) => 100 - i), 0.99, 99],
  ])('%j at %d is %d', (values, q, expected) => {
    expect(quantile(values, q)).toBe(expected);
  });

  it('splits what arrived in a window into batches of at most batchSize', () => {
    expect(sqsBatches([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(sqsBatches([], 100)).toEqual([]);
  });
});

describe('dynamoRequestKind', () => {
  const board = { TableName: 'DistributorStateTable', Key: { pk: { S: 'work-board' } } };
  it.each([
    [
      'GetItem',
      { TableName: 'DistributorStateTable', Key: { pk: { S: 'lease#busy-target-1' } } },
      'DistributorStateTable lease#',
    ],
    [
      'PutItem',
      { TableName: 'DistributorStateTable', Item: { pk: { S: 'rotation#t' } } },
      'DistributorStateTable rotation#',
    ],
    [
      'GetItem',
      { TableName: 'DistributorStateTable', Key: { pk: { S: 'tenant-controls' } } },
      'DistributorStateTable tenant-controls',
    ],
    ['GetItem', board, 'DistributorStateTable work-board'],
    [
      'UpdateItem',
      { ...board, UpdateExpression: 'SET #e = :until REMOVE starting' },
      'DistributorStateTable work-board: claim slot',
    ],
    [
      'UpdateItem',
      { ...board, UpdateExpression: 'REMOVE #e', ConditionExpression: 'version = :version' },
      'DistributorStateTable work-board: leave',
    ],
    ['UpdateItem', { ...board, UpdateExpression: 'REMOVE #e' }, 'DistributorStateTable work-board: hand off'],
    [
      'UpdateItem',
      { ...board, UpdateExpression: 'SET #s0 = :s0, #d0 = :d0' },
      'DistributorStateTable work-board: write served',
    ],
    [
      'UpdateItem',
      {
        ...board,
        UpdateExpression:
          'SET version = if_not_exists(version, :zero) + :one, #r0 = if_not_exists(version, :zero) + :one',
      },
      'DistributorStateTable work-board: request',
    ],
    ['Query', { TableName: 'StagingQueuesTable' }, 'StagingQueuesTable query'],
    ['UpdateItem', { TableName: 'TenantCountersTable', Key: { pk: { S: 'tenant7' } } }, 'TenantCountersTable item'],
  ])('%s %j is %s', (operation, body, expected) => {
    expect(dynamoRequestKind(operation, body)).toBe(expected);
  });
});
