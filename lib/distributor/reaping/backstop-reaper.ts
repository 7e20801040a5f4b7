import { randomUUID } from 'node:crypto';
import type { ReapingRegistry } from '../../staging/staging-registry';
import type { ReapIdleStagingQueues, StagingQueuesByTarget } from '../backstop';
import type { LeaseStore } from '../stores/lease-store';
import { type QueueDeleter, type ReaperReport, reapStagingQueues } from './reaper';

export interface BackstopReaperDeps {
  registry: ReapingRegistry;
  queues: QueueDeleter;
  leases: Pick<LeaseStore, 'acquireLease' | 'releaseLease'>;
  /** How long an empty, untouched staging queue waits (REAP_AFTER_MS); 0 reaps nothing. */
  reapAfterMs: number;
  /** How long the reaper holds a target's lease at most (it releases it when done). */
  leaseMs: number;
  report: ReaperReport & { leaseNotReleased(target: string, error: unknown): void };
  now?: () => number;
}

/**
 * The backstop's reaper (docs/router.md "Staging-queue lifecycle"): for each target whose listed
 * staging queues (the backstop's grouping) include an idle one, it takes the target's lease (a
 * target an execution holds is left for a later backstop: its passes may hold that queue's
 * messages unacknowledged), reaps, and releases.
 * It runs before the invocation's own passes, so none of its channels holds a staging message.
 */
export function backstopReaper(deps: BackstopReaperDeps): ReapIdleStagingQueues {
  const now = deps.now ?? Date.now;
  return async (byTarget: StagingQueuesByTarget) => {
    if (deps.reapAfterMs === 0) return;
    for (const [target, queues] of byTarget) {
      if (!queues.some((q) => q.messages === 0)) continue;
      const owner = randomUUID();
      if (!(await deps.leases.acquireLease(target, owner, now(), now() + deps.leaseMs))) continue;
      try {
        await reapStagingQueues(deps, target, queues, now());
      } finally {
        await deps.leases
          .releaseLease(target, owner)
          .catch((error: unknown) => deps.report.leaseNotReleased(target, error));
      }
    }
  };
}
