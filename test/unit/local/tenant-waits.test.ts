import { noisyRows, waitRows } from '../../../local/ops/tenant-waits';

describe('waitRows (fairway tenants: the waits the distributor last measured)', () => {
  it('one row per staging queue, its tenant and workflow from the name, the longest first, in seconds', () => {
    const rows = waitRows([
      {
        target: 'scan',
        at: Date.UTC(2026, 0, 1),
        queues: [
          { queue: 'scan»/t1/ocr', maxMs: 1_250, p50Ms: 400, measured: 3 },
          { queue: 'scan»/wf-only', maxMs: 61_049, p50Ms: 61_049, measured: 1 },
        ],
      },
      {
        target: 'index',
        at: Date.UTC(2026, 0, 2),
        queues: [{ queue: 'index»/t1', maxMs: 5_000, p50Ms: 90, measured: 8 }],
      },
    ]);
    expect(rows).toEqual([
      {
        tenant: 'wf-only',
        target: 'scan',
        waitSeconds: 61,
        p50Seconds: 61,
        measured: 1,
        measuredAt: '2026-01-01T00:00:00.000Z',
      },
      {
        tenant: 't1',
        target: 'index',
        waitSeconds: 5,
        p50Seconds: 0.1,
        measured: 8,
        measuredAt: '2026-01-02T00:00:00.000Z',
      },
      {
        tenant: 't1',
        workflow: 'ocr',
        target: 'scan',
        waitSeconds: 1.3,
        p50Seconds: 0.4,
        measured: 3,
        measuredAt: '2026-01-01T00:00:00.000Z',
      },
    ]);
  });

  it('nothing stored: no rows', () => {
    expect(waitRows([])).toEqual([]);
  });
});

describe('noisyRows (fairway tenants: each target’s noisiest tenants as last recorded)', () => {
  it('one row per tenant and target, the most staged first over every target; a record without them adds none', () => {
    const rows = noisyRows([
      {
        target: 'scan',
        at: Date.UTC(2026, 0, 1),
        queues: [],
        backlog: [
          { tenant: 'bulk', staged: 900 },
          { tenant: 'b', staged: 3 },
        ],
      },
      { target: 'index', at: Date.UTC(2026, 0, 2), queues: [], backlog: [{ tenant: 'bulk', staged: 20_000 }] },
      { target: 'quiet', at: Date.UTC(2026, 0, 2), queues: [] },
    ]);
    expect(rows).toEqual([
      { target: 'index', tenant: 'bulk', staged: 20_000, seenAt: '2026-01-02T00:00:00.000Z' },
      { target: 'scan', tenant: 'bulk', staged: 900, seenAt: '2026-01-01T00:00:00.000Z' },
      { target: 'scan', tenant: 'b', staged: 3, seenAt: '2026-01-01T00:00:00.000Z' },
    ]);
  });
});
