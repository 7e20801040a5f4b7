import { type ListedStagingQueue, planReaping } from '../../../lib/distributor/backstop';
import type { StagingQueueRecord } from '../../../lib/staging/staging-registry';
import { REAPING_MARK_STALE_MS } from '../../../lib/staging/staging-registry';

const HOUR = 3_600_000;
const now = 10 * HOUR;
const record = (queue: string, touchedAgo: number, reapingAgo?: number): StagingQueueRecord => ({
  target: 't',
  queue,
  touchedAt: now - touchedAgo,
  ...(reapingAgo === undefined ? {} : { reapingAt: now - reapingAgo }),
});
const listed = (name: string, extra: Partial<ListedStagingQueue> = {}): ListedStagingQueue => ({
  name,
  messages: 0,
  consumers: 0,
  ...extra,
});

describe('planReaping: which staging queues the reaper deletes, adopts, or prunes', () => {
  it.each<[string, StagingQueueRecord[], ListedStagingQueue[], Partial<ReturnType<typeof planReaping>>]>([
    [
      'empty, unused, untouched for the period: reaped',
      [record('t»/a', HOUR + 1)],
      [listed('t»/a')],
      { reap: ['t»/a'] },
    ],
    ['touched exactly a period ago: kept', [record('t»/a', HOUR)], [listed('t»/a')], {}],
    ['touched within the period: kept', [record('t»/a', HOUR - 1)], [listed('t»/a')], {}],
    ['holding a message (as listed): kept', [record('t»/a', 2 * HOUR)], [listed('t»/a', { messages: 1 })], {}],
    ['with a consumer: kept', [record('t»/a', 2 * HOUR)], [listed('t»/a', { consumers: 1 })], {}],
    [
      'consumers not listed: a candidate (the delete is if-unused)',
      [record('t»/a', 2 * HOUR)],
      [{ name: 't»/a', messages: 0 }],
      { reap: ['t»/a'] },
    ],
    ['classic by type: reaped', [record('t»/a', 2 * HOUR)], [listed('t»/a', { type: 'classic' })], { reap: ['t»/a'] }],
    [
      'quorum: never (if-empty is NOT_IMPLEMENTED for quorum queues)',
      [record('t»/a', 2 * HOUR)],
      [listed('t»/a', { type: 'quorum' })],
      {},
    ],
    ['stream: never', [record('t»/a', 2 * HOUR)], [listed('t»/a', { type: 'stream' })], {}],
    [
      'a fresh reaping mark (another reaper at work): left alone',
      [record('t»/a', 2 * HOUR, 1000)],
      [listed('t»/a')],
      {},
    ],
    [
      'a stale mark (its reaper died): reaped again',
      [record('t»/a', 2 * HOUR, REAPING_MARK_STALE_MS + 1)],
      [listed('t»/a')],
      { reap: ['t»/a'] },
    ],
    ['listed without a record: adopted, not reaped', [], [listed('t»/b')], { adopt: ['t»/b'] }],
    [
      'a record of a queue no longer listed, untouched: pruned',
      [record('t»/gone', 2 * HOUR)],
      [],
      { prune: ['t»/gone'] },
    ],
    ['a record not listed but touched lately (declared after the listing): kept', [record('t»/new', 1000)], [], {}],
    [
      'several, each list in name order',
      [record('t»/c', 2 * HOUR), record('t»/a', 2 * HOUR), record('t»/z', 2 * HOUR)],
      [listed('t»/c'), listed('t»/a'), listed('t»/d'), listed('t»/b')],
      { reap: ['t»/a', 't»/c'], adopt: ['t»/b', 't»/d'], prune: ['t»/z'] },
    ],
  ])('%s', (_, records, queues, expected) => {
    expect(planReaping(records, queues, HOUR, now)).toEqual({ adopt: [], reap: [], prune: [], ...expected });
  });

  it('reaps and prunes nothing with a period of 0, but still adopts', () => {
    expect(
      planReaping(
        [record('t»/a', 100 * HOUR), record('t»/gone', 100 * HOUR)],
        [listed('t»/a'), listed('t»/b')],
        0,
        now,
      ),
    ).toEqual({ adopt: ['t»/b'], reap: [], prune: [] });
  });
});
