import { backstopReaper, stagingQueuesByTarget } from '../../../lib/distributor/backstop';
import type { QueueInfo } from '../../../lib/rabbitmq/management';
import type { ReapingRegistry, StagingQueueRecord } from '../../../lib/staging/staging-registry';

const HOUR = 3_600_000;
const NOW = 100 * HOUR;

const listed = (name: string, messages: number) => ({ name, messages, messages_ready: messages }) as QueueInfo;
/** A vhost listing as the backstop hands it over: grouped by target, its other queues left out. */
const grouped = (...queues: QueueInfo[]) => stagingQueuesByTarget(queues);
const old = (target: string, queue: string): StagingQueueRecord => ({ target, queue, touchedAt: NOW - 2 * HOUR });

/** Every store and broker call, in order; `heldElsewhere` are targets an execution holds. */
function fakes(records: StagingQueueRecord[], heldElsewhere: string[] = []) {
  const calls: string[] = [];
  const registry = {
    queuesOf: async (target: string) => records.filter((r) => r.target === target),
    markReaping: async () => true,
    removeReaped: async (_t: string, q: string) => void calls.push(`remove ${q}`),
    clearMark: async () => undefined,
    adopt: async () => true,
    countReaped: async () => undefined,
  } as unknown as ReapingRegistry;
  const leases = {
    acquireLease: async (target: string) => {
      calls.push(`lease ${target}`);
      return !heldElsewhere.includes(target);
    },
    releaseLease: async (target: string) => void calls.push(`release ${target}`),
  };
  const queues = {
    deleteIfIdle: async (q: string) => {
      calls.push(`delete ${q}`);
      return 'deleted' as const;
    },
  };
  const report = { reapFailed: jest.fn(), leaseNotReleased: jest.fn() };
  return { calls, deps: { registry, leases, queues, report, leaseMs: 60_000, now: () => NOW } };
}

describe('backstopReaper: the backstop reaps under each target lease', () => {
  it('leases only targets with an empty staging queue, reaps, and releases', async () => {
    const f = fakes([old('a', 'a»/t1'), old('b', 'b»/t2')]);
    const reap = backstopReaper({ ...f.deps, reapAfterMs: HOUR });
    await reap(grouped(listed('a', 0), listed('a»/t1', 0), listed('b»/t2', 5), listed('other-queue', 0)), NOW);
    expect(f.calls).toEqual(['lease a', 'delete a»/t1', 'remove a»/t1', 'release a']);
  });

  it('leaves a target an execution holds to a later backstop: no delete without the lease', async () => {
    const f = fakes([old('a', 'a»/t1')], ['a']);
    await backstopReaper({ ...f.deps, reapAfterMs: HOUR })(grouped(listed('a»/t1', 0)), NOW);
    expect(f.calls).toEqual(['lease a']);
  });

  it('reaps nothing and takes no lease when the reap period is 0', async () => {
    const f = fakes([old('a', 'a»/t1')]);
    await backstopReaper({ ...f.deps, reapAfterMs: 0 })(grouped(listed('a»/t1', 0)), NOW);
    expect(f.calls).toEqual([]);
  });
});
