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

/** A pass of `durationMs` that moved `moved` messages from each named queue. */
const pass = (moved: Record<string, number>, durationMs = 0): PassSummary =>
  ({
    durationMs,
    targets: [
      {
        target: 'w',
        queues: Object.entries(moved).map(([name, n]) => ({ name, moved: n })),
      },
    ],
  }) as unknown as PassSummary;

describe('RateWindow (moved/s and processed/s over one window)', () => {
  /** A window whose worker has processed what `counts` holds when sampled. */
  const window = (windowMs: number, counts = new Map<string, number>()) => new RateWindow(windowMs, 0, () => counts);

  it('places each pass at its own span: an execution of many passes is a rate, not its total at once', () => {
    // One execution of 30 passes over 30 s, 10 messages each: 10/s, whatever the execution's end.
    const counts = new Map([['t1', 0]]);
    const rates = window(30_000, counts);
    for (let s = 1; s <= 30; s++) {
      counts.set('t1', s * 10);
      rates.addPass(pass({ 'w»/t1': 10 }, 1000), s * 1000);
    }
    const span = rates.span(30_000);
    expect(span.seconds).toBe(30);
    expect(
      perSecond(
        rates.moved((q) => q === 'w»/t1', span),
        span.seconds,
      ),
    ).toBe(10);
    expect(perSecond(rates.processedIn('t1', span), span.seconds)).toBe(10);
  });

  it('counts of a pass only the part of its span in the window: a 2 s pass across its start, not its 40 moves (issue 38)', () => {
    const rates = window(10_000);
    rates.addPass(pass({ q: 40 }, 2_000), 11_000);
    rates.addPass(pass({ q: 40 }, 2_000), 13_000);
    const span = rates.span(20_000);
    expect(span).toEqual({ from: 10_000, to: 20_000, seconds: 10 });
    expect(rates.moved((q) => q === 'q', span)).toBe(60);
  });

  it('while an execution runs, ends the window at its last logged pass, and takes the workers’ counts over that span', () => {
    const counts = new Map([['t1', 0]]);
    const rates = window(10_000, counts);
    rates.executionStarted('r1', 5_000);
    counts.set('t1', 100);
    rates.sample(10_000);
    counts.set('t1', 150);
    rates.addPass(pass({ q: 30 }, 3_000), 14_000, 'r1');
    // Moved and processed after the last pass are not in the window: its moves are not known yet.
    counts.set('t1', 400);
    const running = rates.span(16_000);
    expect(running).toEqual({ from: 4_000, to: 14_000, seconds: 10 });
    expect(rates.processedIn('t1', running)).toBe(150 - 40); // 40: interpolated between 0 at 0 and 100 at 10 s
    expect(rates.moved((q) => q === 'q', running)).toBe(30);
    rates.executionEnded('r1');
    expect(rates.span(16_000).to).toBe(16_000);
  });

  it('early on, the span is what has run; an execution that logged no pass yet holds the window at its start', () => {
    const rates = window(10_000);
    rates.addPass(pass({ q: 100 }), 500);
    expect(rates.span(2_000).seconds).toBe(2);
    rates.executionStarted('r2', 3_000);
    rates.addPass(pass({ q: 5, other: 7 }), 3_500, 'another execution');
    expect(rates.span(4_000)).toEqual({ from: 0, to: 3_000, seconds: 3 });
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
    rateWindowEnd: '2025-12-31T23:59:58.000Z',
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
    expect(text).toContain('moved/s and processed/s over the 30 s to 2 s ago');
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
