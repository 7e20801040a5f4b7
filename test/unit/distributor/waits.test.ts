import { withWaits } from '../../../lib/distributor/moving/move-request';
import { longestWaits, type WaitFigures, waitFigures, waitOf, waitReport } from '../../../lib/distributor/waits';
import { STAGED_AT_HEADER, stampStagedAt } from '../../../lib/staging/staging-names';

describe('waitOf (a message taken from staging at a time)', () => {
  it.each<[string, Record<string, unknown> | undefined, number | undefined]>([
    ['stamped 1.5 s before', stampStagedAt({}, 10_000), 1_500],
    ['routed before the stamp existed: not measured', { other: 1 }, undefined],
    ['no headers: not measured', undefined, undefined],
    ['stamped by a clock a little ahead: 0, never negative', stampStagedAt({}, 11_600), 0],
    ['a number its sender put in the header: not a wait', { [STAGED_AT_HEADER]: 1 }, undefined],
  ])('%s', (_name, headers, expected) => {
    expect(waitOf(headers, 11_500)).toBe(expected);
  });
});

describe('waitFigures (nearest-rank percentiles)', () => {
  it.each<[string, number[], WaitFigures | undefined]>([
    ['nothing measured: no figures (not a zero wait)', [], undefined],
    ['one message', [40], { measured: 1, p50Ms: 40, p99Ms: 40, maxMs: 40 }],
    ['two: p50 is the lower', [30, 10], { measured: 2, p50Ms: 10, p99Ms: 30, maxMs: 30 }],
    ['four, unsorted', [4, 1, 3, 2], { measured: 4, p50Ms: 2, p99Ms: 4, maxMs: 4 }],
  ])('%s', (_name, waits, expected) => {
    expect(waitFigures(waits)).toEqual(expected);
  });

  it('over 1..1000 the p50 is 500 and the p99 990; the input is left as it was', () => {
    const waits = Array.from({ length: 1000 }, (_, i) => 1000 - i);
    expect(waitFigures(waits)).toEqual({ measured: 1000, p50Ms: 500, p99Ms: 990, maxMs: 1000 });
    expect(waits[0]).toBe(1000);
  });
});

const figures = (maxMs: number): WaitFigures => ({ measured: 1, p50Ms: maxMs, p99Ms: maxMs, maxMs });

describe('longestWaits', () => {
  it('keeps the measured queues, longest first (ties by name), at most the limit', () => {
    const queues = [
      { name: 'q»/c', wait: figures(5) },
      { name: 'q»/unmeasured' },
      { name: 'q»/b', wait: figures(9) },
      { name: 'q»/a', wait: figures(9) },
      { name: 'q»/d', wait: figures(1) },
    ];
    expect(longestWaits(queues, 3).map((q) => q.name)).toEqual(['q»/a', 'q»/b', 'q»/c']);
  });

  it('ten per target by default', () => {
    const queues = Array.from({ length: 25 }, (_, i) => ({ name: `q»/t${i}`, wait: figures(i) }));
    expect(longestWaits(queues)).toHaveLength(10);
    expect(longestWaits(queues)[0]!.name).toBe('q»/t24');
  });
});

describe('waitReport (what a pass logs of its waits)', () => {
  const targets = [
    {
      target: 'w',
      queues: [
        { name: 'w»/t1/wf', wait: { measured: 3, p50Ms: 100, p99Ms: 61_000, maxMs: 61_000 } },
        { name: 'w»/t2', wait: figures(60_000) },
        { name: 'w»/t3' },
      ],
    },
    { target: 'quiet', queues: [{ name: 'quiet»/t1' }] },
  ];

  it('one line per measured queue with its tenant and workflow; unmeasured queues have none', () => {
    expect(waitReport(targets, 60_000).lines).toEqual([
      {
        target: 'w',
        stagingQueue: 'w»/t1/wf',
        tenant: 't1',
        workflow: 'wf',
        waitMs: 61_000,
        waitP50Ms: 100,
        measured: 3,
      },
      { target: 'w', stagingQueue: 'w»/t2', tenant: 't2', waitMs: 60_000, waitP50Ms: 60_000, measured: 1 },
    ]);
  });

  it('a queue is over the bound only when its longest wait passes it (60 s is not over 60 s)', () => {
    expect(waitReport(targets, 60_000).overBound).toEqual([
      { target: 'w', queues: 1, longest: [{ stagingQueue: 'w»/t1/wf', waitMs: 61_000 }] },
    ]);
    expect(waitReport(targets, 59_999).overBound[0]!.queues).toBe(2);
    expect(waitReport(targets, 61_000).overBound).toEqual([]);
  });
});

describe('withWaits (a move result and the target’s shared waits)', () => {
  const request = { source: 's', target: 't', count: 1, prefetch: 1, deadline: 0, idleStopMs: 1, publisherUser: 'u' };
  const result = { moved: 2, requeued: 0, parked: 0, stopReason: 'share-moved' as const };

  it('adds the figures and gives the waits to the target; nothing measured leaves the result as it was', () => {
    const waitsMs = [5];
    expect(withWaits(result, [3, 9], { ...request, waitsMs })).toEqual({
      ...result,
      wait: { measured: 2, p50Ms: 3, p99Ms: 9, maxMs: 9 },
    });
    expect(waitsMs).toEqual([5, 3, 9]);
    expect(withWaits(result, [], { ...request, waitsMs })).toBe(result);
  });

  it('a share larger than a spread argument list (200,000 messages) is handed over whole', () => {
    const waitsMs: number[] = [];
    const many = Array.from({ length: 200_000 }, (_, i) => i);
    expect(withWaits(result, many, { ...request, waitsMs }).wait?.maxMs).toBe(199_999);
    expect(waitsMs).toHaveLength(200_000);
  });
});
