import { randomUUID } from 'node:crypto';
import { errorText } from '../platform/errors';
import { type AmqpSession, channelAnswer } from '../rabbitmq/connection';
import type { QueueInfo } from '../rabbitmq/management';
import { brokerError, ReplyCode } from '../rabbitmq/reply-codes';
import { parseStagingQueueName } from '../staging/staging-names';
import {
  isFreshMark,
  REAP_DELETE_WITHIN_MS,
  type ReapingRegistry,
  type StagingQueueRecord,
  type StagingRegistry,
} from '../staging/staging-registry';
import type { DynamoWorkBoard } from '../work-board/work-board-store';
import type { DistributorReport } from './report';
import type { LeaseStore } from './stores/lease-store';

/** One listing's staging queues by target (each in listing order); other queues are left out. */
export type StagingQueuesByTarget = ReadonlyMap<string, readonly QueueInfo[]>;

/** Groups a vhost listing's staging queues by target. Pure. */
export function stagingQueuesByTarget(listing: readonly QueueInfo[]): StagingQueuesByTarget {
  const byTarget = new Map<string, QueueInfo[]>();
  for (const queue of listing) {
    const target = parseStagingQueueName(queue.name)?.target;
    if (target === undefined) continue;
    byTarget.set(target, [...(byTarget.get(target) ?? []), queue]);
  }
  return byTarget;
}

/**
 * The reaper of idle staging queues (docs/router.md "Staging-queue lifecycle",
 * `backstopReaper`, below), given each backstop listing grouped by target.
 */
export type ReapIdleStagingQueues = (byTarget: StagingQueuesByTarget, nowMs: number) => Promise<void>;

export interface BackstopDeps {
  board: Pick<DynamoWorkBoard, 'takeListing' | 'request'>;
  /** One listing of the vhost (ManagementClient.listQueues). */
  listQueues: () => Promise<QueueInfo[]>;
  /** Where staging queues made elsewhere are recorded; without it the passes list the vhost themselves. */
  registry?: Pick<StagingRegistry, 'queuesOf' | 'touch'>;
  reapIdleStagingQueues?: ReapIdleStagingQueues;
  /** The backstop lists at most this often over every execution. */
  intervalMs: number;
  report: Pick<DistributorReport, 'backstopListed'>;
  now?: () => number;
}

/**
 * The schedule's backstop (docs/distributor.md "Discovery"): at most one listing of the vhost per
 * interval over every execution (the `listedAt` stamp of the work board, taken conditionally). It
 * records staging queues the registry lacks (made by something other than the router), marks every
 * target with listed staged messages or a queue recorded now as wanting a pass (a request that was
 * lost, or never made), and hands the
 * listing, grouped by target, to the reaper. False when another execution listed within the interval.
 */
export async function runBackstop(deps: BackstopDeps): Promise<boolean> {
  const now = deps.now ?? Date.now;
  if (!(await deps.board.takeListing(now(), deps.intervalMs))) return false;
  const listing = await deps.listQueues();
  const byTarget = stagingQueuesByTarget(listing);
  let recorded = 0;
  // A queue recorded now was never asked for; the listing's counts lag, so its target is due whatever they say.
  const newlyRecorded = new Set<string>();
  if (deps.registry) {
    const registry = deps.registry;
    for (const [target, queues] of byTarget) {
      const known = new Set((await registry.queuesOf(target)).map((r) => r.queue));
      for (const queue of queues) {
        if (known.has(queue.name)) continue;
        // A queue being reaped answers `reaping`: the reaper's, left alone.
        if ((await registry.touch(target, queue.name, now())) !== 'recorded') continue;
        recorded++;
        newlyRecorded.add(target);
      }
    }
  }
  const wanted = [...byTarget]
    .filter(([target, queues]) => newlyRecorded.has(target) || queues.some((q) => q.messages_ready > 0))
    .map(([target]) => target);
  if (wanted.length > 0) await deps.board.request(wanted);
  await deps.reapIdleStagingQueues?.(byTarget, now());
  deps.report.backstopListed({ queues: listing.length, recorded, wanted: wanted.length });
  return true;
}

/** A staging queue of the target as the backstop's management listing shows it. */
export interface ListedStagingQueue {
  name: string;
  /** Ready + unacknowledged, as of the last stats refresh. */
  messages: number;
  /** Absent when the listing does not say: the delete's if-unused still refuses a consumed queue. */
  consumers?: number;
  /** `classic`, `quorum` or `stream`; absent from an API too old to say (classic). */
  type?: string;
}

/** What the reaper does for one target, by queue name (each list in name order). */
export interface ReapPlan {
  /** Listed without a record: recorded now, reaped only after a whole period. */
  adopt: string[];
  /** Listed, empty, unused, classic and untouched for the period: marked, then deleted if the broker agrees. */
  reap: string[];
  /** Recorded, untouched for the period, and not listed (the queue is gone): the record is pruned. */
  prune: string[];
}

/**
 * Only a classic queue is deleted: RabbitMQ (3.x and 4.x) refuses queue.delete with if-empty or
 * if-unused on a quorum queue with NOT_IMPLEMENTED, a connection error, and without them a delete
 * could drop a message (docs/router.md "Staging-queue lifecycle").
 */
const reapableType = (type: string | undefined) => type === undefined || type === 'classic';

/**
 * Pure. The listing's counts lag about 5 s, so they only choose the candidates: the registry's
 * conditional mark and the broker's if-empty/if-unused delete decide. `reapAfterMs` 0 reaps nothing.
 */
export function planReaping(
  records: readonly StagingQueueRecord[],
  listed: readonly ListedStagingQueue[],
  reapAfterMs: number,
  nowMs: number,
): ReapPlan {
  const plan: ReapPlan = { adopt: [], reap: [], prune: [] };
  const recorded = new Map(records.map((r) => [r.queue, r]));
  const untouched = (r: StagingQueueRecord) => r.touchedAt < nowMs - reapAfterMs && !isFreshMark(r.reapingAt, nowMs);
  for (const queue of listed) {
    const record = recorded.get(queue.name);
    if (!record) plan.adopt.push(queue.name);
    else if (
      reapAfterMs > 0 &&
      untouched(record) &&
      queue.messages === 0 &&
      (queue.consumers ?? 0) === 0 &&
      reapableType(queue.type)
    )
      plan.reap.push(queue.name);
  }
  const listedNames = new Set(listed.map((q) => q.name));
  if (reapAfterMs > 0) {
    for (const record of records)
      if (!listedNames.has(record.queue) && untouched(record)) plan.prune.push(record.queue);
  }
  for (const list of Object.values(plan)) list.sort();
  return plan;
}

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
