import type { PassSummary, QueueSummary } from '../../../lib/distributor/report';
import type { RecentPass, Snapshot } from '../../../local/stack/snapshot';
import { measuredWait, sparkline, Trends } from '../../../local/stack/trends';
import { recordTrends, renderView } from '../../../local/stack/view';

describe('sparkline', () => {
  it.each<[string, (number | undefined)[], string]>([
    ['nothing yet', [], ''],
    ['all zero: the lowest bar', [0, 0, 0], '▁▁▁'],
    ['scaled to the largest', [0, 1, 2, 3, 4, 5, 6, 7], '▁▂▃▄▅▆▇█'],
    ['one value is the top', [3], '█'],
    ['not known: a blank', [4, undefined, 8], '▅ █'],
  ])('%s', (_name, values, expected) => {
    expect(sparkline(values)).toBe(expected);
  });
});

describe('Trends', () => {
  it('keeps the last values of each key, one per sample', () => {
    const trends = new Trends(3);
    for (const v of [1, 2, 3, 8]) trends.add('a', v);
    trends.add('b', 0);
    expect(trends.line('a')).toBe('▃▄█');
    expect(trends.line('b')).toBe('▁');
    expect(trends.line('unknown')).toBe('');
  });
});

const queue = (name: string, maxMs?: number): QueueSummary => ({
  name,
  depth: 0,
  weight: 1,
  planned: 1,
  moved: 1,
  requeued: 0,
  parked: 0,
  ...(maxMs === undefined ? {} : { wait: { measured: 1, p50Ms: maxMs, p99Ms: maxMs, maxMs } }),
});
const pass = (at: number, queues: QueueSummary[]): RecentPass => ({
  at,
  onDemand: true,
  summary: { targets: [{ target: 'w', queues }] } as unknown as PassSummary,
});

describe('measuredWait (the view: a tenant’s wait as the distributor measured it)', () => {
  const mine = new Set(['w»/t1', 'w»/t1/wf']);
  it.each<[string, RecentPass[], number | undefined]>([
    ['no pass yet', [], undefined],
    ['only unstamped messages moved (routed before the stamp)', [pass(1, [queue('w»/t1')])], undefined],
    [
      'the longest of its queues in a pass, in seconds',
      [pass(1, [queue('w»/t1', 1_240), queue('w»/t1/wf', 3_050)])],
      3.1,
    ],
    ['the latest pass that measured one wins', [pass(1, [queue('w»/t1', 9_000)]), pass(2, [queue('w»/t1', 200)])], 0.2],
    [
      'a later pass that measured none of its queues does not hide the last wait',
      [pass(1, [queue('w»/t1', 2_000)]), pass(2, [queue('w»/other', 50_000)])],
      2,
    ],
  ])('%s', (_name, passes, expected) => {
    expect(measuredWait(passes, mine)).toBe(expected);
  });
});

describe('renderView', () => {
  const snapshot = (waitSeconds?: number, movedPerSecond = 2): Snapshot => ({
    elapsedSeconds: 10,
    simulatedMinutes: 1,
    speed: 1,
    tenants: [
      {
        tenant: 't1',
        sent: 1,
        routed: 1,
        deadLettered: 0,
        staged: 3,
        movedPerSecond,
        processed: 0,
        ...(waitSeconds === undefined ? {} : { waitSeconds }),
      },
    ],
    passesOnDemand: 0,
    jobs: [],
    staging: { stagingQueues: 1, reaped: 0, byTarget: [] },
    registry: { documents: 0, eligible: 0, repositoryPending: 0, deletedBy: {} } as unknown as Snapshot['registry'],
  });

  it('shows the measured wait and trend lines of wait and moved/s', () => {
    const trends = new Trends();
    for (const [wait, moved] of [
      [1, 4],
      [2, 2],
      [4, 1],
    ] as const)
      recordTrends(trends, snapshot(wait, moved));
    const text = renderView(snapshot(4, 1), [], { trends });
    expect(text).toMatch(/^tenant\s.*moved\/s trend\s+wait \(s\)\s+wait trend\s+processed$/m);
    expect(text).toMatch(/^t1\s.*\s1 +█▅▃ +4 +▃▅█ +0$/m);
    expect(text).not.toContain('STALE');
  });

  it('a staged tenant not measured yet says so; a stale picture is marked with why', () => {
    const text = renderView(snapshot(undefined), [], {
      trends: new Trends(),
      stale: { since: Date.now() - 3_000, error: 'connect ECONNREFUSED 127.0.0.1:15672' },
    });
    expect(text).toContain('not yet');
    expect(text.split('\n')[1]).toMatch(/^STALE: the last picture, from 3 s ago; .*ECONNREFUSED/);
  });
});
