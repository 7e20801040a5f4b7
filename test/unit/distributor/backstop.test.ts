import { runBackstop, type StagingQueuesByTarget } from '../../../lib/distributor/backstop';
import type { QueueInfo } from '../../../lib/rabbitmq/management';
import { parseBoard } from '../../../lib/work-board/work-board';

/** A work board whose listing turn is `took`; the targets it is asked passes for go to `requested`. */
const board = (took: boolean, requested: string[][] = []) => ({
  takeListing: async () => took,
  request: async (targets: readonly string[]) => {
    requested.push([...targets]);
    return parseBoard(undefined);
  },
});
const listed = (name: string, ready: number) => ({ name, messages: ready, messages_ready: ready }) as QueueInfo;

describe('runBackstop: one grouping of the listing serves the board and the reaper', () => {
  it('hands the reaper the staging queues by target, the other queues left out, and asks passes for those with ready messages', async () => {
    const listing = [listed('a', 3), listed('a»/t1', 0), listed('a»/t2', 4), listed('b»/t1', 0), listed('other', 9)];
    const requested: string[][] = [];
    const reaped: StagingQueuesByTarget[] = [];
    const listedReport = jest.fn();
    const ran = await runBackstop({
      board: board(true, requested),
      listQueues: async () => listing,
      reapIdleStagingQueues: async (byTarget) => void reaped.push(byTarget),
      intervalMs: 60_000,
      report: { backstopListed: listedReport },
      now: () => 1_000,
    });
    expect(ran).toBe(true);
    expect(reaped.map((byTarget) => Object.fromEntries(byTarget))).toEqual([
      { a: [listing[1], listing[2]], b: [listing[3]] },
    ]);
    expect(requested).toEqual([['a']]);
    expect(listedReport).toHaveBeenCalledWith({ queues: 5, recorded: 0, wanted: 1 });
  });

  it('neither lists nor reaps when another execution listed within the interval', async () => {
    const reap = jest.fn();
    const listQueues = jest.fn();
    const ran = await runBackstop({
      board: board(false),
      listQueues,
      reapIdleStagingQueues: reap,
      intervalMs: 60_000,
      report: { backstopListed: jest.fn() },
    });
    expect([ran, listQueues.mock.calls.length, reap.mock.calls.length]).toEqual([false, 0, 0]);
  });

  it('asks a pass for a target whose staging queue it records now, though the lagging listing shows it empty (issue 34)', async () => {
    const listing = [listed('made-elsewhere»/t1', 0), listed('known»/t1', 0)];
    const requested: string[][] = [];
    const touched: string[] = [];
    const ran = await runBackstop({
      board: board(true, requested),
      listQueues: async () => listing,
      registry: {
        queuesOf: async (target) => (target === 'known' ? [{ target, queue: 'known»/t1', touchedAt: 0 }] : []),
        touch: async (_target, queue) => {
          touched.push(queue);
          return 'recorded';
        },
      },
      intervalMs: 60_000,
      report: { backstopListed: jest.fn() },
      now: () => 1_000,
    });
    expect([ran, touched, requested]).toEqual([true, ['made-elsewhere»/t1'], [['made-elsewhere']]]);
  });
});
