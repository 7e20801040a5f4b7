import { randomUUID } from 'node:crypto';
import { errorText } from '../../platform/errors';
import { type AmqpSession, channelAnswer } from '../../rabbitmq/connection';
import { brokerError, ReplyCode } from '../../rabbitmq/reply-codes';
import { REAP_DELETE_WITHIN_MS, type ReapingRegistry } from '../../staging/staging-registry';
import type { ReapIdleStagingQueues, StagingQueuesByTarget } from '../backstop';
import type { LeaseStore } from '../stores/lease-store';
import { type ListedStagingQueue, planReaping } from './reap-rule';

/** The broker's side of a reap: delete the queue only if it is empty and has no consumer. */
export interface QueueDeleter {
  /** 'deleted' (or already gone), or 'in-use' when the broker refused: it holds a message or a consumer. */
  deleteIfIdle(queue: string): Promise<'deleted' | 'in-use'>;
}

/** What the reaper reports; nothing in it throws. */
export interface ReaperReport {
  /** A queue's reap stopped on an error: its mark is left to go stale, holding routers off until then. */
  reapFailed(target: string, queue: string, error: string): void;
}

export interface ReaperDeps {
  registry: ReapingRegistry;
  queues: QueueDeleter;
  /** How long an empty, untouched staging queue waits (REAP_AFTER_MS); 0 reaps nothing (queues are still adopted). */
  reapAfterMs: number;
  report: ReaperReport;
  /**
   * At most this many queues adopted, reaped or pruned per call (default 100), so that a first run
   * over many unrecorded or idle queues fits in a pass: the rest wait for the next backstop.
   */
  maxPerCall?: number;
  now?: () => number;
}

/**
 * Deletes the staging queues of `target` that are empty, unused and untouched for the reap period,
 * and prunes the records of those already gone (docs/router.md "Staging-queue lifecycle"). `listed`
 * is every staging queue of the target in the backstop's listing (a target without any may be
 * skipped). The caller holds the target's distributor lease for the whole call, so no pass moves
 * messages into or out of these queues meanwhile, and calls it when none of its channels holds an
 * unacknowledged message of them (a classic queue's if-empty counts ready messages only). Queues
 * are reaped one at a time, in name order: each is a mark, a delete and a record delete, and
 * reaping is never urgent.
 */
export async function reapStagingQueues(
  deps: ReaperDeps,
  target: string,
  listed: readonly ListedStagingQueue[],
  nowMs: number,
): Promise<{ reaped: string[] }> {
  const now = deps.now ?? Date.now;
  const plan = planReaping(await deps.registry.queuesOf(target), listed, deps.reapAfterMs, nowMs);
  let room = deps.maxPerCall ?? 100;
  const take = (queues: string[]) => {
    const taken = queues.slice(0, Math.max(0, room));
    room -= taken.length;
    return taken;
  };
  for (const queue of take(plan.adopt)) await deps.registry.adopt(target, queue, nowMs);
  const reaped: string[] = [];
  const reap = async (queue: string, onBroker: boolean) => {
    const markedAt = now();
    if (!(await deps.registry.markReaping(target, queue, markedAt - deps.reapAfterMs, markedAt))) return;
    try {
      if (onBroker) {
        // Late (a slow DynamoDB): a router may soon overwrite the mark as stale, so no delete now.
        if (now() - markedAt > REAP_DELETE_WITHIN_MS) return await deps.registry.clearMark(target, queue, markedAt);
        if ((await deps.queues.deleteIfIdle(queue)) === 'in-use') {
          return await deps.registry.clearMark(target, queue, markedAt);
        }
      }
      await deps.registry.removeReaped(target, queue, markedAt);
      if (onBroker) reaped.push(queue);
    } catch (error) {
      deps.report.reapFailed(target, queue, errorText(error));
    }
  };
  for (const queue of take(plan.reap)) await reap(queue, true);
  for (const queue of take(plan.prune)) await reap(queue, false);
  if (reaped.length > 0) {
    await deps.registry.countReaped(target, reaped.length).catch((error: unknown) => {
      deps.report.reapFailed(target, '(reaped total)', errorText(error));
    });
  }
  return { reaped };
}

/**
 * queue.delete with if-empty and if-unused on the session's shared plain channel. A refusal
 * (PRECONDITION_FAILED) closes that channel; the session opens another for the next call.
 */
export function amqpQueueDeleter(session: Pick<AmqpSession, 'sharedChannel'>): QueueDeleter {
  return {
    async deleteIfIdle(queue) {
      const what = `queue.delete of the staging queue ${JSON.stringify(queue)}`;
      try {
        const channel = await session.sharedChannel();
        await channelAnswer(channel, channel.deleteQueue(queue, { ifEmpty: true, ifUnused: true }), what);
        return 'deleted';
      } catch (cause) {
        const error = brokerError(`RabbitMQ did not delete the staging queue ${JSON.stringify(queue)}`, cause);
        if (error.replyCode === ReplyCode.PRECONDITION_FAILED) return 'in-use';
        throw error;
      }
    },
  };
}

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
