import type { PassSummary } from '../../../lib/distributor/report';
import type { WaitRow } from '../../../local/ops/tenant-waits';
import { PassTap, perSecond, RateWindow } from '../../../local/stack/passes';
import { lastWait, type Snapshot } from '../../../local/stack/snapshot';
import { sparkline, Trends } from '../../../local/stack/trends';
import { recordTrends, renderView } from '../../../local/stack/view';

describe('sparkline', () => {
  it.each<[string, (number | undefined)[], number | undefined, string]>([
    ['nothing yet', [], undefined, ''],
    ['all zero: the lowest bar', [0, 0, 0], undefined, '▁▁▁'],
    ['scaled to the largest', [0, 1, 2, 3, 4, 5, 6, 7], undefined, '▁▂▃▄▅▆▇█'],
    ['not known: a blank', [4, undefined, 8], undefined, '▅ █'],
    ['on a given scale, a flat series is drawn at its height', [1, 1, 1], 7, '▂▂▂'],
  ])('%s', (_name, values, max, expected) => {
    expect(sparkline(values, max)).toBe(expected);
  });
});

describe('Trends', () => {
  it('keeps the last values of each key, one per sample', () => {
    const trends = new Trends(3);
    for (const v of [1, 2, 3, 8]) trends.add('a:x', v);
    expect(trends.line('a:x')).toBe('▃▄█');
    expect(trends.line('a:unknown')).toBe('');
  });

  it('the lines of one figure share a scale: a flat low series is not drawn as full bars (issue 38, item 2)', () => {
    const trends = new Trends();
    for (const [quiet, noisy] of [
      [0.5, 7],
      [0.5, 3.5],
      [0.5, 7],
    ]) {
      trends.add('moved:quiet', quiet);
      trends.add('moved:noisy', noisy);
      trends.add('wait:quiet', 100);
    }
    expect(trends.line('moved:quiet')).toBe('▂▂▂');
    expect(trends.line('moved:noisy')).toBe('█▅█');
    expect(trends.scale('moved:')).toBe(7);
    // Another figure has its own scale.
    expect(trends.line('wait:quiet')).toBe('███');
  });
});

/** A pass that moved `moved` messages from each named queue. */
const pass = (moved: Record<string, number>): PassSummary =>
  ({
    targets: [
      {
        target: 'w',
        queues: Object.entries(moved).map(([name, n]) => ({ name, moved: n })),
      },
    ],
  }) as unknown as PassSummary;

describe('RateWindow (moved/s and processed/s over one window)', () => {
  it('places each pass at its own end: an execution of many passes is a rate, not its total at once', () => {
    // One execution of 30 passes over 30 s, 10 messages each: 10/s, whatever the execution's end.
    const rates = new RateWindow(30_000, 0);
    rates.sample(new Map([['t1', 0]]), 0);
    for (let s = 1; s <= 30; s++) {
      rates.addPass(pass({ 'w»/t1': 10 }), s * 1000);
      rates.sample(new Map([['t1', s * 10]]), s * 1000);
    }
    const window = rates.span(30_000);
    expect(window.seconds).toBe(30);
    expect(
      perSecond(
        rates.moved((q) => q === 'w»/t1', window.from),
        window.seconds,
      ),
    ).toBe(10);
    expect(perSecond(30 * 10 - (window.base.get('t1') ?? 0), window.seconds)).toBe(10);
  });

  it('forgets passes and samples older than the window; early on, the span is what has run', () => {
    const rates = new RateWindow(10_000, 0);
    rates.sample(new Map(), 0);
    rates.addPass(pass({ q: 100 }), 500);
    expect(rates.span(2_000).seconds).toBe(2);
    for (let s = 1; s <= 20; s++) rates.sample(new Map(), s * 1000);
    rates.addPass(pass({ q: 5, other: 7 }), 19_500);
    const window = rates.span(20_000);
    expect(window.seconds).toBe(10);
    expect(rates.moved((q) => q === 'q', window.from)).toBe(5);
  });
});

describe('PassTap (each pass from its log line, as it is written)', () => {
  it('reads the distributor pass lines, across chunk boundaries, and nothing else', () => {
    const seen: [number, number][] = [];
    const tap = new PassTap((summary, at) => seen.push([summary.moved, at]));
    const line = JSON.stringify({ level: 'INFO', message: 'Distribution pass', pass: { moved: 4, targets: [] } });
    tap.write(`{"message":"Routed"}\n${line.slice(0, 20)}`, 1);
    tap.write(`${line.slice(20)}\n`, 2);
    tap.write('{"message":"said \\"Distribution pass\\""}\nnot json "Distribution pass"\n', 3);
    tap.write(Buffer.from(`${line}\n`), 4);
    expect(seen).toEqual([
      [4, 2],
      [4, 4],
    ]);
  });
});

describe('lastWait (a tenant’s wait as `fairway tenants` shows it)', () => {
  const row = (tenant: string, waitSeconds: number, at: number): WaitRow => ({
    tenant,
    target: 'w',
    waitSeconds,
    p50Seconds: 0,
    measured: 1,
    measuredAt: new Date(at).toISOString(),
  });
  it.each<[string, WaitRow[], { waitSeconds?: number; waitAgeSeconds?: number }]>([
    ['none kept', [], {}],
    ['another tenant’s only', [row('t2', 3, 0)], {}],
    [
      'the last measured, with its age',
      [row('t1', 29.8, 10_000), row('t1', 1.4, 2_000)],
      { waitSeconds: 29.8, waitAgeSeconds: 5 },
    ],
    [
      'measured together: the longest',
      [row('t1', 1, 10_000), row('t1', 4, 10_000)],
      { waitSeconds: 4, waitAgeSeconds: 5 },
    ],
  ])('%s', (_name, rows, expected) => {
    expect(lastWait(rows, 't1', 15_000)).toEqual(expected);
  });
});

describe('renderView', () => {
  const snapshot = (waitSeconds?: number, movedPerSecond = 2): Snapshot => ({
    elapsedSeconds: 10,
    takenAt: '2026-01-01T00:00:00.000Z',
    rateWindowSeconds: 29.6,
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
        processedPerSecond: 1.5,
        processed: 0,
        ...(waitSeconds === undefined ? {} : { waitSeconds, waitAgeSeconds: 2 }),
      },
    ],
    passesOnDemand: 0,
    jobs: [],
    staging: { stagingQueues: 1, reaped: 0, byTarget: [] },
    registry: { documents: 0, eligible: 0, repositoryPending: 0, deletedBy: {} } as unknown as Snapshot['registry'],
  });

  it('shows the window, the measured wait with its age, and trend lines on a stated scale', () => {
    const trends = new Trends();
    for (const [wait, moved] of [
      [1, 4],
      [2, 2],
      [4, 1],
    ] as const)
      recordTrends(trends, snapshot(wait, moved));
    const text = renderView(snapshot(4, 1), [], { trends });
    expect(text).toContain('moved/s and processed/s over the last 30 s');
    expect(text).toContain('a full bar is 4/s moved, 4 s waited');
    expect(text).toMatch(
      /^tenant\s.*moved\/s trend\s+processed\/s\s+wait \(s\)\s+measured \(s ago\)\s+wait trend\s+processed$/m,
    );
    expect(text).toMatch(/^t1\s.*\s1 +█▅▃ +1.5 +4 +2 +▃▅█ +0$/m);
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
