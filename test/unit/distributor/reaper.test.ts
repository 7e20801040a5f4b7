import { type QueueDeleter, reapStagingQueues } from '../../../lib/distributor/backstop';
import {
  REAP_DELETE_WITHIN_MS,
  type ReapingRegistry,
  type StagingQueueRecord,
} from '../../../lib/staging/staging-registry';

const HOUR = 3_600_000;
const NOW = 100 * HOUR;

/** A registry whose calls are recorded; marks always succeed. */
function fakes(records: StagingQueueRecord[], deleteAnswer: () => Promise<'deleted' | 'in-use'>) {
  const calls: string[] = [];
  const registry: ReapingRegistry = {
    touch: async () => 'recorded',
    queuesOf: async () => records,
    adopt: async (_t, q) => {
      calls.push(`adopt ${q}`);
      return true;
    },
    markReaping: async (_t, q) => {
      calls.push(`mark ${q}`);
      return true;
    },
    removeReaped: async (_t, q) => {
      calls.push(`remove ${q}`);
    },
    clearMark: async (_t, q) => {
      calls.push(`clear ${q}`);
    },
    countReaped: async (_t, n) => {
      calls.push(`count ${n}`);
    },
    reapedCounts: async () => ({}),
  };
  const queues: QueueDeleter = {
    deleteIfIdle: async (q) => {
      calls.push(`delete ${q}`);
      return deleteAnswer();
    },
  };
  const failures: string[] = [];
  const report = { reapFailed: (_t: string, q: string, e: string) => failures.push(`${q}: ${e}`) };
  return { registry, queues, calls, failures, report };
}
const old = (queue: string): StagingQueueRecord => ({ target: 't', queue, touchedAt: NOW - 2 * HOUR });
const idle = (name: string) => ({ name, messages: 0, consumers: 0 });

describe('reapStagingQueues: mark, delete, record', () => {
  it('marks, deletes, removes the record and counts; a gone queue is pruned without a broker call', async () => {
    const f = fakes([old('t»/a'), old('t»/gone')], async () => 'deleted');
    const result = await reapStagingQueues({ ...f, reapAfterMs: HOUR, now: () => NOW }, 't', [idle('t»/a')], NOW);
    expect(result).toEqual({ reaped: ['t»/a'] });
    expect(f.calls).toEqual(['mark t»/a', 'delete t»/a', 'remove t»/a', 'mark t»/gone', 'remove t»/gone', 'count 1']);
  });

  it('clears its mark when the broker refuses the delete (a message or a consumer)', async () => {
    const f = fakes([old('t»/a')], async () => 'in-use');
    expect(await reapStagingQueues({ ...f, reapAfterMs: HOUR, now: () => NOW }, 't', [idle('t»/a')], NOW)).toEqual({
      reaped: [],
    });
    expect(f.calls).toEqual(['mark t»/a', 'delete t»/a', 'clear t»/a']);
  });

  it('deletes nothing when the mark came back too late (a router may soon take it as stale)', async () => {
    let now = NOW;
    const f = fakes([old('t»/a')], async () => 'deleted');
    const registry = {
      ...f.registry,
      markReaping: async (...args: Parameters<ReapingRegistry['markReaping']>) => {
        now += REAP_DELETE_WITHIN_MS + 1;
        return f.registry.markReaping(...args);
      },
    };
    await reapStagingQueues({ ...f, registry, reapAfterMs: HOUR, now: () => now }, 't', [idle('t»/a')], NOW);
    expect(f.calls).toEqual(['mark t»/a', 'clear t»/a']);
  });

  it('leaves the mark to go stale after a failed delete (it may still happen), reports it, and goes on', async () => {
    let first = true;
    const f = fakes([old('t»/a'), old('t»/b')], async () => {
      if (!first) return 'deleted';
      first = false;
      throw new Error('broker gone');
    });
    const result = await reapStagingQueues(
      { ...f, reapAfterMs: HOUR, now: () => NOW },
      't',
      [idle('t»/a'), idle('t»/b')],
      NOW,
    );
    expect(result).toEqual({ reaped: ['t»/b'] });
    expect(f.calls).toEqual(['mark t»/a', 'delete t»/a', 'mark t»/b', 'delete t»/b', 'remove t»/b', 'count 1']);
    expect(f.failures).toEqual(['t»/a: Error: broker gone']);
  });

  it('does nothing to a queue whose mark it lost (a router touched it)', async () => {
    const f = fakes([old('t»/a')], async () => 'deleted');
    const registry = { ...f.registry, markReaping: async () => false };
    expect(await reapStagingQueues({ ...f, registry, reapAfterMs: HOUR }, 't', [idle('t»/a')], NOW)).toEqual({
      reaped: [],
    });
    expect(f.calls).toEqual([]);
  });

  it('adopts, reaps and prunes at most maxPerCall queues per call, in that order', async () => {
    const f = fakes([old('t»/a'), old('t»/b'), old('t»/gone')], async () => 'deleted');
    const listed = [idle('t»/a'), idle('t»/b'), idle('t»/new')];
    const deps = { ...f, reapAfterMs: HOUR, maxPerCall: 2, now: () => NOW };
    expect(await reapStagingQueues(deps, 't', listed, NOW)).toEqual({ reaped: ['t»/a'] });
    expect(f.calls).toEqual(['adopt t»/new', 'mark t»/a', 'delete t»/a', 'remove t»/a', 'count 1']);
  });
});
